package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"parcela"
)

func webhookBody(i int) map[string]any {
	return map[string]any{"name": fmt.Sprintf("hook %d", i), "url": fmt.Sprintf("https://erp.example.com/hooks/%d", i),
		"entity": "bill", "events": []string{"paid"}, "verb": "post"}
}

// A company has at most 25 webhooks in each environment, however many
// creations race for the last places; GET /webhooks stays an array.
func TestWebhookLimitPerCompanyAndEnvironment(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		var wg sync.WaitGroup
		statuses := make([]int, parcela.MaxWebhooks+5)
		for i := range statuses {
			wg.Go(func() { statuses[i] = b.call("POST", "/external_api/v1/webhooks", webhookBody(i)).Status })
		}
		wg.Wait()
		created, refused := 0, 0
		for _, s := range statuses {
			switch s {
			case 201:
				created++
			case 422:
				refused++
			default:
				t.Fatalf("statuses %v", statuses)
			}
		}
		if created != parcela.MaxWebhooks || refused != 5 {
			t.Fatalf("%d created, %d refused", created, refused)
		}
		r := b.call("POST", "/external_api/v1/webhooks", webhookBody(99)).want(t, 422)
		if p := r.JSON(t); p["code"] != parcela.EINVALID || !strings.Contains(p["detail"].(string), "at most 25 webhooks") {
			t.Fatalf("26th: %s", r.Body)
		} else if errs, ok := p["errors"].([]any); !ok || len(errs) != 0 {
			// Every validation_failed carries errors[]; no one field broke this rule (an audit found it absent).
			t.Fatalf("26th: errors %#v, want present and empty: %s", p["errors"], r.Body)
		}
		var list []map[string]any
		if err := json.Unmarshal(b.call("GET", "/external_api/v1/webhooks", nil).want(t, 200).Body, &list); err != nil || len(list) != parcela.MaxWebhooks {
			t.Fatalf("list of %d (%v)", len(list), err)
		}
		// The other environment and the other company have their own.
		b.send(b.production.URL, b.prodToken, "POST", "/external_api/v1/webhooks", webhookBody(1), nil).want(t, 201)
		b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/webhooks", webhookBody(1), nil).want(t, 201)
		// A deleted webhook frees its place.
		b.call("DELETE", "/external_api/v1/webhooks/"+list[0]["id"].(string), nil).want(t, 204)
		b.call("POST", "/external_api/v1/webhooks", webhookBody(100)).want(t, 201)
		b.call("POST", "/external_api/v1/webhooks", webhookBody(101)).want(t, 422)
	})
}
