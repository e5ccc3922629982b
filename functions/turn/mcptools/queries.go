package mcptools

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"appwrite-agent/shared/pyjson"
)

// Models write Appwrite queries as SQL-ish filters or SDK calls; Appwrite wants Query JSON strings
// ({"method","attribute"?,"values"?}). normalizeQueries rewrites arguments.queries the reference's way.

var (
	queryOpRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(\$?[A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|!=|=|>|<)\s*(.+?)\s*$`)
	})
	queryCallRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$`) })
	queryOps    = map[string]string{">=": "greaterThanEqual", "<=": "lessThanEqual", ">": "greaterThan",
		"<": "lessThan", "=": "equal", "!=": "notEqual"}
	dollarAttrs = map[string]bool{"createdAt": true, "updatedAt": true, "id": true, "sequence": true}
	valueOnly   = map[string]bool{"limit": true, "offset": true, "cursorAfter": true, "cursorBefore": true,
		"select": true, "orderRandom": true, "createdBefore": true, "createdAfter": true, "createdBetween": true,
		"updatedBefore": true, "updatedAfter": true, "updatedBetween": true, "or": true, "and": true,
		"exists": true, "notExists": true}
	attrOnly    = map[string]bool{"isNull": true, "isNotNull": true, "orderAsc": true, "orderDesc": true}
	timeHelpers = map[string][2]string{"createdBefore": {"lessThan", "$createdAt"}, "createdAfter": {"greaterThan", "$createdAt"},
		"updatedBefore": {"lessThan", "$updatedAt"}, "updatedAfter": {"greaterThan", "$updatedAt"}}
)

// normalizeQueries rewrites every item of args.queries when it is a list.
func normalizeQueries(args pyjson.Value) pyjson.Value {
	v, ok := args.Get("queries")
	if !ok || v.Kind() != pyjson.Array {
		return args
	}
	out := args.Clone()
	items := make([]pyjson.Value, v.Len())
	for i, item := range v.Elems() {
		items[i] = normalizeQueryItem(item)
	}
	out.Set("queries", pyjson.ArrayValue(items))
	return out
}

func canonicalAttr(a string) string {
	if !strings.HasPrefix(a, "$") && dollarAttrs[a] {
		return "$" + a
	}
	return a
}

// dumpQuery writes {"method","attribute"?,"values"?} compactly; hasValues false leaves values out.
func dumpQuery(method string, attribute *string, values []pyjson.Value, hasValues bool) string {
	o := pyjson.NewObject()
	o.Set("method", pyjson.StringValue(method))
	if attribute != nil {
		o.Set("attribute", pyjson.StringValue(canonicalAttr(*attribute)))
	}
	if hasValues {
		o.Set("values", pyjson.ArrayValue(values))
	}
	return compactJSON(o)
}

func normalizeQueryDict(item pyjson.Value) string {
	mv, _ := item.Get("method")
	if mv.Kind() != pyjson.String || strings.TrimSpace(mv.Text()) == "" {
		return compactJSON(item)
	}
	var attr *string
	if av, has := item.Get("attribute"); has && !av.IsNone() {
		s := av.PyStr()
		if av.Kind() == pyjson.String {
			s = canonicalAttr(av.Text())
		}
		attr = &s
	}
	vv, has := item.Get("values")
	var values []pyjson.Value
	hasValues := has && !vv.IsNone()
	if hasValues {
		if vv.Kind() == pyjson.Array {
			values = vv.Elems()
		} else {
			values = []pyjson.Value{vv}
		}
	}
	return dumpQuery(strings.TrimSpace(mv.Text()), attr, values, hasValues)
}

func normalizeQueryItem(item pyjson.Value) pyjson.Value {
	if item.Kind() == pyjson.Object {
		return pyjson.StringValue(normalizeQueryDict(item))
	}
	if item.Kind() != pyjson.String {
		return item
	}
	return pyjson.StringValue(normalizeQueryString(strings.TrimSpace(item.Text())))
}

// normalizeQueryString is the Query JSON of one query string, or raw itself when it is none.
func normalizeQueryString(raw string) string {
	if raw == "" {
		return raw
	}
	if strings.HasPrefix(raw, "{") || strings.HasPrefix(raw, "[") {
		parsed, err := parseJSON([]byte(raw))
		if err != nil || parsed.Kind() != pyjson.Object {
			return raw
		}
		return normalizeQueryDict(parsed)
	}
	if m := queryOpRE().FindStringSubmatch(raw); m != nil {
		value := strings.TrimSpace(m[3])
		if len(value) >= 2 && (value[0] == '"' && value[len(value)-1] == '"' || value[0] == '\'' && value[len(value)-1] == '\'') {
			value = value[1 : len(value)-1]
		}
		if method, ok := queryOps[m[2]]; ok {
			attr := m[1]
			return dumpQuery(method, &attr, []pyjson.Value{pyjson.StringValue(value)}, true)
		}
	}
	if q, ok := normalizeQueryCall(raw); ok {
		return q
	}
	return raw
}

func normalizeQueryCall(raw string) (string, bool) {
	m := queryCallRE().FindStringSubmatch(raw)
	if m == nil {
		return "", false
	}
	method := m[1]
	args, err := parsePyArgs(m[2])
	if err != nil {
		return "", false
	}
	if th, ok := timeHelpers[method]; ok && len(args) == 1 {
		attr := th[1]
		return dumpQuery(th[0], &attr, []pyjson.Value{args[0]}, true), true
	}
	if (method == "createdBetween" || method == "updatedBetween") && len(args) == 2 {
		attr := "$createdAt"
		if method == "updatedBetween" {
			attr = "$updatedAt"
		}
		return dumpQuery("between", &attr, []pyjson.Value{args[0], args[1]}, true), true
	}
	if valueOnly[method] {
		if len(args) == 0 {
			return dumpQuery(method, nil, nil, false), true
		}
		if args[0].Kind() == pyjson.Array && len(args) == 1 {
			return dumpQuery(method, nil, args[0].Elems(), true), true
		}
		return dumpQuery(method, nil, args, true), true
	}
	if attrOnly[method] && len(args) == 1 {
		if args[0].Kind() == pyjson.String {
			attr := args[0].Text()
			return dumpQuery(method, &attr, nil, false), true
		}
	}
	if len(args) == 0 {
		return "", false
	}
	if args[0].Kind() != pyjson.String {
		return "", false
	}
	attr := args[0].Text()
	rest := args[1:]
	values := rest
	if len(rest) == 1 {
		if rest[0].Kind() == pyjson.Array {
			values = rest[0].Elems()
		}
	}
	return dumpQuery(method, &attr, values, len(values) > 0), true
}

// parsePyArgs parses the arguments of an SDK-style call as Python literals (what ast.literal_eval
// accepts of them: strings, numbers, True/False/None, lists, tuples, dicts with string keys).
func parsePyArgs(s string) ([]pyjson.Value, error) {
	p := &pyParser{s: s}
	p.space()
	if p.i == len(p.s) {
		return []pyjson.Value{}, nil
	}
	var out []pyjson.Value
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i == len(p.s) {
			return out, nil
		}
		if p.s[p.i] != ',' {
			return nil, errors.New("expected ,")
		}
		p.i++
		p.space()
		if p.i == len(p.s) {
			return out, nil
		}
	}
}

type pyParser struct {
	s string
	i int
}

var errPy = errors.New("not a Python literal")

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *pyParser) value() (pyjson.Value, error) {
	p.space()
	if p.i >= len(p.s) {
		return pyjson.Value{}, errPy
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		return p.str()
	case c == '[':
		return p.seq(']')
	case c == '(':
		return p.seq(')')
	case c == '{':
		return p.dict()
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, kw := range []struct {
			word string
			val  pyjson.Value
		}{{"True", pyjson.BoolValue(true)}, {"False", pyjson.BoolValue(false)}, {"None", pyjson.Value{}}} {
			if strings.HasPrefix(p.s[p.i:], kw.word) {
				end := p.i + len(kw.word)
				if end == len(p.s) || !isIdentByte(p.s[end]) {
					p.i = end
					return kw.val, nil
				}
			}
		}
		return pyjson.Value{}, errPy
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *pyParser) seq(end byte) (pyjson.Value, error) {
	p.i++
	out := []pyjson.Value{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return pyjson.ArrayValue(out), nil
		}
		v, err := p.value()
		if err != nil {
			return pyjson.Value{}, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return pyjson.Value{}, errPy
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != end {
			return pyjson.Value{}, errPy
		}
	}
}

func (p *pyParser) dict() (pyjson.Value, error) {
	p.i++
	var members []pyjson.Member
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return pyjson.ObjectValue(members), nil
		}
		k, err := p.value()
		if err != nil {
			return pyjson.Value{}, err
		}
		if k.Kind() != pyjson.String {
			return pyjson.Value{}, errPy
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return pyjson.Value{}, errPy
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return pyjson.Value{}, err
		}
		members = pyjson.SetMember(members, k.Text(), v)
		p.space()
		if p.i >= len(p.s) {
			return pyjson.Value{}, errPy
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != '}' {
			return pyjson.Value{}, errPy
		}
	}
}

var pyNumberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?`) })

func (p *pyParser) number() (pyjson.Value, error) {
	m := pyNumberRE().FindString(p.s[p.i:])
	if m == "" {
		return pyjson.Value{}, errPy
	}
	p.i += len(m)
	if p.i < len(p.s) && isIdentByte(p.s[p.i]) {
		return pyjson.Value{}, errPy
	}
	if !strings.ContainsAny(m, ".eE") {
		n, ok := new(big.Int).SetString(strings.TrimPrefix(m, "+"), 10)
		if !ok {
			return pyjson.Value{}, errPy
		}
		return pyjson.IntLiteral(n.String()), nil
	}
	f, err := strconv.ParseFloat(m, 64)
	if err != nil || math.IsInf(f, 0) {
		return pyjson.Value{}, errPy
	}
	return pyjson.FloatValue(f), nil
}

func (p *pyParser) str() (pyjson.Value, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return pyjson.StringValue(b.String()), nil
		case c == '\n':
			return pyjson.Value{}, errPy
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'u':
				if p.i+4 > len(p.s) {
					return pyjson.Value{}, errPy
				}
				n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil {
					return pyjson.Value{}, errPy
				}
				b.WriteRune(rune(n))
				p.i += 4
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
		}
	}
	return pyjson.Value{}, errPy
}
