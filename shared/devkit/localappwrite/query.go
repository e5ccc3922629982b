package localappwrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// kv is one member of an ordered JSON object.
type kv struct {
	k string
	v any
}

// obj is a JSON object that keeps Appwrite's attribute order (Response/Model/*.php rule order).
type obj []kv

// MarshalJSON writes the members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		buf.Write(k)
		buf.WriteByte(':')
		var vb bytes.Buffer
		enc := json.NewEncoder(&vb)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.v); err != nil {
			return nil, err
		}
		buf.Write(bytes.TrimRight(vb.Bytes(), "\n"))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func (o obj) get(k string) (any, bool) {
	for _, m := range o {
		if m.k == k {
			return m.v, true
		}
	}
	return nil, false
}

// query is one Appwrite query as SDK v1.0.0 writes it: {"method","attribute","values"}.
type query struct {
	Method    string `json:"method"`
	Attribute string `json:"attribute"`
	Values    []any  `json:"values"`
}

// applyQueries filters and pages a list with the subset of Appwrite queries the stand-in supports: equal,
// notEqual, startsWith, limit, offset (default limit 25, as APP_LIMIT_LIST_DEFAULT). Others are refused with
// general_query_invalid... as general_argument_invalid, the type Appwrite uses for an invalid queries param.
func applyQueries(items []obj, raw []string) ([]obj, int, *APIError) {
	limit, offset := 25, 0
	var filters []query
	for _, r := range raw {
		var q query
		if err := json.Unmarshal([]byte(r), &q); err != nil {
			return nil, 0, invalidParam("queries", "Invalid query: Invalid query")
		}
		switch q.Method {
		case "limit", "offset":
			if len(q.Values) != 1 {
				return nil, 0, invalidParam("queries", fmt.Sprintf("Invalid query: %s queries require exactly one value.", q.Method))
			}
			n, ok := q.Values[0].(float64)
			if !ok || n < 0 {
				return nil, 0, invalidParam("queries", "Invalid query: "+q.Method+" must be a non-negative integer.")
			}
			if q.Method == "limit" {
				limit = int(n)
			} else {
				offset = int(n)
			}
		case "equal", "notEqual", "startsWith":
			filters = append(filters, q)
		default:
			return nil, 0, invalidParam("queries", fmt.Sprintf("Invalid query: Query method not supported by the local stand-in: %s", q.Method))
		}
	}
	var out []obj
	for _, it := range items {
		if matchAll(it, filters) {
			out = append(out, it)
		}
	}
	total := len(out)
	if offset > len(out) {
		offset = len(out)
	}
	out = out[offset:]
	if limit < len(out) {
		out = out[:limit]
	}
	return out, total, nil
}

func matchAll(it obj, filters []query) bool {
	for _, q := range filters {
		v, _ := it.get(q.Attribute)
		hit := false
		for _, want := range q.Values {
			switch q.Method {
			case "equal", "notEqual":
				hit = hit || equalJSON(v, want)
			case "startsWith":
				s, ok1 := v.(string)
				p, ok2 := want.(string)
				hit = hit || ok1 && ok2 && strings.HasPrefix(s, p)
			}
		}
		if q.Method == "notEqual" {
			hit = !hit
		}
		if !hit {
			return false
		}
	}
	return true
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
