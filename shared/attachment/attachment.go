// Package attachment holds the engine's attachment limits and checks, shared by turn (which reads
// attachments into the model input) and chat (which refuses them before starting a turn): the safe file
// name, the lenient base64 decoding of the reference engine, and the per-file size limit with its message.
package attachment

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// MaxExecutionBody is the largest execution body Appwrite takes, so the largest turn request (POST
// /v1/functions/{id}/executions: `body` is `new Text(10485760, 0)`, appwrite/appwrite
// src/Appwrite/Platform/Modules/Functions/Http/Executions/Create.php, 1.9.6).
const MaxExecutionBody = 10_485_760

// Defaults of ATTACHMENTS_MAX_PER_MESSAGE and ATTACHMENTS_MAX_BYTES: the count is the reference's; the size
// is lowered from its 10,000,000 so that one attachment at the limit, base64-encoded (4 characters for 3
// bytes: 10,000,000 characters), fits in MaxExecutionBody with room for the message, history and memories.
const (
	DefaultMaxPerMessage = 8
	DefaultMaxBytes      = 7_500_000
)

// Problem is a refused attachment: the HTTP status (413 or 422) and the engine's message.
type Problem struct {
	Status  int
	Message string
}

// TooMany is the refusal of more than max attachments in one message.
func TooMany(max int) *Problem {
	return &Problem{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("Too many attachments (max %d)", max)}
}

// TooLarge is the refusal of a file over maxBytes decoded.
func TooLarge(name string, maxBytes int) *Problem {
	return &Problem{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("Attachment '%s' exceeds max size (%d bytes)", name, maxBytes)}
}

// Decode checks and decodes one attachment's base64 content (name is already sanitized): missing,
// far too long, invalid, empty or over maxBytes decoded are refused with the engine's messages.
func Decode(name, contentBase64 string, maxBytes int) ([]byte, *Problem) {
	if strings.TrimSpace(contentBase64) == "" {
		return nil, &Problem{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("Attachment '%s' missing content_base64", name)}
	}
	if limit := base64.StdEncoding.EncodedLen(maxBytes) + 4; len(contentBase64) > limit*2 {
		// Far too long to be within the limit even with whitespace: refuse before decoding.
		return nil, TooLarge(name, maxBytes)
	}
	data, ok := DecodeLenient(contentBase64)
	if !ok {
		return nil, &Problem{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("Attachment '%s' has invalid base64", name)}
	}
	if len(data) == 0 {
		return nil, &Problem{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("Attachment '%s' is empty", name)}
	}
	if len(data) > maxBytes {
		return nil, TooLarge(name, maxBytes)
	}
	return data, nil
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]`) })

// SanitizeName reduces a client file name to a safe base name: characters outside [A-Za-z0-9._-] become
// "_", leading and trailing "." and "_" are removed, at most 180 characters, "file" when nothing is left.
func SanitizeName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = unsafeName().ReplaceAllString(name, "_")
	name = strings.Trim(name, "._")
	if len(name) > 180 {
		name = name[:180]
	}
	if name == "" {
		return "file"
	}
	return name
}

// DecodeLenient decodes standard or URL-safe base64, with or without padding, ignoring whitespace and a
// data: URL prefix (the reference decodes with validate=False).
func DecodeLenient(s string) ([]byte, bool) {
	if strings.HasPrefix(s, "data:") {
		if i := strings.Index(s, ","); i >= 0 {
			s = s[i+1:]
		}
	}
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}
