//go:build !unix

package sqldb

import (
	"testing"
	"time"
)

// ProcessCPU is not measured here: cpu-ns/op reads 0.
func ProcessCPU(*testing.B) time.Duration { return 0 }
