//go:build !unix

package sqldb

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// hardLinks is not counted where the system has no flock either.
func hardLinks(string) uint64 { return 0 }

// flock is not taken where the system has no flock: nothing refuses a
// second server there.
func flock(*os.File) error { return nil }
