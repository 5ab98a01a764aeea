package jobs

import (
	"encoding/json"
	"testing"
	"time"

	"parcela"
)

// The hand-written envelope reads back as json.Marshal would write it.
func TestAppendEnvelope(t *testing.T) {
	t.Parallel()
	e := parcela.Event{ID: "ev-1", Entity: "bill", Event: "pending \"quoted\" \\ \x01 ção", Data: json.RawMessage(`{"amount":1234,"note":"<a&b>"}`),
		CreatedAt: time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)}
	want, err := json.Marshal(Envelope{ID: e.ID, Entity: e.Entity, Event: e.Event, APIVersion: "v1",
		CreatedAt: e.CreatedAt.In(parcela.SaoPaulo).Format(parcela.TimestampLayout), Data: e.Data})
	if err != nil {
		t.Fatal(err)
	}
	got := appendEnvelope(nil, &e)
	var a, b Envelope
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID || a.Entity != b.Entity || a.Event != b.Event || a.APIVersion != b.APIVersion || a.CreatedAt != b.CreatedAt {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	var da, db any
	if json.Unmarshal(a.Data, &da) != nil || json.Unmarshal(b.Data, &db) != nil || !jsonEqual(da, db) {
		t.Fatalf("data %s, want %s", a.Data, b.Data)
	}
	if string(appendEnvelope(nil, &parcela.Event{})) == "" || !json.Valid(appendEnvelope(nil, &parcela.Event{})) {
		t.Fatal("an event without data is not valid JSON")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Envelope is the notification body as encoding/json would write it: the
// oracle appendEnvelope is checked against.
type Envelope struct {
	ID         string          `json:"id"`
	Entity     string          `json:"entity"`
	Event      string          `json:"event"`
	APIVersion string          `json:"api_version"`
	CreatedAt  string          `json:"created_at"`
	Data       json.RawMessage `json:"data"`
}
