//go:build unix

package sqldb

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

// hardLinks is how many names the file at path has (0 when it cannot be
// read, as a database not created yet).
func hardLinks(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	return uint64(st.Nlink)
}

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
