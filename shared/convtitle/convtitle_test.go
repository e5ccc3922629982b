package convtitle

import (
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"  \"Deploy A Function\"  ", "Deploy A Function"},
		{"Title: Storage Buckets.", "Storage Buckets"},
		{"TITLE:   `Auth   Setup`!", "Auth Setup"},
		{"First line\nsecond line", "First line"},
		{"'Quoted?'", "Quoted"},
		{"", ""},
		{"   \n  ", ""},
		// Hostile and sloppy model outputs.
		{"🚀 Launch Checklist 🚀", "🚀 Launch Checklist 🚀"},
		{"Deploy — Then Verify", "Deploy — Then Verify"},
		{"\"\"\"Nested \"Quotes\"\"\"\"", "Nested \"Quotes"},
		{"title:", ""},
		{"Title : Spaced Prefix", "Title : Spaced Prefix"},
		{"Title:\"Quoted After Prefix\"", "Quoted After Prefix"},
		{"Line one\r\nLine two", "Line one"},
		{"\n\nSecond Line Only", "Second Line Only"},
		{"Tabs\tand\u00a0spaces   collapse", "Tabs and spaces collapse"},
		{"What went wrong?!...", "What went wrong"},
		{strings.Repeat("word ", 20), "word word word word word word word word word word word word"},
		{strings.Repeat("x", 80), strings.Repeat("x", 60)},
		{"Über Größe Ärger " + strings.Repeat("é", 70), "Über Größe Ärger"},
		{"`code`", "code"},
		{"...", ""},
		{strings.Repeat("word ", 20), "word word word word word word word word word word word word"},
		{strings.Repeat("x", 70), strings.Repeat("x", 60)},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if n := len([]rune(Sanitize(c.in))); n > MaxChars {
			t.Errorf("Sanitize(%q) is %d chars", c.in, n)
		}
	}
}

func TestUserPrompt(t *testing.T) {
	got := UserPrompt("hi", "")
	if got != "User message:\nhi\n\nConversation title:" {
		t.Fatalf("got %q", got)
	}
	got = UserPrompt(strings.Repeat("u", 2000), strings.Repeat("a", 2000))
	if !strings.Contains(got, "\nAgent reply (context only):\n"+strings.Repeat("a", 800)+"\n") ||
		strings.Contains(got, strings.Repeat("u", 1201)) || strings.Contains(got, strings.Repeat("a", 801)) {
		t.Fatalf("limits not applied: %d chars", len(got))
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("Title: \"Hello\"")
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if len([]rune(out)) > MaxChars || strings.ContainsAny(out, "\n\r") || out != strings.TrimSpace(out) {
			t.Fatalf("Sanitize(%q) = %q", s, out)
		}
	})
}
