// Package hmacpool keeps crypto/hmac states, keyed and ready, for reuse.
//
// hmac.New hashes the key into its inner and outer states and allocates both hashes, their pads and the
// HMAC itself; a delivery that verifies or signs with a key it used a moment ago pays all of it again. A
// Pool keeps, per key, a few HMACs that crypto/hmac's Reset returns to the freshly keyed state (crypto/hmac
// saves that state on the first Reset), so a repeated key costs a map lookup. The MACs are crypto/hmac's:
// this package computes nothing itself.
//
// A Pool holds at most MaxKeys keys; when a new key would exceed that it starts over, so a flood of keys
// costs memory only up to that bound. It keys by the key's bytes: a Pool holds the keys it was given (as
// the process that gives them already does).
package hmacpool

import (
	"crypto/hmac"
	"hash"
	"sync"
)

// Defaults of New.
const (
	// DefaultMaxKeys bounds the keys a Pool remembers.
	DefaultMaxKeys = 1024
	// maxFree bounds the idle MACs kept per key (about the concurrency of one key's traffic).
	maxFree = 8
)

// Pool hands out keyed HMACs of one hash function. It is safe for concurrent use.
type Pool struct {
	h       func() hash.Hash
	maxKeys int

	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	key  []byte
	free []*MAC // guarded by Pool.mu
}

// MAC is a keyed HMAC from a Pool, with a scratch buffer for the message parts a caller has to copy
// anyway (a string to write, say). Give it back with Pool.Put when done; it is not safe for concurrent use.
type MAC struct {
	hash.Hash
	// Scratch is the caller's, kept between uses (its length is not).
	Scratch []byte
	sum     [64]byte
	e       *entry
}

// New returns a pool of HMACs over h (such as sha256.New) remembering up to maxKeys keys (DefaultMaxKeys
// when maxKeys <= 0).
func New(h func() hash.Hash, maxKeys int) *Pool {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Pool{h: h, maxKeys: maxKeys, m: map[string]*entry{}}
}

// Get returns an HMAC keyed with key, in its initial state (nothing written).
func (p *Pool) Get(key []byte) *MAC {
	p.mu.Lock()
	e := p.m[string(key)]
	if e != nil {
		if n := len(e.free); n > 0 {
			m := e.free[n-1]
			e.free[n-1] = nil
			e.free = e.free[:n-1]
			p.mu.Unlock()
			m.Reset()
			return m
		}
	}
	p.mu.Unlock()
	if e == nil {
		e = &entry{key: append([]byte(nil), key...)}
		p.mu.Lock()
		if len(p.m) >= p.maxKeys {
			clear(p.m)
		}
		if prev := p.m[string(key)]; prev != nil {
			e = prev
		} else {
			p.m[string(e.key)] = e
		}
		p.mu.Unlock()
	}
	return &MAC{Hash: hmac.New(p.h, e.key), e: e}
}

// Put gives m back for another Get with the same key. m must not be used afterwards.
func (p *Pool) Put(m *MAC) {
	if m == nil || m.e == nil {
		return
	}
	p.mu.Lock()
	if len(m.e.free) < maxFree {
		m.e.free = append(m.e.free, m)
	}
	p.mu.Unlock()
}

// Sum returns the MAC of what was written, in m's own buffer (valid until m is used again or put back).
func (m *MAC) Sum() []byte { return m.Hash.Sum(m.sum[:0]) }
