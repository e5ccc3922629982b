package pyjson

import (
	"strings"
	"testing"
)

// decodeRef decodes s by the reference path (scratch stacks, no plan).
func decodeRef(s string) (Value, error) {
	d := decoder{noPlan: true}
	return d.decode(s)
}

// decodePlanned decodes s by the planned path alone and reports whether it
// succeeded (it words no error).
func decodePlanned(s string) (Value, bool) {
	var d decoder
	d.s, d.stop = s, -1
	if !d.prescan(s) {
		return Value{}, false
	}
	var v Value
	end, ok := d.planValue(skipWS(s, 0), &v)
	return v, ok && skipWS(s, end) == len(s)
}

// checkPlan asserts that the planned path decodes exactly the documents the
// reference path decodes, to the same value, and that Decode and a reused
// Decoder give the reference path's value or error text.
func checkPlan(t *testing.T, dec *Decoder, s string) {
	t.Helper()
	want, wantErr := decodeRef(s)
	pv, pok := decodePlanned(s)
	if pok != (wantErr == nil) {
		t.Fatalf("planned path ok=%v for %.60q, reference error %v", pok, s, wantErr)
	}
	if pok && pv.Repr() != want.Repr() {
		t.Fatalf("planned %.80s, reference %.80s", pv.Repr(), want.Repr())
	}
	for _, got := range []func(string) (Value, error){Decode, dec.Decode} {
		v, err := got(s)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("Decode(%.60q) error = %v, want %v", s, err, wantErr)
		}
		if err == nil && v.Repr() != want.Repr() {
			t.Fatalf("Decode(%.60q) = %.80s, want %.80s", s, v.Repr(), want.Repr())
		}
	}
}

func TestPlannedMatchesReference(t *testing.T) {
	var dec Decoder
	for _, s := range []string{
		`[]`, `{}`, `[[]]`, `[{}]`, `{"a":{}}`, ` [ 1 , [ 2 , 3 ] , { } ] `, `"x"`, `1`, ``, ` `,
		`{"a":1,"a":2,"b":[1,{"a":3,"a":[4]}]}`, `{"a":[1,2,{"b":"x\u00e9","b":"y"}],"c":{"d":[[],{}]}}`,
		`["a,b","c]","{d}","\"",",\\"]`, `[1,]`, `[,1]`, `{"a":1,}`, `{,}`, `[1 2]`, `{"a" 1}`, `{"a":}`,
		`[1]]`, `[[1]`, `]`, `}{`, `["unterminated`, `["\`, `[NaN,Infinity,-Infinity]`, "[\"a\x01\"]",
		`{"` + strings.Repeat(`k`, 20) + `":1}`, strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
		`{` + func() string {
			var b strings.Builder
			for i := 0; i < 40; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"k` + string(rune('a'+i%20)) + `":` + string(rune('0'+i%10)))
			}
			return b.String()
		}() + `}`,
	} {
		checkPlan(t, &dec, s)
	}
}

// FuzzPlan checks the planned path against the reference path.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{`[]`, `{"a":[1,2.5e3,"x\u00e9"]}`, `[1,]`, `{"a" 1}`, `{"a":1,"a":{"b":[]}}`, `["]",[`, `[-0.0e+1]`} {
		f.Add(s)
	}
	var dec Decoder
	f.Fuzz(func(t *testing.T, s string) {
		checkPlan(t, &dec, ValidUTF8(s))
	})
}
