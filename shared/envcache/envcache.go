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
)

// Cache builds a value from the process environment on first use and again only when the environment
// changed since the last build. It is safe for concurrent use; concurrent Gets during a build wait for it.
type Cache[T any] struct {
	build func() (T, error)

	mu    sync.Mutex
	built bool
	env   []string
	val   T
	err   error
}

// New returns a cache whose value is build's result. build reads the environment (and nothing else that
// changes); it runs under the cache's lock.
func New[T any](build func() (T, error)) *Cache[T] {
	return &Cache[T]{build: build}
}

// Get returns the value built for the current environment, and build's error with it.
func (c *Cache[T]) Get() (T, error) {
	env := os.Environ()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.built || !slices.Equal(env, c.env) {
		c.val, c.err = c.build()
		c.env, c.built = env, true
	}
	return c.val, c.err
}
