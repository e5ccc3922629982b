package eventcatalog

import (
	"encoding/json"
	"reflect"
	"testing"
)

func unmarshalPayload(body []byte) (payload, error) {
	var p payload
	err := json.Unmarshal(body, &p)
	return p, err
}

func checkDecodeAsUnmarshal(t *testing.T, body []byte) {
	t.Helper()
	want, werr := unmarshalPayload(body)
	got, gerr := decodePayload(body)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("decode(%q): error %v, encoding/json says %v", body, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decode(%q) = %+v, encoding/json says %+v", body, got, want)
	}
}

var payloadSeeds = []string{
	`{"$id":"r1","$sequence":1,"$tableId":"tickets","$databaseId":"db1","$createdAt":"2026-12-01T10:00:00.000+00:00","$updatedAt":"2026-12-01T10:00:00.000+00:00","$permissions":[],"title":"printer on fire","email":"someone@example.com"}`,
	`{"$id":"f1","bucketId":"b","mimeType":"image/png","sizeOriginal":12,"$createdAt":"x"}`,
	`{"$id":"e1","functionId":"fn","status":"failed","responseStatusCode":500,"duration":0.25,"trigger":"http"}`,
	`{"$id":"u1","status":true,"name":"n"}`,
	` { "$id" : "a" , "nested" : {"$id":"inner","x":[1,{"y":"}"}]}, "$id":"b", "n": -1.5e3 , "t": true, "z": null } `,
	`{"$ID":"upper"}`, `{"$id":null}`, `{"$id":"a","$id":null}`, `{"$id":1}`, `{"$id":"caf\u00e9"}`, `{"$id":"é"}`,
	`{"$i\u0064":"x"}`, `{}`, `[]`, `null`, `"s"`, `{"a":"b"`, `{"$id":"a"} x`, ``, `{"x":"\"}"}`, `{"k":{}}`,
	`{"$tableId":"t","$collectionId":"c"}`, `{"bucketid":"lower"}`, `{"mimeType":"a<b>&"}`, "{\"$id\":\"a\tb\"}",
}

func TestDecodePayloadAsUnmarshal(t *testing.T) {
	for _, s := range payloadSeeds {
		checkDecodeAsUnmarshal(t, []byte(s))
	}
}

// BenchmarkDecodePayload measures the common case, a row: one allocation (the copy of the body the strings are
// cut from) on a plain build. Allocation counts live here, not in a pass/fail test: under -race and a loaded
// machine testing.AllocsPerRun counted 2 once in five runs.
func BenchmarkDecodePayload(b *testing.B) {
	body := []byte(payloadSeeds[0])
	b.ReportAllocs()
	for b.Loop() {
		_, _ = decodePayload(body)
	}
}

func FuzzDecodePayloadAsUnmarshal(f *testing.F) {
	for _, s := range payloadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecodeAsUnmarshal(t, body) })
}
