package ingress

import (
	"encoding/json"
	"strconv"

	"appwrite-agent/shared/eventcatalog"
)

// appendEvent appends the event a subscriber receives, {"eventId","name","timestamp","data"}, byte for byte
// as encoding/json marshals it with data = eventcatalog.Occurrence.Data() (keys sorted, strings
// HTML-escaped), without reflection: a delivery makes one. data is sorted by name (as Project returns it);
// nil is written null. Numbers (floats) and strings encoding/json would escape go through encoding/json.
func appendEvent(b []byte, eventID, name, timestamp string, data []eventcatalog.Field) ([]byte, error) {
	b = append(b, `{"eventId":`...)
	b = appendJSONString(b, eventID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"timestamp":`...)
	b = appendJSONString(b, timestamp)
	b = append(b, `,"data":`...)
	if data == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '{')
	for i, f := range data {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Name)
		b = append(b, ':')
		switch f.Kind {
		case eventcatalog.String:
			b = appendJSONString(b, f.Str)
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

// appendJSONString appends s quoted as encoding/json does. A string of printable ASCII with nothing to
// escape (no '"', '\\', '<', '>', '&') is written as is; any other goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendJSON appends o as encoding/json marshals it (omitempty fields left out, strings HTML-escaped):
// every delivery answers with one.
func (o Outcome) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = appendJSONString(b, o.Status)
	if o.EventID != "" {
		b = append(b, `,"eventId":`...)
		b = appendJSONString(b, o.EventID)
	}
	if o.Attempts != 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(o.Attempts), 10)
	}
	if o.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, o.Reason)
	}
	return append(b, '}')
}

// jsonPlain tells the bytes encoding/json writes unchanged inside a string: printable ASCII but '"', '\\'
// and the HTML-escaped '<', '>', '&'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
