package main

import (
	"runtime/debug"
)

// defaultGCPercent is `parcela serve`'s GOGC where the variable is unset.
// A server's live Go heap is small (about 10 MB at a million bills:
// SQLite's page caches are not Go memory), so at Go's default of 100 the
// collector ran some 25 times a second and took 5–13% of the CPU of a read or a charge.
// At 200 it runs half as often for about 12 MB more of peak RSS. No memory
// limit is set by default: under a burst whose live heap passed it, the
// collector would run without pause just when the CPU is needed.
const defaultGCPercent = 200

// tuneGC applies the default unless the operator set GOGC, which the Go
// runtime has then already applied.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
