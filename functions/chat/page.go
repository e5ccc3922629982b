package handler

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// dist is the built page (functions/chat/web/dist, written by scripts/stage with npm). A clean clone holds
// only dist/.keep, and the page answers 503 until it is built.
//
//go:embed all:web/dist
var dist embed.FS

// csp is the page's Content-Security-Policy (docs/chat.md, "Serving the page"); connectSrc is added.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"connect-src %s; frame-ancestors 'none'; base-uri 'self'; object-src 'none'; form-action 'self'"

// notBuilt is the 503 page of a function whose page was not built.
const notBuilt = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chat page not built</title></head>
<body><h1>The chat page was not built</h1><p>This deployment of the chat function has no page assets: stage it
with <code>scripts/stage</code>, which builds <code>functions/chat/web</code> with npm, and deploy again.
The API under <code>/api/</code> works without it.</p></body></html>`

// builtSite is the embedded web/dist folder.
func builtSite() fs.FS {
	site, err := fs.Sub(dist, "web/dist")
	if err != nil {
		panic("chat: the embedded web/dist is missing: " + err.Error()) // cannot happen: go:embed checked it
	}
	return site
}

// page serves the single-page app in site: files of dist as they are, every other GET path index.html
// with a <base href> that makes relative URLs resolve to the function's root.
func page(rt openruntimes.Context, cfg Config, site fs.FS) openruntimes.Response {
	req := rt.Req
	p := req.Path
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	clean := path.Clean("/" + p)
	head := req.Method == http.MethodHead
	if clean != "/" && clean != "/index.html" {
		if b, err := fs.ReadFile(site, clean[1:]); err == nil && path.Base(clean) != ".keep" {
			cache := "no-cache"
			if strings.HasPrefix(clean, "/assets/") {
				cache = "public, max-age=31536000, immutable"
			}
			ct := mime.TypeByExtension(path.Ext(clean))
			if ct == "" {
				ct = "application/octet-stream"
			}
			return bodyOf(head, b, 200, map[string]string{"content-type": ct, "cache-control": cache, "x-content-type-options": "nosniff"})
		}
	}
	index, err := fs.ReadFile(site, "index.html")
	hdr := map[string]string{
		"content-type": "text/html; charset=utf-8", "cache-control": "no-cache", "x-content-type-options": "nosniff",
		"referrer-policy": "no-referrer", "content-security-policy": strings.Replace(csp, "%s", connectSrc(cfg), 1),
	}
	if err != nil {
		return bodyOf(head, []byte(notBuilt), http.StatusServiceUnavailable, hdr)
	}
	return bodyOf(head, withBase(index, baseHref(p)), http.StatusOK, hdr)
}

func bodyOf(head bool, b []byte, status int, hdr map[string]string) openruntimes.Response {
	if head {
		b = nil
	}
	return openruntimes.Response{Body: b, StatusCode: status, Headers: hdr}
}

// connectSrc allows the page's own origin and any https/wss origin (Appwrite, MCP servers during their
// OAuth flow); with an http:// Appwrite endpoint (local development) also http and ws.
func connectSrc(cfg Config) string {
	s := "'self' https: wss:"
	if strings.HasPrefix(cfg.PublicEndpoint, "http://") {
		s += " http: ws:"
	}
	return s
}

// baseHref is "./" for a path of one segment and one "../" per further directory level.
func baseHref(p string) string {
	depth := strings.Count(strings.TrimPrefix(p, "/"), "/")
	if depth == 0 {
		return "./"
	}
	return strings.Repeat("../", depth)
}

// withBase inserts <base href="…"> right after <head> (or at the start when there is no <head>).
func withBase(index []byte, href string) []byte {
	tag := `<base href="` + href + `">`
	s := string(index)
	lower := strings.ToLower(s)
	if i := strings.Index(lower, "<head"); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j >= 0 {
			k := i + j + 1
			return []byte(s[:k] + tag + s[k:])
		}
	}
	return []byte(tag + s)
}
