// Package envcache keeps what a function builds from its environment (its configuration and the clients
// made from it) for the life of the process.
//
// The open-runtimes Go server calls a function's handler.Main for every request and has no start-up hook,
// so whatever is built from the environment needs one place to live between requests: one Cache per
// function, the function's only process-wide value. In a deployment the environment of a process never
// changes and the value is built exactly once; a test that changes the environment between requests
// (t.Setenv) gets a fresh value on the next Get, so a stale configuration is never served.
package envcache

import (
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// Cache builds a value from the process environment on first use and again only when the environment
// changed since the last build. It is safe for concurrent use; concurrent Gets during a build wait for it.
// A Get that finds the environment unchanged takes no lock: every request of a function makes one.
type Cache[T any] struct {
	build func() (T, error)

	mu  sync.Mutex // held while building
	cur atomic.Pointer[built[T]]
}

// built is one build's result and the environment it was built for; never changed once stored.
type built[T any] struct {
	env []string
	val T
	err error
}

// New returns a cache whose value is build's result. build reads the environment (and nothing else that
// changes); it runs under the cache's lock.
func New[T any](build func() (T, error)) *Cache[T] {
	return &Cache[T]{build: build}
}

// Get returns the value built for the current environment, and build's error with it.
func (c *Cache[T]) Get() (T, error) {
	env := os.Environ()
	if b := c.cur.Load(); b != nil && slices.Equal(env, b.env) {
		return b.val, b.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.cur.Load(); b != nil && slices.Equal(env, b.env) {
		return b.val, b.err // built by a concurrent Get
	}
	val, err := c.build()
	c.cur.Store(&built[T]{env: env, val: val, err: err})
	return val, err
}
