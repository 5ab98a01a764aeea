package main

import (
	"runtime/debug"
	"testing"
)

// Not parallel: the collector's setting is the process's.
func TestTuneGCDefaultYieldsToGOGC(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	before := gcPercent()
	t.Cleanup(func() { debug.SetGCPercent(before) })

	debug.SetGCPercent(100)
	tuneGC(func(string) string { return "" })
	if p := gcPercent(); p != defaultGCPercent {
		t.Fatalf("GOGC unset: the collector runs at %d, want %d", p, defaultGCPercent)
	}

	debug.SetGCPercent(150) // what the runtime applied from GOGC=150
	tuneGC(func(name string) string { return map[string]string{"GOGC": "150"}[name] })
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC=150: the collector runs at %d, want the operator's 150", p)
	}
}
