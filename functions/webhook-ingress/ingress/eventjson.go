package ingress

import (
	"encoding/json"
	"slices"
	"strconv"
)

// appendEvent appends the event a subscriber receives, {"eventId","name","timestamp","data"}, byte for byte
// as encoding/json marshals it (data's keys sorted, strings HTML-escaped), without reflection: a delivery
// makes one. Values of other types than the projections produce (string, bool, int, int64) go through
// encoding/json, as do strings it would escape.
func appendEvent(b []byte, eventID, name, timestamp string, data map[string]any) ([]byte, error) {
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
	var buf [16]string
	keys := buf[:0]
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch v := data[k].(type) {
		case string:
			b = appendJSONString(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		default:
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			b = append(b, raw...)
		}
	}
	return append(b, "}}"...), nil
}

// appendJSONString appends s quoted as encoding/json does. A string of printable ASCII with nothing to
// escape (no '"', '\\', '<', '>', '&') is written as is; any other goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
