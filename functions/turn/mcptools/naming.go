package mcptools

import (
	"strconv"
	"strings"
)

// MaxToolName is the longest function name the model APIs accept.
const MaxToolName = 64

// safeName reduces s to the characters a function name may hold ([A-Za-z0-9_-], others become _),
// at most MaxToolName of them; "tool" when nothing is left.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > MaxToolName {
		out = out[:MaxToolName]
	}
	if strings.Trim(out, "_-") == "" {
		return "tool"
	}
	return out
}

// namer hands out the names the model sees: the server's own name when it is safe and free (so the
// prompts' appwrite_search_tools and appwrite_call_tool keep their names), else "<connection id>_<name>",
// else that with a numeric suffix. taken holds the built-in tools' names and every name handed out.
type namer struct{ taken map[string]bool }

func newNamer(builtin map[string]bool) *namer {
	n := &namer{taken: map[string]bool{}}
	for k := range builtin {
		n.taken[k] = true
	}
	return n
}

func (n *namer) name(connID, tool string) string {
	base := safeName(tool)
	if base == tool && !n.taken[base] {
		n.taken[base] = true
		return base
	}
	prefixed := safeName(connID + "_" + tool)
	if !n.taken[prefixed] {
		n.taken[prefixed] = true
		return prefixed
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		cand := prefixed
		if len(cand)+len(suffix) > MaxToolName {
			cand = cand[:MaxToolName-len(suffix)]
		}
		cand += suffix
		if !n.taken[cand] {
			n.taken[cand] = true
			return cand
		}
	}
}
