package tools

import (
	"sort"
	"sync"
	"time"
)

// Page cache bounds, as in the reference: 120 s per exact URL, at most 64 entries, the 16 oldest evicted
// when full.
const (
	PageCacheTTL     = 120 * time.Second
	PageCacheEntries = 64
	PageCacheEvict   = 16
)

// PageCache is a small, bounded cache of browser_fetch results, safe for concurrent use.
type PageCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	max     int
	evict   int
	now     func() time.Time
	entries map[string]cacheEntry
}

type cacheEntry struct {
	text string
	at   time.Time
}

// NewPageCache returns a cache with the given TTL and size (the reference's bounds when zero).
func NewPageCache(ttl time.Duration, size int) *PageCache {
	if ttl <= 0 {
		ttl = PageCacheTTL
	}
	if size <= 0 {
		size = PageCacheEntries
	}
	return &PageCache{ttl: ttl, max: size, evict: max(1, min(PageCacheEvict, size/4)), now: time.Now, entries: map[string]cacheEntry{}}
}

// Get returns a fresh entry.
func (c *PageCache) Get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return "", false
	}
	if c.now().Sub(e.at) >= c.ttl {
		delete(c.entries, key)
		return "", false
	}
	return e.text, true
}

// Put stores an entry; when the cache is full, expired entries go first, then the oldest ones.
func (c *PageCache) Put(key, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if now.Sub(e.at) >= c.ttl {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			keys := make([]string, 0, len(c.entries))
			for k := range c.entries {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return c.entries[keys[i]].at.Before(c.entries[keys[j]].at) })
			for _, k := range keys[:min(c.evict, len(keys))] {
				delete(c.entries, k)
			}
		}
	}
	c.entries[key] = cacheEntry{text: text, at: now}
}

// Len returns the number of entries (expired ones included until they are touched).
func (c *PageCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
