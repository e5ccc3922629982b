package keylist_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"appwrite-agent/shared/keylist"
)

var (
	errNo   = errors.New("no keys")
	errBad  = errors.New("bad keys")
	errWeak = errors.New("weak key")
	rules   = keylist.Rules{MaxIDLength: 8, MinBytes: 32, MaxBytes: 32, MaxKeys: 2, NoKeys: errNo, Bad: errBad, Weak: errWeak}
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

const k1, k2 = "0123456789abcdefghijklmnopqrstuv", "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvu"

func ExampleParse() {
	keys, err := keylist.Parse("new:"+b64(k2)+", old:"+base64.RawURLEncoding.EncodeToString([]byte(k1)), rules)
	fmt.Println(len(keys), keys[0].ID, keys[1].ID, err)
	// Output: 2 new old <nil>
}

func TestParseRefusals(t *testing.T) {
	for in, want := range map[string]error{
		"":                               errNo,
		"   ":                            errNo,
		"nocolon":                        errBad,
		"toolongid:" + b64(k1):           errBad,
		"bad id:" + b64(k1):              errBad,
		"a:" + b64(k1) + ",a:" + b64(k2): errBad,
		"a:!!!":                          errBad,
		"a:" + b64(k1) + ",b:" + b64(k1): errBad,
		"a:" + b64(k1) + ",b:" + b64(k2) + ",c:x": errBad,
		"a:" + b64(k1[:31]):                       errWeak,
		"a:" + b64(k1+"w"):                        errWeak,
		"a:" + b64(strings.Repeat("ab", 16)):      errWeak,
		"a:" + b64(string(make([]byte, 32))):      errWeak,
	} {
		if _, err := keylist.Parse(in, rules); !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", in, err, want)
		}
	}
	open := rules
	open.MaxBytes = 0
	if keys, err := keylist.Parse("a:"+b64(k1+k2), open); err != nil || len(keys[0].Bytes) != 64 {
		t.Fatalf("a longer key without an upper bound: %v", err)
	}
}
