package oauth_test

import (
	"context"
	"testing"
	"time"

	"appwrite-agent/functions/mcp-events/internal/testissuer"
	"appwrite-agent/functions/mcp-events/oauth"
)

// BenchmarkJWKSKnownKeyParallel: the lookup every verified token makes, from every core at once, once the
// key is cached (no fetch, a short critical section).
func BenchmarkJWKSKnownKeyParallel(b *testing.B) {
	is := testissuer.New()
	b.Cleanup(is.Close)
	j := oauth.NewJWKS(is.URL+"/jwks", nil)
	kid := is.Rotate()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := j.Key(ctx, kid); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := j.Key(ctx, kid); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
