package console_test

import (
	"fmt"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/protocol/console"
)

// batch20 is a 20-action call whose first action is a 50-row resource_list
// (each row with subtitle, href, status, 2 metadata entries and 4 fields),
// followed by a 24-point chart and 18 small actions.
func batch20() string {
	var b strings.Builder
	b.WriteString(`[{"type":"resource_list","resourceType":"user","title":"Users","listHref":"/project/64abc/auth/users","projectId":"64abc",` +
		`"columns":[{"key":"email","label":"Email"},{"key":"status","label":"Status"}],"items":[`)
	for i := 0; i < 50; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"resourceId":"user_%d","title":"User Number %d","subtitle":"user%d@example.com","href":"/project/64abc/auth/user/user_%d",`+
			`"status":"verified","metadata":[{"label":"ID","value":"user_%d"},{"label":"Joined","value":"2026-08-0%dT10:00:00Z"}],`+
			`"fields":{"email":"user%d@example.com","status":"verified","emailVerification":true,"logins":%d}}`, i, i, i, i, i, i%9+1, i, i*3)
	}
	b.WriteString(`]},{"type":"chart","title":"Requests (last 24 hours)","unitLabel":"requests","interval":"1h","metrics":[{"metric":"network.requests","points":[`)
	for i := 0; i < 24; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"time":"2026-08-04T%02d:00:00+00:00","value":%d}`, i, i*7)
	}
	b.WriteString(`]}]}`)
	small := []string{
		`{"type":"set_theme","theme":"dark"}`, `{"type":"navigate","path":"/project/64abc/databases","hash":"#card-api"}`,
		`{"type":"open_create","resource":"bucket","projectId":"64abc"}`, `{"type":"open_dialog","dialog":"connect_mcp"}`,
		`{"type":"toast","level":"success","message":"Database created","description":"Main is ready"}`, `{"type":"show_pane","content":"docs"}`,
		`{"type":"toggle_terminal"}`, `{"type":"scroll_to_card","cardId":"card-api-endpoint"}`,
		`{"type":"resource","mutation":"create","resourceType":"database","resourceId":"main","title":"Main","href":"/project/64abc/databases/main","fields":{"type":"tablesdb"}}`,
		`{"type":"refresh","scopes":["databases","tables"]}`,
	}
	for i := 0; i < 18; i++ {
		b.WriteByte(',')
		b.WriteString(small[i%len(small)])
	}
	b.WriteByte(']')
	return b.String()
}

// BenchmarkResultBatch20 validates and encodes a 20-action batch holding a
// 50-row list: the console tool's whole work for one call.
func BenchmarkResultBatch20(b *testing.B) {
	in := batch20()
	if out := console.Result(in); strings.HasPrefix(out, "Error") {
		b.Fatal(out)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		_ = console.Result(in)
	}
}

// BenchmarkValidateBatch20 is the validation alone (no encoding).
func BenchmarkValidateBatch20(b *testing.B) {
	in := batch20()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := console.Validate(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseBatch20 reads the envelope back as the Console does (test-side cost).
func BenchmarkParseBatch20(b *testing.B) {
	out := console.Result(batch20())
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if env := consoleparse.ParseConsoleEnvelope(out); env == nil {
			b.Fatal("nil")
		}
	}
}
