package tools

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"appwrite-agent/shared/pyjson"
)

// Calculator limits: longer or deeper expressions are refused before evaluation.
const (
	MaxExpressionChars = 2000
	MaxExpressionDepth = 100
)

// Calculator messages (after "Error: ").
const (
	MsgOnlyArithmetic = "Only basic arithmetic is allowed"
	MsgEmptyExpr      = "expression is empty"
	MsgInvalidSyntax  = "invalid syntax (<unknown>, line 1)"
	MsgDivZero        = "float division by zero"
	MsgModZero        = "float modulo"
	MsgZeroNegPow     = "0.0 cannot be raised to a negative power"
	MsgOverflow       = "(34, 'Numerical result out of range')"
	MsgComplex        = "the result is not a real number"
	MsgTooLong        = "expression is too long (at most 2000 characters)"
	MsgTooDeep        = "expression is nested too deeply"
	MsgIntTooLarge    = "int too large to convert to float"
)

// Calculator is the calculator tool: numbers, unary minus, + - * / ** % and parentheses, evaluated in
// float64 like the reference's Python floats (so 17*19 is "323.0"). Anything else (names, calls, unary
// plus, //, bit operators) is refused with "Error: Only basic arithmetic is allowed".
type Calculator struct{}

// Name implements toolapi.Tool.
func (Calculator) Name() string { return "calculator" }

// Description implements toolapi.Tool.
func (Calculator) Description() string {
	return "Evaluate an arithmetic expression exactly instead of computing it in your head. Supports numbers, " +
		"parentheses, unary minus and the operators + - * / % and ** (power). No variables, functions or units. " +
		"The result is a decimal number such as 323.0; a problem comes back as 'Error: …'."
}

// Parameters implements toolapi.Tool.
func (Calculator) Parameters() json.RawMessage {
	return schema([][2]string{{"expression", prop("string", "The expression, e.g. (17 * 19) / 4 or 2 ** 10 % 7.", "")}}, "expression")
}

// Run implements toolapi.Tool.
func (Calculator) Run(_ context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Expression any `json:"expression"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	var expr string
	switch v := a.Expression.(type) {
	case string:
		expr = v
	case float64:
		expr = strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "Error: " + MsgEmptyExpr, nil
	default:
		return "Error: " + MsgOnlyArithmetic, nil
	}
	return Calculate(expr), nil
}

// Calculate evaluates expr and returns the tool's text: the result in Python's float repr, or
// "Error: <message>".
func Calculate(expr string) string {
	v, err := Evaluate(expr)
	if err != nil {
		return "Error: " + err.Error()
	}
	return FormatFloat(v)
}

// calcError is an evaluation error; its text is the message after "Error: ".
type calcError string

func (e calcError) Error() string { return string(e) }

// Evaluate parses and evaluates expr.
func Evaluate(expr string) (float64, error) {
	if len(expr) > MaxExpressionChars {
		return 0, calcError(MsgTooLong)
	}
	if strings.TrimSpace(expr) == "" {
		return 0, calcError(MsgEmptyExpr)
	}
	toks, err := lex(expr)
	if err != nil {
		return 0, err
	}
	p := &parser{toks: toks}
	n, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	if p.peek().kind != tEOF {
		return 0, p.unexpected()
	}
	return n.eval()
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tOp    // + - * / % **
	tLP    // (
	tRP    // )
	tOther // anything that is valid Python but not arithmetic: names, //, comparison, …
)

type token struct {
	kind tokKind
	op   string
	num  float64
}

// lex splits expr into tokens. Characters that cannot start any Python token are syntax errors; Python
// tokens that are not arithmetic (names, strings, other operators) become tOther so the parser can say
// "Only basic arithmetic is allowed" where Python's ast check would.
func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			n, f, err := lexNumber(s[i:])
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tNum, num: f})
			i += n
		case c == '*' && i+1 < len(s) && s[i+1] == '*':
			if i+2 < len(s) && s[i+2] == '=' {
				return nil, calcError(MsgInvalidSyntax)
			}
			out = append(out, token{kind: tOp, op: "**"})
			i += 2
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			out = append(out, token{kind: tOther, op: "//"})
			i += 2
		case strings.IndexByte("+-*/%", c) >= 0:
			if i+1 < len(s) && s[i+1] == '=' {
				return nil, calcError(MsgInvalidSyntax)
			}
			out = append(out, token{kind: tOp, op: string(c)})
			i++
		case c == '(':
			out = append(out, token{kind: tLP})
			i++
		case c == ')':
			out = append(out, token{kind: tRP})
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] >= 0x80) {
				j++
			}
			out = append(out, token{kind: tOther, op: s[i:j]})
			i = j
		case strings.IndexByte("<>=!&|^~,[]{}:\"'@.", c) >= 0:
			out = append(out, token{kind: tOther, op: string(c)})
			i++
		default:
			return nil, calcError(MsgInvalidSyntax)
		}
	}
	return append(out, token{kind: tEOF}), nil
}

// lexNumber reads a Python numeric literal at the start of s: decimal integers and floats (with
// underscores between digits and an exponent), and 0x / 0o / 0b integers. An imaginary suffix (j) is
// not arithmetic here.
func lexNumber(s string) (int, float64, error) {
	if len(s) > 1 && s[0] == '0' && strings.IndexByte("xXoObB", s[1]) >= 0 {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[s[1]|0x20]
		j := 2
		for j < len(s) && (isDigitIn(s[j], base) || s[j] == '_') {
			j++
		}
		digits := strings.ReplaceAll(s[2:j], "_", "")
		if digits == "" || strings.Contains(s[2:j], "__") || strings.HasSuffix(s[2:j], "_") || j < len(s) && isIdent(s[j]) {
			return 0, 0, calcError(MsgInvalidSyntax)
		}
		f, ok := parseIntFloat(digits, base)
		if !ok {
			return 0, 0, calcError(MsgIntTooLarge)
		}
		return j, f, nil
	}
	j := 0
	digits := func() bool {
		start := j
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_' && j > start && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
			j++
		}
		return j > start
	}
	intPart := digits()
	isFloat := false
	if j < len(s) && s[j] == '.' {
		isFloat = true
		j++
		frac := digits()
		if !intPart && !frac {
			return 0, 0, calcError(MsgInvalidSyntax)
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			j = k
			digits()
			isFloat = true
		}
	}
	if j < len(s) && (s[j] == 'j' || s[j] == 'J') {
		return 0, 0, calcError(MsgOnlyArithmetic)
	}
	if j < len(s) && isIdent(s[j]) {
		return 0, 0, calcError(MsgInvalidSyntax)
	}
	lit := strings.ReplaceAll(s[:j], "_", "")
	if !isFloat && len(lit) > 1 && lit[0] == '0' && strings.Trim(lit, "0") != "" {
		// Python refuses leading zeros in decimal integers ("01").
		return 0, 0, calcError(MsgInvalidSyntax)
	}
	if isFloat {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, 0, calcError(MsgInvalidSyntax)
		}
		return j, f, nil
	}
	f, ok := parseIntFloat(lit, 10)
	if !ok {
		return 0, 0, calcError(MsgIntTooLarge)
	}
	return j, f, nil
}

// parseIntFloat converts an integer literal to float64 as Python's float(int) does; a value beyond the
// float range overflows ("int too large to convert to float" in Python) and is reported as overflow.
func parseIntFloat(digits string, base int) (float64, bool) {
	if len(digits) > 4000 {
		return 0, false
	}
	n, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return 0, false
	}
	f, _ := new(big.Float).SetInt(n).Float64()
	return f, !math.IsInf(f, 0)
}

func isDigitIn(c byte, base int) bool {
	switch base {
	case 2:
		return c == '0' || c == '1'
	case 8:
		return c >= '0' && c <= '7'
	default:
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// node is a parsed expression.
type node struct {
	op          string // "num", "neg", or a binary operator
	val         float64
	left, right *node
}

type parser struct {
	toks  []token
	pos   int
	depth int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

// unexpected reports the token at the current position: a Python token that is not arithmetic means
// "only arithmetic", anything else a syntax error.
func (p *parser) unexpected() error {
	for _, t := range p.toks[p.pos:] {
		if t.kind == tOther {
			return calcError(MsgOnlyArithmetic)
		}
	}
	return calcError(MsgInvalidSyntax)
}

// Precedence, as in Python: + - (1) < * / % (2) < unary - (3) < ** (4, right-associative, and its right
// operand may itself start with a unary minus).
func binPrec(op string) int {
	switch op {
	case "+", "-":
		return 1
	case "*", "/", "%":
		return 2
	case "**":
		return 4
	}
	return 0
}

func (p *parser) expr(minPrec int) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxExpressionDepth {
		return nil, calcError(MsgTooDeep)
	}
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind == tOther {
			return nil, calcError(MsgOnlyArithmetic)
		}
		if t.kind != tOp {
			return left, nil
		}
		prec := binPrec(t.op)
		if prec < minPrec || prec == 4 {
			return left, nil
		}
		p.next()
		right, err := p.expr(prec + 1)
		if err != nil {
			return nil, err
		}
		left = &node{op: t.op, left: left, right: right}
	}
}

// unary parses [-]* power.
func (p *parser) unary() (*node, error) {
	t := p.peek()
	if t.kind == tOp && t.op == "-" {
		p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > MaxExpressionDepth {
			return nil, calcError(MsgTooDeep)
		}
		operand, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: "neg", left: operand}, nil
	}
	if t.kind == tOp && t.op == "+" {
		// Unary plus is valid Python but not allowed by the reference.
		p.next()
		if _, err := p.unary(); err != nil {
			return nil, err
		}
		return nil, calcError(MsgOnlyArithmetic)
	}
	return p.power()
}

// power parses atom [** unary].
func (p *parser) power() (*node, error) {
	base, err := p.atom()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tOp && t.op == "**" {
		p.next()
		exp, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: "**", left: base, right: exp}, nil
	}
	return base, nil
}

func (p *parser) atom() (*node, error) {
	t := p.next()
	switch t.kind {
	case tNum:
		return &node{op: "num", val: t.num}, nil
	case tLP:
		if p.peek().kind == tRP {
			// "()" is an empty tuple in Python: valid syntax, not arithmetic.
			return nil, calcError(MsgOnlyArithmetic)
		}
		n, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRP {
			p.pos--
			return nil, p.unexpected()
		}
		return n, nil
	case tOther:
		return nil, calcError(MsgOnlyArithmetic)
	}
	p.pos--
	return nil, p.unexpected()
}

func (n *node) eval() (float64, error) {
	switch n.op {
	case "num":
		return n.val, nil
	case "neg":
		v, err := n.left.eval()
		return -v, err
	}
	a, err := n.left.eval()
	if err != nil {
		return 0, err
	}
	b, err := n.right.eval()
	if err != nil {
		return 0, err
	}
	switch n.op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return 0, calcError(MsgDivZero)
		}
		return a / b, nil
	case "%":
		return pyMod(a, b)
	case "**":
		return pyPow(a, b)
	}
	return 0, calcError(MsgOnlyArithmetic)
}

// pyMod is Python's float %: the result has the sign of the divisor.
func pyMod(a, b float64) (float64, error) {
	if b == 0 {
		return 0, calcError(MsgModZero)
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) {
		return math.NaN(), nil
	}
	if math.IsInf(b, 0) {
		if a == 0 || (a > 0) == (b > 0) {
			return a, nil
		}
		return b, nil
	}
	m := math.Mod(a, b)
	if m != 0 {
		if (b < 0) != (m < 0) {
			m += b
		}
	} else {
		m = math.Copysign(0, b)
	}
	return m, nil
}

// pyPow is Python's float ** float: 0 to a negative power and overflow are errors, and a negative base
// with a fractional exponent (a complex number in Python) is refused.
func pyPow(a, b float64) (float64, error) {
	if a == 0 && b < 0 {
		return 0, calcError(MsgZeroNegPow)
	}
	if a < 0 && !math.IsInf(a, 0) && b != math.Trunc(b) && !math.IsInf(b, 0) && !math.IsNaN(b) {
		return 0, calcError(MsgComplex)
	}
	r := math.Pow(a, b)
	if b == math.Trunc(b) && math.Abs(b) <= maxExactExponent && a != 0 && !math.IsInf(a, 0) && !math.IsNaN(a) {
		r = intPow(a, int64(b))
	}
	if math.IsInf(r, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		return 0, calcError(MsgOverflow)
	}
	return r, nil
}

// maxExactExponent bounds the integer exponents computed exactly by intPow.
const maxExactExponent = 4096

// intPow computes a**n for an integer n at 512 bits and rounds once to float64, so the result is the
// correctly rounded one (as the C library's pow that Python uses gives in practice); math.Pow may be off
// by an ulp.
func intPow(a float64, n int64) float64 {
	const prec = 512
	x := new(big.Float).SetPrec(prec).SetFloat64(a)
	r := new(big.Float).SetPrec(prec).SetInt64(1)
	e := n
	if e < 0 {
		e = -e
	}
	for e > 0 {
		if e&1 == 1 {
			r.Mul(r, x)
		}
		e >>= 1
		if e > 0 {
			x.Mul(x, x)
		}
	}
	if n < 0 {
		r.Quo(new(big.Float).SetPrec(prec).SetInt64(1), r)
	}
	f, _ := r.Float64()
	return f
}

// FormatFloat writes f as Python's repr(float) does: the shortest round-tripping digits, fixed notation
// with at least one decimal for exponents -4..15, otherwise scientific ("1e+16", "1.5e-05"); "inf",
// "-inf" and "nan" for the special values.
func FormatFloat(f float64) string { return pyjson.FloatRepr(f) }
