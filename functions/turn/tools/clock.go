package tools

import (
	"context"
	"encoding/json"
	"time"
)

// CurrentTime is the current_time tool: the current UTC time in ISO 8601 with microseconds and +00:00,
// as Python's datetime.isoformat writes it.
type CurrentTime struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Name implements toolapi.Tool.
func (CurrentTime) Name() string { return "current_time" }

// Description implements toolapi.Tool.
func (CurrentTime) Description() string {
	return "Return the current date and time in UTC (ISO 8601). Use it for relative dates such as 'yesterday' or 'last week'."
}

// Parameters implements toolapi.Tool.
func (CurrentTime) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}

// Run implements toolapi.Tool.
func (c CurrentTime) Run(context.Context, json.RawMessage) (string, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return now().UTC().Format("2006-01-02T15:04:05.000000+00:00"), nil
}
