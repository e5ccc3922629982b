package mcptools

import (
	"encoding/base64"
	"strings"

	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/pyjson"
)

// resolveFileArgument rewrites the "file" argument when it names an attachment of the turn (by id,
// then name): the hosted MCP server takes no paths, so the bytes go inline as
// {"filename","content" (base64),"encoding":"base64","mime_type"?}. URLs, paths, objects and unknown
// names are left as they are.
func resolveFileArgument(args pyjson.Value, atts []request.Attachment) pyjson.Value {
	v, ok := args.Get("file")
	if !ok || v.Kind() != pyjson.String {
		return args
	}
	raw := strings.TrimSpace(v.Text())
	if raw == "" || strings.HasPrefix(raw, "{") || strings.Contains(raw, "://") || strings.Contains(raw, "/") {
		return args
	}
	for _, a := range atts {
		if a.ID != raw && a.Name != raw {
			continue
		}
		f := pyjson.NewObject()
		name := a.Name
		if name == "" {
			name = raw
		}
		f.Set("filename", pyjson.StringValue(name))
		f.Set("content", pyjson.StringValue(base64.StdEncoding.EncodeToString(a.Data)))
		f.Set("encoding", pyjson.StringValue("base64"))
		if m := strings.TrimSpace(a.Mime); m != "" {
			f.Set("mime_type", pyjson.StringValue(m))
		}
		out := args.Clone()
		out.Set("file", f)
		return out
	}
	return args
}
