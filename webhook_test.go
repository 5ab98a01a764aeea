package parcela

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWebhookApplyCreate(t *testing.T) {
	t.Parallel()
	// urlOf is an https address of exactly n bytes.
	urlOf := func(n int) string { u := "https://hooks.example.com/"; return u + strings.Repeat("a", n-len(u)) }
	valid := WebhookRequest{Name: pointerTo("ERP"), URL: pointerTo("https://hooks.example.com/parcela"), Entity: pointerTo("bill"),
		Events: &[]string{"paid"}, Verb: pointerTo("post")}
	tests := []struct {
		name   string
		env    Environment
		change func(*WebhookRequest)
		want   []fault
	}{
		{"every field", Sandbox, func(*WebhookRequest) {}, nil},
		{"production over https", Production, func(*WebhookRequest) {}, nil},

		{"nothing sent: every required field, in the order of the body", Sandbox, func(r *WebhookRequest) { *r = WebhookRequest{} }, []fault{
			{"name", "required", "is required"}, {"url", "required", "is required"}, {"entity", "required", "is required"},
			{"events", "required", "is required"}, {"verb", "required", "is required"}}},
		{"no name", Sandbox, func(r *WebhookRequest) { r.Name = nil }, []fault{{"name", "required", "is required"}}},
		{"no url", Sandbox, func(r *WebhookRequest) { r.URL = nil }, []fault{{"url", "required", "is required"}}},
		{"no entity", Sandbox, func(r *WebhookRequest) { r.Entity = nil }, []fault{{"entity", "required", "is required"}}},
		{"no events", Sandbox, func(r *WebhookRequest) { r.Events = nil }, []fault{{"events", "required", "is required"}}},
		{"no verb", Sandbox, func(r *WebhookRequest) { r.Verb = nil }, []fault{{"verb", "required", "is required"}}},
		{"enabled on create", Sandbox, func(r *WebhookRequest) { r.Enabled = pointerTo(true) }, []fault{{"enabled", "not_allowed", "set with PATCH"}}},

		{"blank name", Sandbox, func(r *WebhookRequest) { r.Name = pointerTo("  ") }, []fault{{"name", "required", "must not be empty"}}},
		{"name of 255", Sandbox, func(r *WebhookRequest) { r.Name = pointerTo(strings.Repeat("n", 255)) }, nil},
		{"name of 256", Sandbox, func(r *WebhookRequest) { r.Name = pointerTo(strings.Repeat("n", 256)) }, []fault{{"name", "too_long", "at most 255 characters"}}},
		{"name of 255 accented letters", Sandbox, func(r *WebhookRequest) { r.Name = pointerTo(strings.Repeat("ç", 255)) }, nil},
		{"name with a line break", Sandbox, func(r *WebhookRequest) { r.Name = pointerTo("ERP\nX") }, []fault{{"name", "invalid", "control characters"}}},

		{"http in the sandbox", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("http://127.0.0.1:8080/hook") }, nil},
		{"http in production", Production, func(r *WebhookRequest) { r.URL = pointerTo("http://hooks.example.com/parcela") }, []fault{{"url", "invalid", "https in production"}}},
		{"url with a port and a query", Production, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com:8443/p?x=1") }, nil},
		{"url with the last port", Production, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com:65535/p") }, nil},
		{"url with a port past 65535", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com:99999/p") }, []fault{{"url", "invalid", "port"}}},
		{"url with port 0", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com:0/p") }, []fault{{"url", "invalid", "port"}}},
		{"url with credentials", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://user:pass@hooks.example.com/") }, []fault{{"url", "invalid", "without credentials"}}},
		{"url with a user only", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://user@hooks.example.com/") }, []fault{{"url", "invalid", "without credentials"}}},
		{"relative url", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("/hook") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"url without a host", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https:///hook") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"url with a port but no host", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://:8443/hook") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"url with an empty IPv6 host", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://[]:8443/hook") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"ftp url", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("ftp://hooks.example.com/") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"url that does not parse", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com/%zz") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"empty url", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("") }, []fault{{"url", "invalid", "absolute http(s) URL"}}},
		{"url with a tab inside", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com/a\tb") }, []fault{{"url", "invalid", "must not contain control characters"}}},
		{"url with NUL", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("https://hooks.example.com/\x00") }, []fault{{"url", "invalid", "must not contain control characters"}}},
		{"url with spaces around", Sandbox, func(r *WebhookRequest) { r.URL = pointerTo("  https://hooks.example.com/p \n") }, nil},
		{"url of 2048", Production, func(r *WebhookRequest) { r.URL = pointerTo(urlOf(2048)) }, nil},
		{"url of 2049", Production, func(r *WebhookRequest) { r.URL = pointerTo(urlOf(2049)) }, []fault{{"url", "too_long", "at most 2048"}}},

		{"order events", Sandbox, func(r *WebhookRequest) {
			r.Entity, r.Events = pointerTo("order"), &[]string{"in_progress", "finished", "canceled"}
		}, nil},
		{"billing events", Sandbox, func(r *WebhookRequest) {
			r.Entity, r.Events = pointerTo("billing"), &[]string{"waiting_payment", "active", "finished", "canceled"}
		}, nil},
		{"bill events", Sandbox, func(r *WebhookRequest) { r.Events = &[]string{"pending", "paid", "overdue", "canceled"} }, nil},
		{"unknown entity", Sandbox, func(r *WebhookRequest) { r.Entity = pointerTo("payment") }, []fault{{"entity", "invalid", "order, billing or bill"}}},
		{"entity in capitals", Sandbox, func(r *WebhookRequest) { r.Entity = pointerTo("Bill") }, []fault{{"entity", "invalid", "order, billing or bill"}}},
		{"no event", Sandbox, func(r *WebhookRequest) { r.Events = &[]string{} }, []fault{{"events", "too_small", "at least one event"}}},
		{"an event of another entity", Sandbox, func(r *WebhookRequest) { r.Events = &[]string{"paid", "active"} }, []fault{
			{"events", "invalid", `"active" is not an event of bill; use pending, paid, overdue, canceled`}}},
		{"two unknown events", Sandbox, func(r *WebhookRequest) { r.Events = &[]string{"x", "y"} }, []fault{
			{"events", "invalid", `"x" is not an event of bill`}, {"events", "invalid", `"y" is not an event of bill`}}},
		{"a long unknown event is cut in the message", Sandbox, func(r *WebhookRequest) { r.Events = &[]string{strings.Repeat("e", 40)} }, []fault{
			{"events", "invalid", `"` + strings.Repeat("e", 32) + `…" is not an event`}}},

		{"verb put", Sandbox, func(r *WebhookRequest) { r.Verb = pointerTo("put") }, nil},
		{"verb patch", Sandbox, func(r *WebhookRequest) { r.Verb = pointerTo("patch") }, nil},
		{"verb in capitals", Sandbox, func(r *WebhookRequest) { r.Verb = pointerTo("POST") }, nil},
		{"verb get", Sandbox, func(r *WebhookRequest) { r.Verb = pointerTo("get") }, []fault{{"verb", "invalid", "post, put or patch"}}},
		{"empty verb", Sandbox, func(r *WebhookRequest) { r.Verb = pointerTo("") }, []fault{{"verb", "invalid", "post, put or patch"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := valid
			tt.change(&req)
			w := &Webhook{CompanyID: "c1", Environment: tt.env, Enabled: true}
			checkFaults(t, w.Apply(req, true), tt.want)
		})
	}
}

func TestWebhookApplyCreateSetsFields(t *testing.T) {
	t.Parallel()
	w := &Webhook{CompanyID: "c1", Environment: Sandbox, Enabled: true}
	err := w.Apply(WebhookRequest{Name: pointerTo(" ERP "), URL: pointerTo(" https://hooks.example.com/p "), Entity: pointerTo("bill"),
		Events: &[]string{"paid", "overdue", "paid", "canceled"}, Verb: pointerTo("PUT")}, true)
	if err != nil {
		t.Fatal(err)
	}
	// Names and addresses are trimmed, the verb lowered, the events sorted once each.
	if w.Name != "ERP" || w.URL != "https://hooks.example.com/p" || w.Entity != "bill" || w.Verb != "put" ||
		!slices.Equal(w.Events, []string{"canceled", "overdue", "paid"}) || !w.Enabled || w.DisabledReason != nil {
		t.Errorf("created %+v", w)
	}
}

// A PATCH that sends enabled: true to a webhook that is enabled (a client
// sending every field back) changes nothing: a webhook failing for 3 days
// keeps its failure clock, and is still disabled at 5 days.
func TestWebhookEnabledAgainKeepsItsFailureClock(t *testing.T) {
	t.Parallel()
	failing := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	w := &Webhook{ID: "w1", CompanyID: "c1", Environment: Production, Name: "ERP", URL: "https://hooks.example.com/p",
		Entity: "billing", Events: []string{"active"}, Verb: "post", Secret: "s1", Enabled: true, FailingSince: &failing}
	if err := w.Apply(WebhookRequest{Enabled: pointerTo(true)}, false); err != nil {
		t.Fatal(err)
	}
	if !w.Enabled || w.DisabledReason != nil || w.FailingSince == nil || !w.FailingSince.Equal(failing) {
		t.Errorf("enabled %v, reason %v, failing since %v; want enabled, still failing since %v", w.Enabled, w.DisabledReason, w.FailingSince, failing)
	}
}

func TestWebhookApplyPatch(t *testing.T) {
	t.Parallel()
	failing := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	stored := func() *Webhook {
		reason := "failing for 3 days"
		return &Webhook{ID: "w1", CompanyID: "c1", Environment: Production, Name: "ERP", URL: "https://hooks.example.com/p",
			Entity: "billing", Events: []string{"active"}, Verb: "post", Secret: "s1", Enabled: false,
			DisabledReason: &reason, FailingSince: &failing}
	}
	tests := []struct {
		name  string
		req   WebhookRequest
		want  []fault
		check func(t *testing.T, w *Webhook)
	}{
		{"an empty patch changes nothing", WebhookRequest{}, nil, func(t *testing.T, w *Webhook) {
			if s := stored(); w.Name != s.Name || w.URL != s.URL || w.Entity != s.Entity || !slices.Equal(w.Events, s.Events) ||
				w.Verb != s.Verb || w.Enabled || *w.DisabledReason != *s.DisabledReason || !w.FailingSince.Equal(failing) {
				t.Errorf("patched %+v", w)
			}
		}},
		{"a name only", WebhookRequest{Name: pointerTo("ERP 2")}, nil, func(t *testing.T, w *Webhook) {
			if w.Name != "ERP 2" || w.URL != "https://hooks.example.com/p" || w.Verb != "post" || !slices.Equal(w.Events, []string{"active"}) {
				t.Errorf("patched %+v", w)
			}
		}},
		{"the same entity again", WebhookRequest{Entity: pointerTo("billing")}, nil, nil},
		{"another entity", WebhookRequest{Entity: pointerTo("bill")}, []fault{{"entity", "not_allowed", "cannot be changed"}}, nil},
		{"events checked against the stored entity", WebhookRequest{Events: &[]string{"paid"}}, []fault{
			{"events", "invalid", `"paid" is not an event of billing`}}, nil},
		{"events of the stored entity", WebhookRequest{Events: &[]string{"finished", "canceled"}}, nil, func(t *testing.T, w *Webhook) {
			if !slices.Equal(w.Events, []string{"canceled", "finished"}) {
				t.Errorf("events %v", w.Events)
			}
		}},
		{"http in production", WebhookRequest{URL: pointerTo("http://hooks.example.com/p")}, []fault{{"url", "invalid", "https in production"}}, nil},
		{"a verb", WebhookRequest{Verb: pointerTo("Patch")}, nil, func(t *testing.T, w *Webhook) {
			if w.Verb != "patch" {
				t.Errorf("verb %q", w.Verb)
			}
		}},
		{"enabling clears why it was disabled", WebhookRequest{Enabled: pointerTo(true)}, nil, func(t *testing.T, w *Webhook) {
			if !w.Enabled || w.DisabledReason != nil || w.FailingSince != nil {
				t.Errorf("enabled %v, reason %v, failing since %v", w.Enabled, w.DisabledReason, w.FailingSince)
			}
		}},
		{"disabling says the company did it", WebhookRequest{Enabled: pointerTo(false)}, nil, func(t *testing.T, w *Webhook) {
			if w.Enabled || w.DisabledReason == nil || *w.DisabledReason != "disabled by the company" {
				t.Errorf("enabled %v, reason %v", w.Enabled, w.DisabledReason)
			}
		}},
		{"every fault at once", WebhookRequest{Name: pointerTo(""), URL: pointerTo("x"), Entity: pointerTo("order"), Events: &[]string{}, Verb: pointerTo("get")}, []fault{
			{"entity", "not_allowed", "cannot be changed"}, {"name", "required", "must not be empty"}, {"url", "invalid", "absolute http(s) URL"},
			{"events", "too_small", "at least one event"}, {"verb", "invalid", "post, put or patch"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := stored()
			checkFaults(t, w.Apply(tt.req, false), tt.want)
			if w.Entity != "billing" {
				t.Errorf("entity changed to %q", w.Entity)
			}
			if tt.check != nil {
				tt.check(t, w)
			}
		})
	}
}

func TestWebhookSecrets(t *testing.T) {
	t.Parallel()
	rotated := time.Date(2025, 3, 31, 23, 30, 0, 0, SaoPaulo)
	until := rotated.Add(SecretOverlap)
	old := "old-secret"
	tests := []struct {
		name     string
		previous *string
		until    *time.Time
		now      time.Time
		want     []string
	}{
		{"never rotated", nil, nil, rotated, []string{"new-secret"}},
		{"at the rotation", &old, &until, rotated, []string{"new-secret", "old-secret"}},
		{"a nanosecond before the window closes", &old, &until, until.Add(-time.Nanosecond), []string{"new-secret", "old-secret"}},
		{"as the window closes", &old, &until, until, []string{"new-secret"}},
		{"a day later", &old, &until, until.Add(24 * time.Hour), []string{"new-secret"}},
		{"the window read in another zone", &old, &until, until.Add(-time.Minute).UTC(), []string{"new-secret", "old-secret"}},
		{"a previous secret without its window", &old, nil, rotated, []string{"new-secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := Webhook{Secret: "new-secret", PreviousSecret: tt.previous, PreviousSecretUntil: tt.until}
			if got := w.Secrets(tt.now); !slices.Equal(got, tt.want) {
				t.Errorf("Secrets(%v) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
	if SecretOverlap != 24*time.Hour {
		t.Errorf("SecretOverlap = %v, want 24h", SecretOverlap)
	}
}

func TestWebhookSecretsFromTheClock(t *testing.T) {
	t.Parallel()
	clock := NewTestClock(time.Date(2025, 2, 28, 10, 0, 0, 0, time.UTC))
	until := clock.Now().Add(SecretOverlap)
	old := "old-secret"
	w := Webhook{Secret: "new-secret", PreviousSecret: &old, PreviousSecretUntil: &until}
	if got := w.Secrets(clock.Now()); len(got) != 2 {
		t.Errorf("right after the rotation: %v, want both secrets", got)
	}
	clock.Set(clock.Now().Add(23*time.Hour + 59*time.Minute))
	if got := w.Secrets(clock.Now()); len(got) != 2 {
		t.Errorf("23h59 after the rotation: %v, want both secrets", got)
	}
	clock.Set(until)
	if got := w.Secrets(clock.Now()); !slices.Equal(got, []string{"new-secret"}) {
		t.Errorf("24h after the rotation: %v, want the new secret only", got)
	}
}

func TestNewWebhookForm(t *testing.T) {
	t.Parallel()
	created := time.Date(2025, 3, 1, 15, 4, 5, 6_000_000, time.UTC)
	reason := "disabled by the company"
	w := &Webhook{ID: "w1", Name: "ERP", URL: "https://hooks.example.com/p", Entity: "bill", Verb: "post",
		Secret: "whsec_do_not_show", PreviousSecret: pointerTo("whsec_old"), CreatedAt: created, UpdatedAt: created.Add(time.Hour),
		DisabledReason: &reason}
	b, err := json.Marshal(NewWebhookForm(w))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"w1","name":"ERP","url":"https://hooks.example.com/p","entity":"bill","events":[],"verb":"post",` +
		`"created_at":"2025-03-01T12:04:05.006-03:00","updated_at":"2025-03-01T13:04:05.006-03:00","enabled":false,"disabled_reason":"disabled by the company"}`
	if string(b) != want {
		t.Errorf("form\n%s\nwant\n%s", b, want)
	}
	if strings.Contains(string(b), "whsec") {
		t.Errorf("the form shows a secret: %s", b)
	}
	w.Events, w.Enabled, w.DisabledReason = []string{"paid"}, true, nil
	if f := NewWebhookForm(w); !slices.Equal(f.Events, []string{"paid"}) || !f.Enabled || f.DisabledReason != nil {
		t.Errorf("form %+v", f)
	}
}

func TestNewDeliveryForm(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 15, 0, 0, 0, time.UTC)
	t.Run("pending, never attempted", func(t *testing.T) {
		t.Parallel()
		d := &Delivery{ID: "d1", WebhookID: "w1", EventID: "e1", Entity: "bill", Event: "paid", Status: "pending", CreatedAt: at, UpdatedAt: at}
		b, err := json.Marshal(NewDeliveryForm(d))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":"d1","webhook_id":"w1","event_id":"e1","entity":"bill","event":"paid","status":"pending","attempts":[],"attempts_total":0,` +
			`"next_attempt_at":null,"created_at":"2025-03-01T12:00:00.000-03:00","updated_at":"2025-03-01T12:00:00.000-03:00"}`
		if string(b) != want {
			t.Errorf("form\n%s\nwant\n%s", b, want)
		}
	})
	t.Run("retrying after two attempts", func(t *testing.T) {
		t.Parallel()
		next := at.Add(5 * time.Minute)
		d := &Delivery{ID: "d1", WebhookID: "w1", EventID: "e1", Entity: "bill", Event: "paid", Status: "retrying", AttemptCount: 2,
			NextAttemptAt: &next, CreatedAt: at, UpdatedAt: at.Add(time.Minute), Attempts: []DeliveryAttempt{
				{AttemptedAt: at, Error: pointerTo("connection refused"), DurationMS: 12},
				{AttemptedAt: at.Add(time.Minute), ResponseStatus: pointerTo(500), DurationMS: 340, ResponseBody: pointerTo("oops")},
			}}
		b, err := json.Marshal(NewDeliveryForm(d))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":"d1","webhook_id":"w1","event_id":"e1","entity":"bill","event":"paid","status":"retrying","attempts":[` +
			`{"attempted_at":"2025-03-01T12:00:00.000-03:00","response_status":null,"duration_ms":12,"error":"connection refused","response_body":null},` +
			`{"attempted_at":"2025-03-01T12:01:00.000-03:00","response_status":500,"duration_ms":340,"error":null,"response_body":"oops"}],"attempts_total":2,` +
			`"next_attempt_at":"2025-03-01T12:05:00.000-03:00","created_at":"2025-03-01T12:00:00.000-03:00","updated_at":"2025-03-01T12:01:00.000-03:00"}`
		if string(b) != want {
			t.Errorf("form\n%s\nwant\n%s", b, want)
		}
	})
}

// looseIPv4 reads a host as URLs and inet_aton read an IPv4 address, and
// nothing else as one.
func TestLooseIPv4(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "0x7f.0.0.1": "127.0.0.1",
		"0X7F000001": "127.0.0.1", "127.1": "127.0.0.1", "10.1.1": "10.1.0.1", "0": "0.0.0.0", "0x": "0.0.0.0",
		"0xa9.0376.43518": "169.254.169.254", "4294967295": "255.255.255.255", "8.8.2056": "8.8.8.8",
	} {
		if got, ok := looseIPv4(host); !ok || got.String() != want {
			t.Errorf("looseIPv4(%q) = %v, %v; want %s", host, got, ok, want)
		}
	}
	for _, host := range []string{"", "hooks.example.com", "1.example.com", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "1.2.65536",
		"1.16777216", "4294967296", "08", "0x1g", "1..2", "1.2.3.", "-1", "+1", "1_000"} {
		if got, ok := looseIPv4(host); ok {
			t.Errorf("looseIPv4(%q) = %v, want none", host, got)
		}
	}
}
