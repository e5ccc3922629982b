package eventcatalog

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `[1,2,3]`, `{"a":[1,{"b":null}],"c":"d"}`, `"s"`, `0`, `-0`, `01`, `1.`, `1.5`,
	`1e5`, `1E+5`, `1e-`, `-`, `--1`, `.5`, `true`, `tru`, `truex`, `false`, `null`, `nul`, `{"a"}`, `{"a":}`,
	`{,}`, `[,]`, `[1,]`, `{"a":1,}`, `{"a":1 "b":2}`, `{1:2}`, `"\u00e9"`, `"\u00g9"`, `"\x"`, "\"a\tb\"",
	"\"\xff\"", `"\/\b\f\n\r\t\"\\"`, `{"a":1}}`, `[1]]`, `[}`, `{]`, ` {"a" : [ 1 , 2 ] } `, "\t\r\n[]\n",
	`{"$id":"r1","$sequence":1,"$permissions":[],"title":"printer on fire"}`, `"abc`, `[`, `{`, `{"a":"b"`,
	strings.Repeat("[", 63) + strings.Repeat("]", 63), strings.Repeat("[", 64) + strings.Repeat("]", 64),
	strings.Repeat("[", 65) + strings.Repeat("]", 65), strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), `1 2`, `[1 2]`, `"a" "b"`, `{"a":1}x`,
}

func TestValidJSONAsValid(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.80q) = %v, json.Valid says %v", s, got, want)
		}
	}
}

func FuzzValidJSONAsValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	body := []byte(payloadSeeds[0])
	for _, bench := range []struct {
		name  string
		valid func([]byte) bool
	}{{"validJSON", validJSON}, {"json.Valid", json.Valid}} {
		b.Run(bench.name, func(b *testing.B) {
			for b.Loop() {
				bench.valid(body)
			}
		})
	}
}
