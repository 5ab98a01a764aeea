package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"parcela"
)

// Metrics are the HTTP metrics exported on the operations listener.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the HTTP metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parcela_http_requests_total", Help: "HTTP requests by environment, route and status.",
		}, []string{"environment", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parcela_http_request_duration_seconds", Help: "HTTP request latency by environment and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"environment", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// Observe counts a request of env's listener served outside the API's
// handler (the payer's pages), under the same metrics.
func (m *Metrics) Observe(env parcela.Environment, route string, status int, d time.Duration) {
	m.observe(env, route, status, d)
}

func (m *Metrics) observe(env parcela.Environment, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(string(env), route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(string(env), route).Observe(d.Seconds())
}
