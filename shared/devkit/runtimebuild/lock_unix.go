//go:build unix

package runtimebuild

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockKey takes an exclusive lock on dir/key.lock, so that builds of the same inputs in parallel processes
// (test packages run side by side) build once: the second waits, then finds the first one's server. The
// returned function releases it; a lock that cannot be taken is no lock (each process builds on its own).
func lockKey(dir, key string) func() {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, "."+key+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		_ = os.Remove(f.Name())
		_ = f.Close()
	}
}
