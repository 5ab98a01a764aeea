package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The payer's pages: the offer's purchase page and a bill's checkout, GETs
// without a token on the sandbox listener (the seeded offer and bills are
// the sandbox's). Only a 200 is a success.

// offerPageURLs is the seeded offer's page.
func offerPageURLs(base string, s *seeded) []string {
	return []string{base + "/pay/" + url.PathEscape(s.companySlug) + "/offers/" + url.PathEscape(s.offerID)}
}

// checkoutPageURLs are the checkouts of the sampled open bills, each with
// its authentication code.
func checkoutPageURLs(base string, s *seeded) []string {
	out := make([]string, 0, len(s.openBills))
	for _, b := range s.openBills {
		out = append(out, base+"/checkout/bills/"+url.PathEscape(b.id)+"?code="+url.QueryEscape(b.code))
	}
	return out
}

// pageOp GETs one of urls at random.
func pageOp(urls []string) op {
	return func(ctx context.Context, w *worker) (time.Duration, error) {
		u := urls[w.rng.IntN(len(urls))]
		t0 := time.Now()
		_, err := w.do(ctx, "GET", u, "", nil, 200)
		return time.Since(t0), err
	}
}

// page measures a page scenario, or reports it unavailable when the binary
// does not serve the route.
func (b *bench) page(ctx context.Context, srv *parcelaServer, name string, urls []string) Result {
	if len(urls) == 0 {
		b.logf("%s: %s: nothing to ask for", srv.engine, name)
		return Result{Name: name, Note: "nothing seeded to ask for (no open bills in the sample)"}
	}
	if served, why := routeServed(ctx, urls[0]); !served {
		b.logf("%s: %s: %s", srv.engine, name, why)
		return Result{Name: name, Note: why}
	}
	b.logf("%s: %s, %d connections", srv.engine, name, b.cfg.pageConns)
	r := b.measure(ctx, srv, scenario{name: name, conns: b.cfg.pageConns, op: pageOp(urls)})
	logResult(b.logf, srv.engine, r)
	return r
}

// routeNotServed starts the note of a page scenario the binary cannot run.
const routeNotServed = "route not served by this binary"

// routeServed asks for u once. A 404 that is not an HTML page comes from
// the API's router (no page handler has the route), and the scenario is
// reported unavailable instead of failing the run; any other answer runs
// the scenario, where a non-200 counts as an error.
func routeServed(ctx context.Context, u string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return false, err.Error()
	}
	c := newClient()
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		// The scenario will meet and count the same error.
		return true, ""
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		return false, fmt.Sprintf("%s (404, %s)", routeNotServed, resp.Header.Get("Content-Type"))
	}
	return true, ""
}
