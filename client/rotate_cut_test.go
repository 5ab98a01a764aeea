package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"parcela/client"
)

// cuttingProxy forwards to target, and cuts the first answer to a path
// ending in suffix after half its body, as a load balancer's reset does.
func cuttingProxy(t *testing.T, target, suffix string) *httptest.Server {
	var cut atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, _ := http.NewRequest(r.Method, target+r.URL.RequestURI(), r.Body)
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.HasSuffix(r.URL.Path, suffix) && cut.CompareAndSwap(false, true) {
			conn, buf, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", resp.StatusCode, http.StatusText(resp.StatusCode), resp.Header.Get("Content-Type"), len(body))
			_, _ = buf.Write(body[:len(body)/2])
			_ = buf.Flush()
			conn.Close()
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A secret rotation whose answer is cut short on the way: the server
// rotated (and stored the answer under the call's Idempotency-Key), the
// client returned an error, and the new secret was lost (an audit). The integrator's
// natural next step, calling again, rotates a second time, which ends the
// first rotation's 24 h overlap (server/webhook_rotation_twice_test.go):
// the secret their receivers hold stops verifying at once.
func TestRotationAnswerCutShort(t *testing.T) {
	sandbox := startSandbox()
	defer sandbox.Close()
	ctx := context.Background()
	direct, _ := client.New(sandbox.URL, sandbox.Token)
	hook, err := direct.CreateWebhookWithResponse(ctx, nil, client.WebhookCreateRequest{
		Name: "ERP", Url: "https://erp.example.com/webhooks/parcela", Entity: "bill",
		Events: []client.WebhookEventName{"paid"}, Verb: "post",
	})
	if err != nil {
		t.Fatal(err)
	}
	viaProxy, _ := client.New(cuttingProxy(t, sandbox.URL, "/rotate_secret").URL, sandbox.Token)
	rotated, err := viaProxy.RotateWebhookSecretWithResponse(ctx, hook.JSON201.Id, nil)
	if err != nil {
		t.Fatalf("rotate_secret, done by the server, answered the caller: %v", err)
	}
	if !strings.HasPrefix(rotated.JSON200.Secret, "whsec_") {
		t.Errorf("no secret in %s", rotated.Body)
	}
}
