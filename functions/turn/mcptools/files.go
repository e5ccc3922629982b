package mcptools

import (
	"encoding/base64"
	"strings"

	"appwrite-agent/functions/turn/request"
)

// resolveFileArgument rewrites the "file" argument when it names an attachment of the turn (by id,
// then name): the hosted MCP server takes no paths, so the bytes go inline as
// {"filename","content" (base64),"encoding":"base64","mime_type"?}. URLs, paths, objects and unknown
// names are left as they are.
func resolveFileArgument(args *object, atts []request.Attachment) *object {
	v, ok := args.get("file")
	if !ok {
		return args
	}
	s, isStr := v.(string)
	if !isStr {
		return args
	}
	raw := strings.TrimSpace(s)
	if raw == "" || strings.HasPrefix(raw, "{") || strings.Contains(raw, "://") || strings.Contains(raw, "/") {
		return args
	}
	for _, a := range atts {
		if a.ID != raw && a.Name != raw {
			continue
		}
		f := newObject()
		name := a.Name
		if name == "" {
			name = raw
		}
		f.set("filename", name)
		f.set("content", base64.StdEncoding.EncodeToString(a.Data))
		f.set("encoding", "base64")
		if m := strings.TrimSpace(a.Mime); m != "" {
			f.set("mime_type", m)
		}
		out := args.clone()
		out.set("file", f)
		return out
	}
	return args
}
