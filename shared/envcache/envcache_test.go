package envcache_test

import (
	"errors"
	"os"
	"sync"
	"testing"

	"appwrite-agent/shared/envcache"
)

func TestBuildsOncePerEnvironment(t *testing.T) {
	t.Setenv("ENVCACHE_TEST", "a")
	builds := 0
	c := envcache.New(func() (string, error) {
		builds++
		return os.Getenv("ENVCACHE_TEST"), nil
	})
	for range 3 {
		if v, err := c.Get(); v != "a" || err != nil {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	if builds != 1 {
		t.Fatalf("%d builds for one environment, want 1", builds)
	}
	t.Setenv("ENVCACHE_TEST", "b")
	if v, _ := c.Get(); v != "b" {
		t.Fatalf("after a change Get = %q, want the new value", v)
	}
	os.Unsetenv("ENVCACHE_TEST")
	if v, _ := c.Get(); v != "" || builds != 3 {
		t.Fatalf("after an unset Get = %q with %d builds", v, builds)
	}
}

func TestKeepsTheBuildError(t *testing.T) {
	boom := errors.New("boom")
	builds := 0
	c := envcache.New(func() (int, error) { builds++; return 0, boom })
	for range 2 {
		if _, err := c.Get(); !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	}
	if builds != 1 {
		t.Fatalf("a failed build is cached like a good one (the environment decides), got %d builds", builds)
	}
}

func TestConcurrentGets(t *testing.T) {
	var mu sync.Mutex
	builds := 0
	c := envcache.New(func() (int, error) { mu.Lock(); defer mu.Unlock(); builds++; return 7, nil })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v, _ := c.Get(); v != 7 {
				t.Errorf("Get = %d", v)
			}
		})
	}
	wg.Wait()
	if builds != 1 {
		t.Fatalf("%d builds", builds)
	}
}
