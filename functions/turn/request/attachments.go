package request

import (
	"mime"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Attachment kinds.
const (
	KindImage = "image"
	KindText  = "text"
	KindFile  = "file"
)

// MaxInlineTextChars is how much of a text attachment goes into the model input.
const MaxInlineTextChars = 8000

var imageMimes = map[string]bool{"image/png": true, "image/jpeg": true, "image/jpg": true, "image/gif": true, "image/webp": true}

var textMimes = map[string]bool{
	"application/json": true, "application/ld+json": true, "application/xml": true, "application/javascript": true,
	"application/x-javascript": true, "application/typescript": true, "application/x-typescript": true,
	"application/yaml": true, "application/x-yaml": true, "application/toml": true, "application/sql": true,
	"application/graphql": true, "application/x-sh": true, "application/x-httpd-php": true, "application/x-php": true,
	"application/xhtml+xml": true, "application/csv": true, "application/x-ndjson": true, "image/svg+xml": true,
}

var textExtensions = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`.txt .md .markdown .rst .csv .tsv .json .jsonl .ndjson .yaml .yml .toml .ini .cfg .conf
		.env .lock .xml .html .htm .css .scss .sass .less .js .mjs .cjs .jsx .ts .tsx .vue .svelte .py .rb .php .go .rs
		.java .kt .kts .swift .dart .c .h .cc .cpp .hpp .cs .m .sh .bash .zsh .fish .ps1 .sql .graphql .gql .proto .svg
		.plist .gradle .properties .dockerfile .makefile .mk .tf .hcl .r .lua .pl .ex .exs .erl .hs .scala .clj .log .diff .patch`) {
		textExtensions[e] = true
	}
}

func normalizeMime(m string) string {
	m = strings.TrimSpace(m)
	if i := strings.Index(m, ";"); i >= 0 {
		m = m[:i]
	}
	m = strings.ToLower(strings.TrimSpace(m))
	if m == "application/octet-stream" {
		return ""
	}
	return m
}

func guessMime(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ext == "" {
		return "application/octet-stream"
	}
	if m := normalizeMime(mime.TypeByExtension(ext)); m != "" {
		return m
	}
	if textExtensions[ext] {
		return "text/plain"
	}
	return "application/octet-stream"
}

func kindOf(m, name, hint string) string {
	if imageMimes[m] {
		return KindImage
	}
	ext := strings.ToLower(path.Ext(name))
	if ext == ".wasm" || ext == ".svgz" {
		return KindFile
	}
	if strings.HasPrefix(m, "text/") || textMimes[m] || textExtensions[ext] || strings.EqualFold(strings.TrimSpace(hint), KindText) {
		return KindText
	}
	return KindFile
}

// DefaultPrompt is the text sent when the message is empty and files are attached.
const DefaultPrompt = "Please review the attached file(s)."

// HumanContent builds the user's model input as the reference does: the message (or DefaultPrompt), then
// "### Attachments" with one note per file; text files inlined in a fenced block cut to
// MaxInlineTextChars; images returned as data: URLs for image parts.
func HumanContent(message string, atts []Attachment, encode func([]byte) string) (string, []string) {
	text := strings.TrimSpace(message)
	if text == "" {
		text = DefaultPrompt
	}
	if len(atts) == 0 {
		return text, nil
	}
	var b strings.Builder
	b.WriteString(text)
	b.WriteString("\n\n### Attachments\n")
	var images []string
	for _, a := range atts {
		switch a.Kind {
		case KindImage:
			m := a.Mime
			if m == "image/jpg" {
				m = "image/jpeg"
			}
			b.WriteString("- image `" + a.Name + "` (id=`" + a.ID + "`, " + a.Mime + ", " + itoa(len(a.Data)) + " bytes)\n")
			images = append(images, "data:"+m+";base64,"+encode(a.Data))
		case KindText:
			b.WriteString("- text file `" + a.Name + "` (id=`" + a.ID + "`, " + a.Mime + ", " + itoa(len(a.Data)) + " bytes):\n")
			body := strings.ToValidUTF8(string(a.Data), string(utf8.RuneError))
			if r := []rune(body); len(r) > MaxInlineTextChars {
				body = string(r[:MaxInlineTextChars]) + "…"
			}
			b.WriteString("```\n" + body + "\n```\n")
		default:
			b.WriteString("- file `" + a.Name + "` (id=`" + a.ID + "`, " + a.Mime + ", " + itoa(len(a.Data)) +
				" bytes) was attached. Binary contents are available only for the current request.\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), images
}

func itoa(n int) string { return strconv.Itoa(n) }
