package eventcatalog

import (
	"encoding/json"
	"strings"
)

// decodePayload decodes the fields of payload from an Appwrite resource model, as json.Unmarshal(body, &p)
// does, with one allocation in the common case: body is valid JSON (validJSON: json.Valid's answer, faster),
// a top-level object whose keys are plain ASCII and whose catalog fields are strings of printable ASCII
// without escapes, or null. Those strings are cut out of one copy of the body. Anything else (a key that
// matches a field only case-insensitively, as encoding/json also accepts; a numeric or boolean field such
// as sizeOriginal or status; escapes; non-ASCII; a wrong type, which is an error) goes through
// json.Unmarshal, so the result and the error are always encoding/json's (FuzzDecodePayloadAsUnmarshal).
func decodePayload(body []byte) (payload, error) {
	var p payload // on the stack: only the fallback's q escapes (into encoding/json)
	if scanPayload(body, &p) {
		return p, nil
	}
	var q payload
	err := json.Unmarshal(body, &q)
	return q, err
}

// payloadString maps the JSON names of payload's string fields to the fields.
func payloadString(p *payload, key string) *string {
	switch key {
	case "$id":
		return &p.ID
	case "$createdAt":
		return &p.CreatedAt
	case "$updatedAt":
		return &p.UpdatedAt
	case "$databaseId":
		return &p.DatabaseID
	case "$tableId":
		return &p.TableID
	case "$collectionId":
		return &p.CollectionID
	case "bucketId":
		return &p.BucketID
	case "mimeType":
		return &p.MimeType
	case "functionId":
		return &p.FunctionID
	case "resourceId":
		return &p.ResourceID
	case "resourceType":
		return &p.ResourceType
	case "deploymentId":
		return &p.DeploymentID
	case "trigger":
		return &p.Trigger
	}
	return nil
}

// payloadFieldNames are the JSON names of every payload field: a key equal to one of them but for case
// is decoded into it by encoding/json, which the scan leaves to encoding/json.
var payloadFieldNames = [...]string{"$id", "$createdAt", "$updatedAt", "$databaseId", "$tableId", "$collectionId",
	"bucketId", "mimeType", "sizeOriginal", "functionId", "resourceId", "resourceType", "deploymentId", "trigger",
	"status", "responseStatusCode", "duration"}

// scanPayload is decodePayload's fast path; false means "use encoding/json" (p may be partly filled).
func scanPayload(body []byte, p *payload) bool {
	if !validJSON(body) {
		return false
	}
	var s string // body as a string, made when the first field is found
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if body[i] == '}' {
		return true
	}
	for {
		// A key: valid JSON guarantees a string here.
		start := i + 1
		end, plain := stringEnd(body, start)
		if !plain {
			return false
		}
		key := body[start:end]
		i = skipSpace(body, end+1) // at ':'
		i = skipSpace(body, i+1)   // at the value
		field := payloadString(p, string(key))
		if field == nil {
			for _, name := range payloadFieldNames {
				if len(name) == len(key) && strings.EqualFold(name, string(key)) {
					return false
				}
			}
			i = skipValue(body, i)
		} else {
			switch body[i] {
			case '"':
				vend, plain := stringEnd(body, i+1)
				if !plain {
					return false
				}
				if s == "" {
					s = string(body)
				}
				*field = s[i+1 : vend]
				i = vend + 1
			case 'n': // null leaves the field as it is, as in encoding/json
				i += len("null")
			default:
				return false
			}
		}
		i = skipSpace(body, i)
		if body[i] == '}' {
			return true
		}
		i = skipSpace(body, i+1) // after ','
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the JSON string starting at i (after its opening
// quote), and whether the string is plain: printable ASCII without escapes.
func stringEnd(b []byte, i int) (int, bool) {
	plain := true
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i, plain
		case c == '\\':
			plain = false
			i++ // the escaped character (valid JSON: there is one)
		case c < 0x20 || c > 0x7e:
			plain = false
		}
	}
	return i, false
}

// skipValue returns the index just after the valid JSON value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i+1)
		return end + 1
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i, _ = stringEnd(b, i+1)
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) {
		i++
	}
	return i
}
