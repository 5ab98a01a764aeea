package main

import (
	"strings"
	"testing"
)

// PARCELA_SQLITE_SYNCHRONOUS takes full (the default) or normal, in any
// case, and stops the start naming itself on anything else: off would
// trade the file's integrity, not only its last commits. A start with
// normal says at the start what it risks (the writer's setting itself:
// TestSQLiteSynchronousIsTheOperatorsChoice).
func TestServeSQLiteSynchronous(t *testing.T) {
	t.Parallel()
	variableLimits(t, []string{"PARCELA_SQLITE_SYNCHRONOUS"}, []string{"full", "normal", "NORMAL", "Full"},
		[]string{"off", "extra", "0", "1", "fast", "normal;"})
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_SQLITE_SYNCHRONOUS": "normal"})
	ts.stop()
	if !strings.Contains(ts.stderr.String(), "PARCELA_SQLITE_SYNCHRONOUS=normal") || !strings.Contains(ts.stderr.String(), "power loss") {
		t.Errorf("no warning of what synchronous=normal risks:\n%s", ts.stderr)
	}
}
