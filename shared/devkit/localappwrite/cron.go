package localappwrite

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// A function's schedule is a cron expression (Functions/Http/Functions/Create.php and Update.php: the
// `schedule` param, validated by Appwrite\Task\Validator\Cron with dragonmantank/cron-expression v3.4.0).
// Appwrite's schedule-functions task computes each schedule's next run date with getNextRunDate() (strictly
// after the current minute, in UTC) and enqueues the execution at that date (Tasks/ScheduleFunctions.php):
// one execution per occurrence, none for occurrences missed while nothing ran. The stand-in parses the five
// fields and the macros; dragonmantank's L, W, # and ? are not supported here and are refused.

// cronSchedule is a parsed cron expression: the allowed values of each field.
type cronSchedule struct {
	minute, hour, dom, month, dow [61]bool
	// domAny and dowAny are the day fields left as *: a day matches the other field alone. When both are
	// restricted, a day matches either (cron's and dragonmantank's rule).
	domAny, dowAny bool
}

// cronMacros are dragonmantank's CronExpression::MAPPINGS.
var cronMacros = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
	"@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

var monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
var dayNames = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

// errCron is an expression the stand-in does not take; validation answers Appwrite's Cron validator text.
var errCron = errors.New("String must be a valid cron expression")

// parseCron parses a five-field expression or a macro.
func parseCron(expr string) (*cronSchedule, error) {
	expr = strings.TrimSpace(expr)
	if m, ok := cronMacros[strings.ToLower(expr)]; ok {
		expr = m
	}
	f := strings.Fields(expr)
	if len(f) != 5 {
		return nil, errCron
	}
	c := &cronSchedule{domAny: f[2] == "*", dowAny: f[4] == "*"}
	for i, spec := range []struct {
		field    *[61]bool
		min, max int
		names    map[string]int
	}{{&c.minute, 0, 59, nil}, {&c.hour, 0, 23, nil}, {&c.dom, 1, 31, nil}, {&c.month, 1, 12, monthNames}, {&c.dow, 0, 7, dayNames}} {
		if err := parseCronField(f[i], spec.field, spec.min, spec.max, spec.names); err != nil {
			return nil, err
		}
	}
	if c.dow[7] { // 7 is Sunday too
		c.dow[0] = true
	}
	return c, nil
}

// parseCronField reads one field: a comma list of *, n, a-b, each with an optional /step.
func parseCronField(s string, out *[61]bool, min, max int, names map[string]int) error {
	value := func(v string) (int, error) {
		if n, ok := names[strings.ToUpper(v)]; ok {
			return n, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			return 0, errCron
		}
		return n, nil
	}
	for _, part := range strings.Split(s, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > max {
				return errCron
			}
			step = n
		}
		lo, hi := min, max
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = value(a); err != nil {
				return err
			}
			if hi, err = value(b); err != nil {
				return err
			}
			if lo > hi {
				return errCron
			}
		default:
			n, err := value(rng)
			if err != nil {
				return err
			}
			lo, hi = n, n
			if hasStep { // "5/15" is 5-max/15
				hi = max
			}
		}
		for v := lo; v <= hi; v += step {
			out[v] = true
		}
	}
	return nil
}

// next is the first minute strictly after t (in UTC) that the schedule matches, as getNextRunDate(); zero
// when none comes within five years (an impossible date such as 30 February).
func (c *cronSchedule) next(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	for limit := t.AddDate(5, 0, 0); t.Before(limit); {
		if !c.month[int(t.Month())] {
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !c.day(t) {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !c.hour[t.Hour()] {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, time.UTC)
			continue
		}
		if !c.minute[t.Minute()] {
			t = t.Add(time.Minute)
			continue
		}
		return t
	}
	return time.Time{}
}

func (c *cronSchedule) day(t time.Time) bool {
	dom, dow := c.dom[t.Day()], c.dow[int(t.Weekday())]
	switch {
	case c.domAny && c.dowAny:
		return true
	case c.domAny:
		return dow
	case c.dowAny:
		return dom
	}
	return dom || dow
}

// validCron is Appwrite's Cron validator: empty is valid (no schedule); otherwise an expression that parses
// and has a next run date.
func validCron(expr string, now time.Time) bool {
	if expr == "" {
		return true
	}
	c, err := parseCron(expr)
	return err == nil && !c.next(now).IsZero()
}
