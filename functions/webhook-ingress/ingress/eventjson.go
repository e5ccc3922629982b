package ingress

import (
	"encoding/json"
	"strconv"

	"appwrite-agent/shared/eventcatalog"
	"appwrite-agent/shared/jsonquote"
)

// appendEvent appends the event a subscriber receives, {"eventId","name","timestamp","data"}, byte for byte
// as encoding/json marshals it with data = eventcatalog.Occurrence.Data() (keys sorted, strings
// HTML-escaped), without reflection: a delivery makes one. data is sorted by name (as Project returns it);
// nil is written null. Numbers (floats) and strings encoding/json would escape go through encoding/json.
func appendEvent(b []byte, eventID, name, timestamp string, data []eventcatalog.Field) ([]byte, error) {
	b = append(b, `{"eventId":`...)
	b = jsonquote.Append(b, eventID)
	b = append(b, `,"name":`...)
	b = jsonquote.Append(b, name)
	b = append(b, `,"timestamp":`...)
	b = jsonquote.Append(b, timestamp)
	b = append(b, `,"data":`...)
	if data == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '{')
	for i, f := range data {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonquote.Append(b, f.Name)
		b = append(b, ':')
		switch f.Kind {
		case eventcatalog.String:
			b = jsonquote.Append(b, f.Str)
		case eventcatalog.Bool:
			b = strconv.AppendBool(b, f.Bool)
		case eventcatalog.Integer:
			b = strconv.AppendInt(b, f.Int, 10)
		default:
			raw, err := json.Marshal(f.Value())
			if err != nil {
				return nil, err
			}
			b = append(b, raw...)
		}
	}
	return append(b, "}}"...), nil
}

// eventSize is the length of appendEvent's output, exact unless a string needs escaping or a field is a
// number.
func eventSize(eventID, name, timestamp string, data []eventcatalog.Field) int {
	n := len(`{"eventId":"","name":"","timestamp":"","data":{}}`) + len(eventID) + len(name) + len(timestamp)
	for _, f := range data {
		n += len(f.Name) + len(`"":,`)
		switch f.Kind {
		case eventcatalog.String:
			n += len(f.Str) + 2
		case eventcatalog.Bool:
			n += len("false")
		default:
			n += 20
		}
	}
	return n
}

// AppendJSON appends o as encoding/json marshals it (omitempty fields left out, strings HTML-escaped):
// every delivery answers with one.
func (o Outcome) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = jsonquote.Append(b, o.Status)
	if o.EventID != "" {
		b = append(b, `,"eventId":`...)
		b = jsonquote.Append(b, o.EventID)
	}
	if o.Attempts != 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(o.Attempts), 10)
	}
	if o.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonquote.Append(b, o.Reason)
	}
	return append(b, '}')
}
