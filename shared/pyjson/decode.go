package pyjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of arrays and objects: a deeper document is a *SyntaxError.
const MaxDepth = 900

// SyntaxError is a text that Decode refuses. Its message is ours (docs/CONVENTIONS.md "Texts"): what is
// wrong, in encoding/json's words, and where.
type SyntaxError struct {
	// Msg says what is wrong ("invalid character ']' looking for beginning of value").
	Msg string
	// Offset is where the value or token that could not be read starts, in bytes from the start of the
	// text (0-based); the length of the text when it ends too early.
	Offset int64
}

// Error returns Msg and Offset: "invalid character ']' looking for beginning of value at byte 3".
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

// Decode reads one JSON value (RFC 8259; white space around it allowed) with encoding/json, keeping the
// order of object members: a key given twice keeps its first position and takes its last value, as a Python
// dict does. Numbers with a fraction or an exponent are Floats (beyond float64's range: ±Inf, as Python's
// float() gives), the others Ints with their literal kept. Invalid UTF-8 in a string becomes U+FFFD, as do
// unpaired surrogate escapes. The error, if any, is a *SyntaxError.
func Decode(s string) (Value, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	d := decoder{dec: dec, size: int64(len(s))}
	t, err := d.token()
	if err != nil {
		return Value{}, err
	}
	v, err := d.value(t, 0)
	if err != nil {
		return Value{}, err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := s[end:]
		return Value{}, &SyntaxError{Msg: "unexpected text after the JSON value", Offset: end + int64(len(rest)-len(strings.TrimLeft(rest, " \t\r\n")))}
	}
	return v, nil
}

// decoder builds Values from the tokens of one Decode.
type decoder struct {
	dec  *json.Decoder
	size int64 // the length of the text
}

// token reads the next token; the text ending before the value does is an error too.
func (d *decoder) token() (json.Token, error) {
	t, err := d.dec.Token()
	if err == nil {
		return t, nil
	}
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		msg := syn.Error()
		if strings.HasPrefix(msg, "invalid character ") && strings.HasSuffix(msg, "'") {
			msg += " looking for beginning of object key string" // the one context Decoder.Token leaves out: after '{'
		}
		return nil, &SyntaxError{Msg: msg, Offset: d.dec.InputOffset()}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, &SyntaxError{Msg: "unexpected end of JSON input", Offset: d.size}
	}
	return nil, &SyntaxError{Msg: err.Error(), Offset: d.dec.InputOffset()}
}

// value builds the value that starts with t, at the given depth of nesting.
func (d *decoder) value(t json.Token, depth int) (Value, error) {
	switch t := t.(type) {
	case json.Delim: // '[' or '{': Token returns closing delimiters only where a container ends
		if depth == MaxDepth {
			return Value{}, &SyntaxError{Msg: fmt.Sprintf("more than %d nested arrays and objects", MaxDepth), Offset: d.dec.InputOffset() - 1}
		}
		if t == '[' {
			return d.array(depth + 1)
		}
		return d.object(depth + 1)
	case string:
		return StringValue(t), nil
	case json.Number:
		return number(string(t)), nil
	case bool:
		return BoolValue(t), nil
	}
	return Value{}, nil // null
}

// array reads the elements of an array up to its ']'.
func (d *decoder) array(depth int) (Value, error) {
	var elems []Value
	for {
		t, err := d.token()
		if err != nil {
			return Value{}, err
		}
		if t == json.Delim(']') {
			return ArrayValue(elems), nil
		}
		v, err := d.value(t, depth)
		if err != nil {
			return Value{}, err
		}
		elems = append(elems, v)
	}
}

// object reads the members of an object up to its '}'. The index finds a repeated key without a scan of the
// members, so a text of many keys costs no more than their number.
func (d *decoder) object(depth int) (Value, error) {
	var members []Member
	index := map[string]int{}
	for {
		t, err := d.token()
		if err != nil {
			return Value{}, err
		}
		if t == json.Delim('}') {
			return ObjectValue(members), nil
		}
		key := t.(string) // Token returns a string where a key belongs, or an error
		if t, err = d.token(); err != nil {
			return Value{}, err
		}
		v, err := d.value(t, depth)
		if err != nil {
			return Value{}, err
		}
		if i, seen := index[key]; seen {
			members[i].Value = v
			continue
		}
		index[key] = len(members)
		members = append(members, Member{Key: key, Value: v})
	}
}

// number is the Float or the Int a number literal stands for.
func number(lit string) Value {
	if strings.ContainsAny(lit, ".eE") {
		f, _ := strconv.ParseFloat(lit, 64) // out of range: ±Inf or 0, as Python's float() gives
		return FloatValue(f)
	}
	if lit == "-0" {
		return IntLiteral("0")
	}
	return IntLiteral(lit)
}
