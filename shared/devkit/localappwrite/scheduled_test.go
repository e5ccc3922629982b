package localappwrite

import (
	"context"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/testclock"

	"github.com/appwrite/sdk-for-go/functions"
)

func TestScheduledExecutions(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC))
	f := newFixture(t, Options{Clock: clock.Now})
	rt := runtimeStub(t, 200)
	if err := f.s.RegisterFunction(testProject, FunctionSpec{ID: "fn1", URL: rt.ts.URL, Secret: "rt-secret", Scopes: []string{"executions.write"}, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	fns := functions.New(f.sdk(f.key))
	at := "2026-12-01T10:03:00.000+00:00"

	// Executions/Create.php:139-148 (1.9.6): scheduledAt needs async, then a minute-precise date strictly more
	// than 60 s ahead with a year of at most 9999.
	_, err := fns.CreateExecution("fn1", fns.WithCreateExecutionScheduledAt(at))
	wantAPIError(t, err, 400, ErrGeneralBadRequest, "Scheduled executions must run asynchronously. Set scheduledAt to a future date, or set async to true.")
	const schedMsg = "Execution schedule must be a valid date, and at least 1 minute from now"
	for _, bad := range []string{
		"2026-12-01T10:01:00.000+00:00", // 30 s ahead
		"2026-12-01T10:01:30.000+00:00", // exactly 60 s ahead, and not minute-precise
		"2026-12-01T10:05:30.000+00:00", // seconds
		"2026-12-01T10:05:00.250+00:00", // milliseconds
		"10000-01-01T00:00:00.000+00:00",
		"tomorrow",
	} {
		_, err = fns.CreateExecution("fn1", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt(bad))
		wantAPIError(t, err, 400, ErrGeneralBadRequest, schedMsg)
	}
	// The checks come before the function lookup, as in Appwrite.
	_, err = fns.CreateExecution("nope", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt("tomorrow"))
	wantAPIError(t, err, 400, ErrGeneralBadRequest, schedMsg)

	ex, err := fns.CreateExecution("fn1", fns.WithCreateExecutionAsync(true), fns.WithCreateExecutionScheduledAt(at),
		fns.WithCreateExecutionPath("/jobs/retry"), fns.WithCreateExecutionBody("sealed-job"))
	if err != nil || ex.Status != "scheduled" || ex.ScheduledAt == "" {
		t.Fatalf("%+v %v", ex, err)
	}
	if n := f.s.RunScheduled(clock.Now()); n != 0 || len(rt.all()) != 0 {
		t.Fatalf("ran %d before its time", n)
	}
	clock.Advance(3 * time.Minute)
	if n := f.s.RunScheduled(clock.Now()); n != 1 {
		t.Fatalf("started %d, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := rt.all()
	if len(got) != 1 || got[0].Path != "/jobs/retry" || string(got[0].Body) != "sealed-job" || got[0].Header.Get("x-appwrite-trigger") != "schedule" || got[0].Header.Get("x-appwrite-key") == "" {
		t.Fatalf("runtime got %+v", got)
	}
	done, err := fns.GetExecution("fn1", ex.Id)
	if err != nil || done.Status != "completed" {
		t.Fatalf("%+v %v", done, err)
	}
	if n := f.s.RunScheduled(clock.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("ran again: %d", n)
	}
}
