//go:build unix

package sqldb

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the CPU time this process has spent, user and system: the
// store's cost per operation without the database server's, where ns/op
// counts PostgreSQL's time and the machine's queueing too.
func ProcessCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
