package tools

import (
	"context"
	"testing"
	"time"
)

func TestCurrentTimeIsPythonIsoformat(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.FixedZone("x", 3600))
	got, err := CurrentTime{Now: func() time.Time { return at }}.Run(context.Background(), nil)
	// datetime.datetime(2026, 3, 4, 4, 6, 7, 890123, tzinfo=datetime.timezone.utc).isoformat()
	if want := "2026-03-04T04:06:07.890123+00:00"; err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}
