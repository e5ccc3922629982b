package mcptools

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Models write Appwrite queries as SQL-ish filters or SDK calls; Appwrite wants Query JSON strings
// ({"method","attribute"?,"values"?}). normalizeQueries rewrites arguments.queries the reference's way.

var (
	queryOpRE   = regexp.MustCompile(`^\s*(\$?[A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|!=|=|>|<)\s*(.+?)\s*$`)
	queryCallRE = regexp.MustCompile(`(?s)^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$`)
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
func normalizeQueries(args *object) *object {
	v, ok := args.get("queries")
	list, isList := v.([]any)
	if !ok || !isList {
		return args
	}
	out := args.clone()
	items := make([]any, len(list))
	for i, item := range list {
		items[i] = normalizeQueryItem(item)
	}
	out.set("queries", items)
	return out
}

func canonicalAttr(a string) string {
	if !strings.HasPrefix(a, "$") && dollarAttrs[a] {
		return "$" + a
	}
	return a
}

// dumpQuery writes {"method","attribute"?,"values"?} compactly; hasValues false leaves values out.
func dumpQuery(method string, attribute *string, values []any, hasValues bool) string {
	o := newObject()
	o.set("method", method)
	if attribute != nil {
		o.set("attribute", canonicalAttr(*attribute))
	}
	if hasValues {
		if values == nil {
			values = []any{}
		}
		o.set("values", values)
	}
	return compactJSON(o)
}

func normalizeQueryDict(item *object) string {
	mv, _ := item.get("method")
	method, ok := mv.(string)
	if !ok || strings.TrimSpace(method) == "" {
		return compactJSON(item)
	}
	var attr *string
	if av, has := item.get("attribute"); has && av != nil {
		s := pyStr(av)
		if str, isStr := av.(string); isStr {
			s = canonicalAttr(str)
		}
		attr = &s
	}
	vv, has := item.get("values")
	var values []any
	hasValues := has && vv != nil
	if hasValues {
		if l, isList := vv.([]any); isList {
			values = l
		} else {
			values = []any{vv}
		}
	}
	return dumpQuery(strings.TrimSpace(method), attr, values, hasValues)
}

func normalizeQueryItem(item any) any {
	if o, ok := item.(*object); ok {
		return normalizeQueryDict(o)
	}
	s, ok := item.(string)
	if !ok {
		return item
	}
	raw := strings.TrimSpace(s)
	if raw == "" {
		return raw
	}
	if strings.HasPrefix(raw, "{") || strings.HasPrefix(raw, "[") {
		parsed, err := parseJSON([]byte(raw))
		if err != nil {
			return raw
		}
		if o, ok := parsed.(*object); ok {
			return normalizeQueryDict(o)
		}
		return raw
	}
	if m := queryOpRE.FindStringSubmatch(raw); m != nil {
		value := strings.TrimSpace(m[3])
		if len(value) >= 2 && (value[0] == '"' && value[len(value)-1] == '"' || value[0] == '\'' && value[len(value)-1] == '\'') {
			value = value[1 : len(value)-1]
		}
		if method, ok := queryOps[m[2]]; ok {
			attr := m[1]
			return dumpQuery(method, &attr, []any{value}, true)
		}
	}
	if q, ok := normalizeQueryCall(raw); ok {
		return q
	}
	return raw
}

func normalizeQueryCall(raw string) (string, bool) {
	m := queryCallRE.FindStringSubmatch(raw)
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
		return dumpQuery(th[0], &attr, []any{args[0]}, true), true
	}
	if (method == "createdBetween" || method == "updatedBetween") && len(args) == 2 {
		attr := "$createdAt"
		if method == "updatedBetween" {
			attr = "$updatedAt"
		}
		return dumpQuery("between", &attr, []any{args[0], args[1]}, true), true
	}
	if valueOnly[method] {
		if len(args) == 0 {
			return dumpQuery(method, nil, nil, false), true
		}
		if l, ok := args[0].([]any); ok && len(args) == 1 {
			return dumpQuery(method, nil, l, true), true
		}
		return dumpQuery(method, nil, args, true), true
	}
	if attrOnly[method] && len(args) == 1 {
		if a, ok := args[0].(string); ok {
			return dumpQuery(method, &a, nil, false), true
		}
	}
	if len(args) == 0 {
		return "", false
	}
	attr, ok := args[0].(string)
	if !ok {
		return "", false
	}
	rest := args[1:]
	values := rest
	if len(rest) == 1 {
		if l, ok := rest[0].([]any); ok {
			values = l
		}
	}
	return dumpQuery(method, &attr, values, len(values) > 0), true
}

// parsePyArgs parses the arguments of an SDK-style call as Python literals (what ast.literal_eval
// accepts of them: strings, numbers, True/False/None, lists, tuples, dicts with string keys).
func parsePyArgs(s string) ([]any, error) {
	p := &pyParser{s: s}
	p.space()
	if p.i == len(p.s) {
		return []any{}, nil
	}
	var out []any
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

func (p *pyParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, errPy
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
			val  any
		}{{"True", true}, {"False", false}, {"None", nil}} {
			if strings.HasPrefix(p.s[p.i:], kw.word) {
				end := p.i + len(kw.word)
				if end == len(p.s) || !isIdentByte(p.s[end]) {
					p.i = end
					return kw.val, nil
				}
			}
		}
		return nil, errPy
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *pyParser) seq(end byte) (any, error) {
	p.i++
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, errPy
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != end {
			return nil, errPy
		}
	}
}

func (p *pyParser) dict() (any, error) {
	p.i++
	o := newObject()
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return o, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, errPy
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errPy
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		o.set(key, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, errPy
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != '}' {
			return nil, errPy
		}
	}
}

var pyNumberRE = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?`)

func (p *pyParser) number() (any, error) {
	m := pyNumberRE.FindString(p.s[p.i:])
	if m == "" {
		return nil, errPy
	}
	p.i += len(m)
	if p.i < len(p.s) && isIdentByte(p.s[p.i]) {
		return nil, errPy
	}
	if !strings.ContainsAny(m, ".eE") {
		n, ok := new(big.Int).SetString(strings.TrimPrefix(m, "+"), 10)
		if !ok {
			return nil, errPy
		}
		return json.Number(n.String()), nil
	}
	f, err := strconv.ParseFloat(m, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, errPy
	}
	return json.Number(pyFloatRepr(f)), nil
}

// pyFloatRepr is Python's repr of a float: shortest digits, positional for exponents -5 < e < 16 (with
// ".0" when integral), else d.ddde±XX.
func pyFloatRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		return mant + "e" + sign + es
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func (p *pyParser) str() (any, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\n':
			return nil, errPy
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
					return nil, errPy
				}
				n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil {
					return nil, errPy
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
	return nil, errPy
}
