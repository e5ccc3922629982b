//go:build unix

package stack

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockBuild takes an exclusive lock on root/build/.stack-build.lock, so that test packages (which go test
// runs in parallel processes) and scripts do not stage and build into the same folders at once. The returned
// function releases it.
func lockBuild(root string) (func(), error) {
	dir := filepath.Join(root, "build")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".stack-build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// tryLock takes an exclusive lock on the file at path (created if missing) without waiting: ok is false when
// another holder, in this process or another, has it (flock(2) locks belong to an open file, so two opens
// in one process exclude each other too). The lock lasts until unlock is called or the process ends; unlock
// may be called more than once.
func tryLock(path string) (unlock func(), ok bool) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	// Closing the file releases the lock; a second Close does nothing.
	return func() { _ = f.Close() }, true
}
