package localappwrite

import (
	"testing"
	"time"
)

// TestCronNext: the next run date of dragonmantank/cron-expression's getNextRunDate (strictly after the
// current minute, UTC): steps, ranges, lists, names, macros, Sunday as 0 or 7, day-of-month and day-of-week
// both restricted meaning either, and an impossible date having none.
func TestCronNext(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ expr, from, want string }{
		{"*/5 * * * *", "2026-12-01 10:01", "2026-12-01 10:05"},
		{"*/5 * * * *", "2026-12-01 10:05", "2026-12-01 10:10"}, // strictly after
		{"* * * * *", "2026-12-31 23:59", "2027-01-01 00:00"},
		{"0 9-17/4 * * *", "2026-12-01 13:00", "2026-12-01 17:00"},
		{"15,45 * * * *", "2026-12-01 10:20", "2026-12-01 10:45"},
		{"0 0 * * MON", "2026-12-01 10:00", "2026-12-07 00:00"}, // 2026-12-01 is a Tuesday
		{"0 0 * * 7", "2026-12-01 10:00", "2026-12-06 00:00"},
		{"0 0 1 JAN *", "2026-12-01 10:00", "2027-01-01 00:00"},
		{"0 0 13 * 5", "2026-12-01 10:00", "2026-12-04 00:00"}, // Friday the 4th comes before the 13th
		{"5/20 * * * *", "2026-12-01 10:06", "2026-12-01 10:25"},
		{"@hourly", "2026-12-01 10:00", "2026-12-01 11:00"},
		{"@daily", "2026-12-01 10:00", "2026-12-02 00:00"},
		{"0 0 29 2 *", "2026-03-01 00:00", "2028-02-29 00:00"},
	} {
		s, err := parseCron(c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		if got := s.next(at(c.from)); !got.Equal(at(c.want)) {
			t.Errorf("%q after %s = %s, want %s", c.expr, c.from, got.Format("2006-01-02 15:04"), c.want)
		}
	}
	if s, err := parseCron("0 0 30 2 *"); err != nil || !s.next(at("2026-01-01 00:00")).IsZero() || validCron("0 0 30 2 *", at("2026-01-01 00:00")) {
		t.Errorf("30 February has a next run date")
	}
	for _, bad := range []string{"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "a * * * *", "1-x * * * *", "*/x * * * *", "0 0 ? * *", "0 0 L * *", "0 0 * * 1#2"} {
		if _, err := parseCron(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !validCron("", time.Now()) {
		t.Error("no schedule is valid")
	}
}

// FuzzParseCron: any text either is refused or gives a schedule whose next run is zero or a whole minute
// strictly after the start, and matches the schedule again (no panics, no loops).
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 9-17/4 * * MON-FRI", "@hourly", "15,45 * 1 JAN 7", "5/20 * * * *", "0 0 30 2 *", "* * * *"} {
		f.Add(s)
	}
	from := time.Date(2026, 12, 1, 10, 1, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := parseCron(expr)
		if err != nil {
			return
		}
		n := s.next(from)
		if n.IsZero() {
			return
		}
		if !n.After(from) || n.Second() != 0 || n.Nanosecond() != 0 || !s.minute[n.Minute()] || !s.hour[n.Hour()] || !s.month[int(n.Month())] || !s.day(n) {
			t.Fatalf("%q: next %s does not match", expr, n)
		}
	})
}
