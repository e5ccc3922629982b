package hmacpool

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"hash"
	"sync"
	"testing"
)

func fresh(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

// TestSameAsFreshHMAC checks that pooled MACs, new and reused, give crypto/hmac's sums for every key, also
// after the pool started over, and that a reused MAC starts from nothing written.
func TestSameAsFreshHMAC(t *testing.T) {
	for _, h := range []func() hash.Hash{sha256.New, sha1.New} {
		p := New(h, 3)
		for round := 0; round < 4; round++ {
			for k := 0; k < 5; k++ {
				key := bytes.Repeat([]byte{byte('a' + k)}, 16+k*30) // short and longer than a block
				for _, msg := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("msg."), 100)} {
					m := p.Get(key)
					m.Write(msg)
					if got, want := m.Sum(), fresh(h, key, msg); !bytes.Equal(got, want) {
						t.Fatalf("round %d key %d len(msg) %d: %x, want %x", round, k, len(msg), got, want)
					}
					p.Put(m)
				}
				if n := len(p.m); n > 3 {
					t.Fatalf("pool remembers %d keys, bound 3", n)
				}
			}
		}
	}
}

// TestReuseDoesNotAllocate checks what the pool is for: a repeated key costs no allocation.
func TestReuseDoesNotAllocate(t *testing.T) {
	p := New(sha256.New, 0)
	key, msg := []byte("0123456789abcdef0123456789abcdef"), []byte("id.123.body")
	for range 2 { // the first Reset of a MAC saves its keyed state
		m := p.Get(key)
		m.Write(msg)
		m.Sum()
		p.Put(m)
	}
	if n := testing.AllocsPerRun(100, func() {
		m := p.Get(key)
		m.Write(msg)
		m.Sum()
		p.Put(m)
	}); n != 0 {
		t.Fatalf("%v allocations per reuse", n)
	}
}

// TestConcurrentKeys runs many goroutines over a few keys and a small bound (go test -race).
func TestConcurrentKeys(t *testing.T) {
	p := New(sha256.New, 2)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				key := []byte(fmt.Sprintf("key-%d-0123456789abcdef", (g+i)%5))
				msg := []byte(fmt.Sprintf("message %d", i))
				m := p.Get(key)
				m.Write(msg)
				if !bytes.Equal(m.Sum(), fresh(sha256.New, key, msg)) {
					errs <- fmt.Errorf("goroutine %d, message %d: wrong MAC", g, i)
					return
				}
				p.Put(m)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
