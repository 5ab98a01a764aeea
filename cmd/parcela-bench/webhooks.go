package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"parcela"
)

// Webhook delivery: three webhooks of the benchmarked company (order
// in_progress, billing waiting_payment, bill pending) point at a receiver
// on 127.0.0.1, so every financed charge makes 14 events, each one
// delivery. Two runs:
//
//   - fixed rate: charges paced so events are written at --webhook-rate per
//     second; the latency is from the event's created_at (in its body) to
//     its arrival at the receiver;
//   - saturated: the deliveries are held (River's delivery queue paused,
//     hold.go) while charges run back to back on the charge scenario's
//     connections, then released: the drain starts with the whole backlog,
//     and its rate and CPU per delivery are the delivery side alone (the
//     server delivers fast enough to keep pace with the charges, so without
//     the hold the drain would time only a short tail). Deliveries/s and
//     latency over the whole run include the hold.
const (
	scWebhookRate = "webhook delivery, fixed event rate"
	scWebhookMax  = "webhook delivery, saturated (charges back to back, deliveries held, then drain)"
	eventsPerSale = 14 // order in_progress, billing waiting_payment, 12 × bill pending
)

// receiver accepts notifications and remembers when each event arrived.
type receiver struct {
	url   string
	srv   *http.Server
	mu    sync.Mutex
	got   map[string]arrival // by webhook-id (the event id)
	watch *watch
	bad   atomic.Int64
}

// watch waits for the n-th arrival of an event created at or after since;
// the handler that receives it calls reached at once, so the server's
// counters are read at that arrival, not at the next poll.
type watch struct {
	since   time.Time
	n, seen int
	reached func()
}

type arrival struct {
	created, received time.Time
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String(), got: map[string]arrival{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }() // ends with ErrServerClosed at shutdown
	return r, nil
}

func (r *receiver) close() { r.srv.Close() }

var createdAtKey = []byte(`"created_at":"`)

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(req.Body)
	id := req.Header.Get("webhook-id")
	if err != nil || id == "" {
		r.bad.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	// The envelope's own created_at comes before its data.
	var created time.Time
	if i := bytes.Index(body, createdAtKey); i >= 0 {
		rest := body[i+len(createdAtKey):]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			created, err = time.Parse(parcela.TimestampLayout, string(rest[:j]))
		}
	}
	if created.IsZero() || err != nil {
		var env struct {
			CreatedAt time.Time `json:"created_at"`
		}
		if json.Unmarshal(body, &env) != nil {
			r.bad.Add(1)
		}
		created = env.CreatedAt
	}
	var reached func()
	r.mu.Lock()
	if _, dup := r.got[id]; !dup {
		r.got[id] = arrival{created: created, received: now}
		if wt := r.watch; wt != nil && !created.Before(wt.since) {
			if wt.seen++; wt.seen >= wt.n {
				reached, r.watch = wt.reached, nil
			}
		}
	}
	r.mu.Unlock()
	if reached != nil {
		reached()
	}
	w.WriteHeader(http.StatusNoContent)
}

// since returns the arrivals of events created at or after t.
func (r *receiver) since(t time.Time) []arrival {
	// created_at has millisecond precision.
	t = t.Truncate(time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []arrival
	for _, a := range r.got {
		if !a.created.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// waitFor waits until n events created since t arrived, for at most max,
// and returns them with read's reading at the n-th arrival (or at the end
// of the wait, when some never came).
func (r *receiver) waitFor(ctx context.Context, t time.Time, n int, max time.Duration, read func() reading) ([]arrival, reading) {
	t = t.Truncate(time.Millisecond) // created_at has millisecond precision
	at := make(chan reading, 1)
	reached := func() { at <- read() }
	r.mu.Lock()
	seen := 0
	for _, a := range r.got {
		if !a.created.Before(t) {
			seen++
		}
	}
	if seen < n {
		r.watch = &watch{since: t, n: n, seen: seen, reached: reached}
	}
	r.mu.Unlock()
	if seen >= n {
		reached()
	}
	timer := time.NewTimer(max)
	defer timer.Stop()
	var end reading
	select {
	case end = <-at:
	case <-timer.C:
	case <-ctx.Done():
	}
	r.mu.Lock()
	stale := r.watch != nil
	r.watch = nil
	r.mu.Unlock()
	if stale {
		end = read()
	} else if end.at.IsZero() {
		end = <-at // reached between the timer and the lock
	}
	return r.since(t), end
}

// webhooks runs both webhook scenarios, or reports them unavailable when
// the server has no webhook routes.
func (b *bench) webhooks(ctx context.Context, srv *parcelaServer, s *seeded) []Result {
	unavailable := func(note string) []Result {
		b.logf("%s: %s", scWebhookRate, note)
		return []Result{{Name: scWebhookRate, Note: note}, {Name: scWebhookMax, Note: note}}
	}
	rec, err := startReceiver()
	if err != nil {
		return unavailable("receiver: " + err.Error())
	}
	defer rec.close()
	w := &worker{client: newClient()}
	defer w.client.CloseIdleConnections()
	if err := b.clearLeftovers(ctx, srv, s, w); err != nil {
		return unavailable("clearing an earlier run's leftovers: " + err.Error())
	}
	for _, h := range []struct{ entity, event string }{{"order", "in_progress"}, {"billing", "waiting_payment"}, {"bill", "pending"}} {
		body := fmt.Appendf(nil, `{"name": "`+benchWebhookPrefix+`%s", "url": %q, "entity": %q, "events": [%q], "verb": "post"}`,
			h.entity, rec.url+"/"+h.entity, h.entity, h.event)
		resp, err := w.do(ctx, "POST", srv.sandbox+"/external_api/v1/webhooks", s.token, body, 201)
		if err != nil {
			if bytes.Contains([]byte(err.Error()), []byte("status 404")) {
				return unavailable("not available yet: the server has no POST /external_api/v1/webhooks")
			}
			return unavailable("could not subscribe: " + err.Error())
		}
		var created struct{ ID string }
		if err := json.Unmarshal(resp, &created); err != nil || created.ID == "" {
			return unavailable(fmt.Sprintf("webhook created without an id: %.200s", resp))
		}
		// Leave the database as it was found (--reuse): later charges must
		// not fan out to a receiver that is gone.
		defer func() {
			_, _ = w.do(context.WithoutCancel(ctx), "DELETE", srv.sandbox+"/external_api/v1/webhooks/"+created.ID, s.token, nil, 204)
		}()
	}
	charge := chargeOp(srv.sandbox, s.token, s.offerID, s.financedID)
	drainMax := max(30*time.Second, 12*b.cfg.duration)

	probe, err := startWriterProbe(srv.sqlitePath)
	if err != nil {
		b.logf("webhooks: no SQLite writer probe: %v", err)
	}
	defer probe.stop()
	read := func() reading { return readServer(srv.pid(), probe, srv.dbComm) }

	// Fixed rate. The window runs from the first charge to the last
	// delivery's arrival; its CPU includes the charges that made the events.
	b.logf("%s: %d events/s for %s", scWebhookRate, b.cfg.webhookRate, b.cfg.duration)
	resetPeakRSS(srv.pid())
	b.profile(ctx, srv, scWebhookRate)
	first := read()
	sales, errs, firstErr := paced(ctx, charge, float64(b.cfg.webhookRate)/eventsPerSale, b.cfg.duration, b.cfg.chargeConns)
	want := int(sales) * eventsPerSale
	got, last := rec.waitFor(ctx, first.at, want, drainMax, read)
	r1 := deliveryResult(scWebhookRate, b.cfg.chargeConns, first.at, got, want, errs, firstErr)
	first.until(last).apply(&r1, int64(len(got)))
	r1.Extra["events_per_second_target"] = float64(b.cfg.webhookRate)
	r1.Extra["events_per_second_written"] = float64(want) / b.cfg.duration.Seconds()
	r1.PeakRSSMB = peakRSS(srv.pid())
	b.logf("%s:   %.0f deliveries/s, event to receipt p50 %.1f ms, p99 %.1f ms, %d of %d delivered, %d errors, server CPU %.0f µs/delivery",
		scWebhookRate, r1.RPS, r1.P50ms, r1.P99ms, len(got), want, r1.Errors, r1.ServerCPUPerOpUS)

	r2 := b.saturated(ctx, srv, rec, w, charge, read, drainMax)
	if n := rec.bad.Load(); n > 0 {
		r2.Errors += n
		r2.FirstError = fmt.Sprintf("%d notifications without webhook-id or created_at", n)
	}
	return []Result{r1, r2}
}

// saturated charges back to back with the deliveries held (the delivery
// queue paused), then resumes them: the drain, from the first delivery after
// the resume to the last, starts with the whole backlog and the server does
// nothing but deliver in it. Without a hold (it failed: FirstError says why)
// the deliveries go out during the charges and the drain is only their tail.
func (b *bench) saturated(ctx context.Context, srv *parcelaServer, rec *receiver, w *worker, charge op, read func() reading, drainMax time.Duration) Result {
	b.logf("%s: %d connections for %s, deliveries held", scWebhookMax, b.cfg.chargeConns, b.cfg.duration)
	resetPeakRSS(srv.pid())
	from, probes, held := time.Now(), 0, false
	hold, holdErr := openQueueHold(ctx, srv.dsn)
	if holdErr == nil {
		defer hold.close()
		// Never leave the server's queue paused, whatever happens below.
		defer func() { _ = hold.resume(context.WithoutCancel(ctx)) }()
		from, probes, holdErr = hold.pauseDeliveries(ctx, rec, w, charge)
		if held = holdErr == nil; !held {
			_ = hold.resume(ctx)
			probes = 0 // their events come before the run's window
		}
	}
	if holdErr != nil {
		b.logf("%s: deliveries not held: %v", scWebhookMax, holdErr)
	}
	first := read()
	if !held {
		from = first.at
	}
	lr := runLoad(ctx, scWebhookMax, loadSpec{conns: b.cfg.chargeConns, duration: b.cfg.duration, op: charge})
	want := (int(lr.completed) + probes) * eventsPerSale
	stopped := read()
	atStop := rec.since(from)
	resumed := stopped
	if held {
		if err := hold.resume(ctx); err != nil {
			holdErr = fmt.Errorf("resume River queue %q: %w", hold.queue, err)
		} else if want > len(atStop) {
			// The drain starts at the first delivery after the resume (up
			// to River's 2 s poll on SQLite, with the server idle).
			_, resumed = rec.waitFor(ctx, from, len(atStop)+1, drainMax, read)
		}
	}
	b.profile(ctx, srv, scWebhookMax+" drain")
	got, last := rec.waitFor(ctx, from, want, drainMax, read)
	r := deliveryResult(scWebhookMax, b.cfg.chargeConns, first.at, got, want, lr.Errors, lr.FirstError)
	first.until(last).apply(&r, int64(len(got)))
	if holdErr != nil {
		r.Errors++
		r.FirstError = "holding the deliveries during the charges: " + holdErr.Error()
	}
	r.Extra["deliveries_held"] = 0
	if held {
		r.Extra["deliveries_held"] = 1
	}
	r.Extra["probe_charges"] = float64(probes)
	r.Extra["charges_per_second"] = lr.RPS
	r.Extra["events_per_second_written"] = float64(int(lr.completed)*eventsPerSale) / lr.Seconds
	var during int
	for _, a := range atStop {
		if !a.received.Before(first.at) {
			during++
		}
	}
	r.Extra["delivered_during_charges"] = float64(during)
	r.Extra["backlog_at_stop"] = float64(want - len(atStop))
	r.Extra["resume_seconds"] = resumed.at.Sub(stopped.at).Seconds()
	drained := 0
	for _, a := range got {
		if !a.received.Before(resumed.at) {
			drained++
		}
	}
	r.Extra["drain_deliveries"] = float64(drained)
	drain := resumed.until(last)
	if drained > 0 && drain.seconds > 0 {
		r.Extra["drain_seconds"] = drain.seconds
		r.Extra["drain_server_cpu_percent"] = drain.cpuPercent()
		r.Extra["drain_server_cpu_us_per_delivery"] = drain.perOp(float64(drained))
		if drained >= 100 {
			r.Extra["drain_deliveries_per_second"] = float64(drained) / drain.seconds
		}
		if w := drain.share(float64(drained)); w != nil {
			r.Extra["drain_sqlite_writer_busy_percent"] = w.BusyPercent
			r.Extra["drain_sqlite_writer_held_us_per_delivery"] = w.HeldPerOpUS
		}
	}
	r.PeakRSSMB = peakRSS(srv.pid())
	b.logf("%s:   %.0f charges/s (%.0f events/s written), %.0f delivered during the charges, backlog %.0f; drain %.0f/s at %.0f µs of server CPU each (resumed after %.1f s); %d of %d delivered, %d errors",
		scWebhookMax, lr.RPS, r.Extra["events_per_second_written"], r.Extra["delivered_during_charges"], r.Extra["backlog_at_stop"],
		r.Extra["drain_deliveries_per_second"], r.Extra["drain_server_cpu_us_per_delivery"], r.Extra["resume_seconds"], len(got), want, r.Errors)
	return r
}

// deliveryResult summarizes arrivals: deliveries/s from start to the last
// arrival, event-to-receipt percentiles, and every missing delivery as an
// error.
func deliveryResult(name string, conns int, start time.Time, got []arrival, want int, errs int64, firstErr string) Result {
	r := Result{Name: name, Connections: conns, Available: true, Requests: int64(len(got)), Errors: errs, FirstError: firstErr,
		Extra: map[string]float64{"deliveries_expected": float64(want)}}
	if missing := want - len(got); missing > 0 {
		r.Errors += int64(missing)
		if r.FirstError == "" {
			r.FirstError = fmt.Sprintf("%d of %d deliveries had not arrived when the wait ended", missing, want)
		}
	}
	lat := make([]time.Duration, 0, len(got))
	last := start
	for _, a := range got {
		lat = append(lat, a.received.Sub(a.created))
		if a.received.After(last) {
			last = a.received
		}
	}
	slices.Sort(lat)
	r.Seconds = last.Sub(start).Seconds()
	if r.Seconds > 0 {
		r.RPS = float64(len(got)) / r.Seconds
	}
	r.P50ms, r.P99ms = msOf(percentile(lat, 0.5)), msOf(percentile(lat, 0.99))
	if len(lat) > 0 {
		r.MaxMs = msOf(lat[len(lat)-1])
	}
	return r
}

// paced runs o at rate per second for d (open loop) on conns workers and
// returns how many succeeded. A tick that finds every worker busy is an
// error: the server fell behind the rate.
func paced(ctx context.Context, o op, rate float64, d time.Duration, conns int) (ok, errs int64, firstErr string) {
	jobs := make(chan struct{}, conns)
	var mu sync.Mutex
	fail := func(err string) {
		mu.Lock()
		errs++
		if firstErr == "" {
			firstErr = err
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	var done atomic.Int64
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{id: i, client: newClient()}
			defer w.client.CloseIdleConnections()
			for range jobs {
				if _, err := o(ctx, w); err != nil {
					fail(err.Error())
					continue
				}
				done.Add(1)
			}
		}()
	}
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i := 0; ; i++ {
		next := start.Add(time.Duration(i) * interval)
		if next.Sub(start) >= d || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Until(next))
		select {
		case jobs <- struct{}{}:
		default:
			fail("the server fell behind the event rate (every sender busy)")
		}
	}
	close(jobs)
	wg.Wait()
	return done.Load(), errs, firstErr
}
