package request

import (
	"strings"
	"testing"
)

func TestKinds(t *testing.T) {
	cases := []struct{ mime, name, hint, kind string }{
		{"image/png", "a.png", "", KindImage}, {"image/jpg", "a", "", KindImage}, {"image/bmp", "a.bmp", "image", KindFile},
		{"text/csv", "a.csv", "", KindText}, {"application/json", "a", "", KindText}, {"", "a.go", "", KindText},
		{"application/wasm", "a.wasm", "text", KindFile}, {"application/pdf", "a.pdf", "", KindFile}, {"application/pdf", "a.pdf", "text", KindText},
	}
	for _, c := range cases {
		if got := kindOf(normalizeMime(c.mime), c.name, c.hint); got != c.kind {
			t.Errorf("kindOf(%q, %q, %q) = %q, want %q", c.mime, c.name, c.hint, got, c.kind)
		}
	}
}

func TestParseKeepsLast12AndFirstTurn(t *testing.T) {
	body := `{"message":" hi ","history":[` + strings.Repeat(`{"role":"user","content":"x"},`, 12) + `{"role":"Assistant","content":"  "}]}`
	turn, err := Parse([]byte(body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Message != "hi" || len(turn.History) != 11 || turn.FirstTurn {
		t.Fatalf("%+v", turn)
	}
	turn, _ = Parse([]byte(`{"message":"m","history":[{"role":"user","content":" "}],"unknown":1}`), Limits{})
	if !turn.FirstTurn {
		t.Fatal("empty kept history must be a first turn")
	}
}

func TestTextAttachmentIsCut(t *testing.T) {
	text, imgs := HumanContent("", []Attachment{{ID: "i", Name: "a.txt", Mime: "text/plain", Kind: KindText, Data: []byte(strings.Repeat("é", 9000))}}, nil)
	if imgs != nil || !strings.Contains(text, strings.Repeat("é", 8000)+"…\n```") || strings.Contains(text, strings.Repeat("é", 8001)) {
		t.Fatalf("len %d", len(text))
	}
}
