package eventcatalog

import "encoding/json"

// validJSON reports what json.Valid(b) reports, for the payloads Appwrite sends several times faster:
// encoding/json's scanner calls a state function per byte. It checks the grammar encoding/json accepts
// (RFC 8259: one value between optional spaces, tabs, CRs and LFs; strings of any byte but controls, '"'
// and '\' unescaped, escapes \" \\ \/ \b \f \n \r \t \uXXXX; numbers -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?;
// true, false, null). Nesting deeper than maxScanDepth is left to json.Valid (which refuses beyond 10,000
// levels), so the answer is always encoding/json's (FuzzValidJSONAsValid).
func validJSON(b []byte) bool {
	var stack [maxScanDepth]byte // the open containers, '{' or '['
	depth := 0
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth == maxScanDepth {
				return json.Valid(b)
			}
			stack[depth] = c
			depth++
			i = skipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				depth--
				i++
				break
			}
			if c == '{' {
				if i = objectKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = stringEndValid(b, i+1); i < 0 {
				return false
			}
		case c == '-' || '0' <= c && c <= '9':
			if i = numberEnd(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literalEnd(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literalEnd(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literalEnd(b, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// After a value: close containers, or go on to the next member or element.
		for {
			i = skipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			open := stack[depth-1]
			if b[i] == ',' {
				i = skipSpace(b, i+1)
				if open == '{' {
					if i = objectKey(b, i); i < 0 {
						return false
					}
				}
				break
			}
			if open == '{' && b[i] == '}' || open == '[' && b[i] == ']' {
				depth--
				i++
				continue
			}
			return false
		}
	}
}

// maxScanDepth is how deep validJSON follows nesting itself (Appwrite's resource models nest a few levels).
const maxScanDepth = 64

// objectKey reads `"key" :` at i and returns the index of the member's value (after spaces), or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringEndValid(b, i+1); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// stringEndValid returns the index after the closing quote of the string whose contents start at i, or -1
// if it is not a valid JSON string.
func stringEndValid(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

// numberEnd returns the index after the JSON number starting at i, or -1.
func numberEnd(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsEnd(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// literalEnd returns the index after lit at i, or -1.
func literalEnd(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
