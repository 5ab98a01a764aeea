package jobs

import (
	"context"
	"net/http"
	"testing"

	"github.com/riverqueue/river"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// A receiver whose status line carries a reason phrase in Latin-1 (a
// Brazilian server's "503 Serviço Indisponível") answered a failure like
// any other: the attempt must be recorded and the delivery retried on the
// schedule. The phrase went into the attempt's error as raw bytes, which
// PostgreSQL's text column refuses: the attempt was never recorded, the
// job failed, and River resent the webhook on its own backoff.
func TestLatin1ReasonPhraseIsRecorded(t *testing.T) {
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			r := newHookRig(t, e)
			r.answer = func(_ int, w http.ResponseWriter) {
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				_, _ = buf.WriteString("HTTP/1.1 503 Servi\xe7o Indispon\xedvel\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
				_ = buf.Flush()
			}
			h := r.hook("/latin1", "post")
			d := r.event(h)
			jobs := r.tape.of(d.ID)
			err := r.worker.Work(context.Background(), &river.Job[DeliveryArgs]{Args: jobs[len(jobs)-1]})
			if err != nil {
				t.Errorf("the attempt's record failed: %v", err)
			}
			got := r.delivery(d.ID)
			if got.Status != parcela.DeliveryRetrying || len(got.Attempts) != 1 {
				t.Fatalf("delivery is %s with %d attempts after a 503; want retrying with 1 (receiver got %d requests)", got.Status, len(got.Attempts), r.requests())
			}
			if e := got.Attempts[0].Error; e == nil || *e != "receiver answered 503 Servi\uFFFDo Indispon\uFFFDvel" {
				t.Errorf("the attempt's error is %v, want the phrase with its Latin-1 letters replaced", e)
			}
		})
	}
}
