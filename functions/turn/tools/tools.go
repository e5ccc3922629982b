// Package tools holds the turn's built-in tools, rebuilt for a serverless function: no browser, no shell,
// and every outbound request through the SSRF-safe client (shared/safehttp).
//
// Each tool satisfies toolapi.Tool structurally (Name, Description, Parameters, Run); the package knows
// nothing of the engine, and package builtins registers the tools per subagent. Tools report refusals
// and fetch failures as their result text ("Error: …"), as the reference does, so a blocked address or a
// bad expression is something the model reads and reacts to, not a failed turn.
package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// decodeArgs decodes the model's arguments object into v. Empty input counts as {}.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments do not match the tool's schema: %v", err)
	}
	return nil
}

// optInt is an integer argument that the model may send as a number or a numeric string.
type optInt struct {
	set bool
	n   int64
}

// UnmarshalJSON accepts a JSON number (integral) or a string holding one; null leaves it unset.
func (o *optInt) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) {
		return fmt.Errorf("%s is not an integer", string(b))
	}
	o.set, o.n = true, int64(f)
	return nil
}

func (o optInt) or(def int64) int64 {
	if o.set {
		return o.n
	}
	return def
}

func clamp(n, lo, hi int64) int64 { return max(lo, min(n, hi)) }

// cutRunes returns s cut to at most n characters and whether it was cut.
func cutRunes(s string, n int) (string, bool) {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

// schema is a helper for the tools' JSON Schemas: an object with the given properties (already JSON),
// in order, and the required names.
func schema(props [][2]string, required ...string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p[0])
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(p[1])
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

// prop is one property schema: {"type":typ,"description":desc} plus extra members (JSON, may be empty).
func prop(typ, desc, extra string) string {
	d, _ := json.Marshal(desc)
	s := `{"type":"` + typ + `","description":` + string(d)
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}
