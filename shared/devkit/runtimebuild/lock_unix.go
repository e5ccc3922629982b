//go:build unix

package runtimebuild

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
)

// lockBuilds takes an exclusive lock on dir/.build.lock, so that builds in parallel processes (test packages
// run side by side, a stand-in beside scripts/stage) run one after the other. It returns the function that
// releases the lock, or ctx's error when ctx ends first. A lock file that cannot be opened is no lock (each
// process then builds when it likes).
func lockBuilds(ctx context.Context, dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}, nil
	}
	got := make(chan error, 1)
	// flock(2) cannot be interrupted: this goroutine waits for the lock; when ctx ends first, the one below
	// waits for it instead and releases the lock as soon as it is granted.
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return func() {}, nil
		}
		return func() { _ = f.Close() }, nil
	case <-ctx.Done():
		go func() {
			<-got
			f.Close()
		}()
		return nil, ctx.Err()
	}
}
