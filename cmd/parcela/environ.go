package main

import (
	"os"
	"slices"
	"strings"
)

// serveVariables are the variables `parcela serve` reads (README, "Running
// it"). toolVariables are read by the tests and the benchmark, or named by
// the guides for an integrator's own program: set beside serve, they are
// not a mistake.
var (
	serveVariables = []string{
		"PARCELA_ADDR", "PARCELA_SANDBOX_ADDR", "PARCELA_OPS_ADDR", "PARCELA_DATABASE_URL",
		"PARCELA_PUBLIC_URL", "PARCELA_SANDBOX_PUBLIC_URL", "PARCELA_RATE_LIMIT", "PARCELA_SANDBOX_RATE_LIMIT",
		"PARCELA_TOKEN_CACHE_TTL", "PARCELA_WEBHOOK_ALLOWED_CIDRS", "PARCELA_PRODUCTION_PROVIDER", "PARCELA_PAGES_SECRET",
		"PARCELA_LOG_LEVEL", "PARCELA_SHUTDOWN_TIMEOUT", "PARCELA_UNAUTHENTICATED_RATE_LIMIT", "PARCELA_IMAGE_RATE_LIMIT",
		"PARCELA_PAGE_RATE_LIMIT", "PARCELA_PAGE_ORDERS_PER_HOUR", "PARCELA_TRUSTED_PROXIES", "PARCELA_READ_HEADER_TIMEOUT", "PARCELA_READ_TIMEOUT",
		"PARCELA_WRITE_TIMEOUT", "PARCELA_IDLE_TIMEOUT", "PARCELA_MAX_CONNECTIONS", "PARCELA_MAX_CONNECTIONS_PER_ADDRESS", "PARCELA_IMAGE_CACHE_BYTES",
		"PARCELA_SQLITE_SYNCHRONOUS",
	}
	toolVariables = []string{"PARCELA_CHROMIUM", "PARCELA_SCREENSHOTS", "PARCELA_FUZZTIME", "PARCELA_TOKEN", "PARCELA_WEBHOOK_SECRET"}
)

// environ lists the process's environment; a test gives its own.
var environ = os.Environ

// unknownVariables returns the PARCELA_ variables set that serve does not
// read, each with the one it most likely misspells ("" if none is near):
// a misspelt PARCELA_PUBLIC_URL would otherwise send customers links to
// the listener's own address, and a misspelt limit would be its default,
// without a word.
func unknownVariables(env []string) (unknown [][2]string) {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PARCELA_") || slices.Contains(serveVariables, name) || slices.Contains(toolVariables, name) ||
			strings.HasPrefix(name, "PARCELA_TEST_") || strings.HasPrefix(name, "PARCELA_BENCH_") {
			continue
		}
		near, best := "", 4 // at most 3 edits away
		for _, known := range serveVariables {
			if d := editDistance(name, known); d < best {
				near, best = known, d
			}
		}
		unknown = append(unknown, [2]string{name, near})
	}
	return unknown
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
