//go:build unix

package sqldb

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

// flock takes f's lock without waiting. flock (not fcntl, which SQLite
// uses on the database) is held by the open file, so a second open in the
// same process is refused too.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
