package web

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

// submissions remembers, per form nonce, where a finished submission went,
// so a form posted twice (a double click, a resent POST) is done once and the
// second post is sent where the first went. A post arriving while the first
// is still running waits for it. Failed submissions are forgotten, so the
// corrected form can be sent again. Bounded in size and time. It lives in
// the process: replicas behind one address keep the guarantee only if a
// client's posts reach the same replica.
type submissions struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	entries map[string]*submission
}

type submission struct {
	done    chan struct{}
	target  string // where to send the browser; "" if it failed
	created time.Time
}

// submissionKey names the submission of the form posted in r with nonce:
// the nonce and the path posted to. One page's forms share its nonce (the
// checkout's Pix, boleto and card), and a page the Back button restores
// posts it again: each of its forms is a submission of its own, so a card
// sent after a Pix is charged rather than sent to that Pix.
func submissionKey(r *http.Request, nonce string) string { return r.URL.Path + "\x00" + nonce }

func newSubmissions(max int, ttl time.Duration) *submissions {
	return &submissions{max: max, ttl: ttl, entries: map[string]*submission{}}
}

// do runs submit once per nonce and returns its redirect target. A repeat
// returns the first one's target (waiting for it if needed) with repeated
// set; if the first failed, the repeat runs submit itself.
func (s *submissions) do(ctx context.Context, nonce string, submit func() (string, error)) (target string, repeated bool, err error) {
	for {
		s.mu.Lock()
		e, ok := s.entries[nonce]
		if !ok {
			e = &submission{done: make(chan struct{}), created: time.Now()}
			s.evict()
			// A copy: the nonce is a piece of the form's body (Go's form
			// parsing slices it), which the key would keep in memory, the
			// card number or the CPF with it, for as long as the entry lives.
			s.entries[strings.Clone(nonce)] = e
			s.mu.Unlock()
			break
		}
		s.mu.Unlock()
		select {
		case <-e.done:
			if e.target != "" {
				return e.target, true, nil
			}
			// The first failed and was forgotten: try again.
		case <-ctx.Done():
			return "", true, ctx.Err()
		}
	}
	target, err = submit()
	s.mu.Lock()
	e := s.entries[nonce]
	if err != nil || target == "" {
		delete(s.entries, nonce)
	} else {
		e.target = target
	}
	close(e.done)
	s.mu.Unlock()
	return target, false, err
}

// evict drops expired entries, and the oldest finished one when full. The
// caller holds the lock.
func (s *submissions) evict() {
	if len(s.entries) < s.max {
		return
	}
	now := time.Now()
	var oldest string
	for k, e := range s.entries {
		select {
		case <-e.done:
		default:
			continue // running: its poster is waiting on it
		}
		if now.Sub(e.created) > s.ttl {
			delete(s.entries, k)
		} else if oldest == "" || e.created.Before(s.entries[oldest].created) {
			oldest = k
		}
	}
	if len(s.entries) >= s.max && oldest != "" {
		delete(s.entries, oldest)
	}
}
