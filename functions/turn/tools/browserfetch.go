package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"appwrite-agent/shared/pyjson"
)

// browser_fetch limits, as in the reference (text 14000 characters, 40 links, a bot-wall note under 80
// characters with a 500-character snippet), plus the most HTML we read and parse.
const (
	BrowserTextLimit    = 14_000
	BrowserMaxLinks     = 40
	BrowserMinText      = 80
	BrowserSnippetChars = 500
	BrowserMaxBytes     = 2 << 20
	// browserLinksBudget bounds the ### Links section inside BrowserTextLimit.
	browserLinksBudget = 4_000
	browserLabelChars  = 100
	browserMaxElements = 30_000
	browserUserAgent   = "Mozilla/5.0 (compatible; AppwriteAgent/1.0; +https://appwrite.io; browser_fetch)"
	browserAccept      = "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"
)

// BrowserFetch is the browser_fetch tool without a browser: the page is fetched through the SSRF-safe
// client, the main content is extracted (go-readability, Mozilla Readability's algorithm), turned into
// Markdown (html-to-markdown) with navigation, scripts and other chrome dropped, and followed by a
// "### Links" section. Results are cached briefly per URL.
type BrowserFetch struct {
	// Web is the SSRF policy.
	Web Web
	// Cache is the result cache (none when nil).
	Cache *PageCache
}

// Name implements toolapi.Tool.
func (BrowserFetch) Name() string { return "browser_fetch" }

// Description implements toolapi.Tool.
func (BrowserFetch) Description() string {
	return "Read a public web page (https:// only) as clean Markdown: the main content first, without navigation, " +
		"scripts or ads, then a '### Links' list of the page's links (label → URL) you can follow with another " +
		"browser_fetch. Use it for articles, docs pages and search results. JavaScript is not run, so pages that " +
		"only render in a browser come back nearly empty (you get a short note and a snippet). Do not fetch the " +
		"same URL twice in a turn."
}

// Parameters implements toolapi.Tool.
func (BrowserFetch) Parameters() json.RawMessage {
	return schema([][2]string{{"url", prop("string", "The https:// URL of the page.", "")}}, "url")
}

// Run implements toolapi.Tool.
func (b BrowserFetch) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		URL string `json:"url"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	f := newFetcher(b.Web)
	u, err := f.checkURL(a.URL)
	if err != nil {
		return "Error: " + err.Error(), nil
	}
	key := b.Web.policyKey() + "\x00" + u.String()
	if b.Cache != nil {
		if text, ok := b.Cache.Get(key); ok {
			return text, nil
		}
	}
	p, err := f.get(ctx, fetchReq{url: u.String(), accept: browserAccept, userAgent: browserUserAgent, limit: BrowserMaxBytes,
		onRedirectBlocked: func(host string, _ error) error {
			return &policyError{fmt.Sprintf("redirect landed on blocked host %s", pyjson.ReprString(host))}
		}})
	if err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return "Error: " + pe.msg, nil
		}
		return "Error fetching URL in browser: " + err.Error(), nil
	}
	out := fmt.Sprintf("status=%d final_url=%s host=%s\n\n", p.status, p.finalURL, p.finalURL.Hostname()) + renderPage(ctx, p)
	if b.Cache != nil && p.status < 500 {
		b.Cache.Put(key, out)
	}
	return out, nil
}

// renderPage turns a fetched page into the tool's body text.
func renderPage(ctx context.Context, p *page) string {
	mt, cs := mediaType(p.contentType)
	if mt == "" {
		mt, _ = mediaType(http.DetectContentType(p.body))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		r, err := charset.NewReader(bytes.NewReader(p.body), p.contentType)
		if err != nil {
			r = bytes.NewReader(p.body)
		}
		doc, err := html.Parse(r)
		if err != nil {
			return "Error: the page's HTML could not be parsed: " + err.Error()
		}
		return readablePage(ctx, doc, p.finalURL, p.truncated)
	case isTextLike(mt):
		text := strings.TrimSpace(decodeText(p.body, cs))
		if p.truncated {
			text += "\n\n…[page cut at 2 MiB]"
		}
		return capText(text, BrowserTextLimit)
	default:
		return fmt.Sprintf("(binary or non-text content-type %s; not a readable page. Use http_get for raw data.)", pyjson.ReprString(mt))
	}
}

// readablePage extracts the main content as Markdown, then the links section.
func readablePage(ctx context.Context, doc *html.Node, pageURL *url.URL, truncated bool) string {
	title := strings.TrimSpace(textOf(findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title })))
	root := mainRoot(doc)
	links := collectLinks(root, pageURL)
	plain := collapseSpace(visibleText(root))

	content := ""
	parser := readability.NewParser()
	parser.MaxElemsToParse = browserMaxElements
	if art, err := parser.ParseDocument(doc, pageURL); err == nil && art.Node != nil {
		if t := art.Title(); t != "" {
			title = t
		}
		content = toMarkdown(ctx, art.Node, pageURL)
	}
	if utf8.RuneCountInString(collapseSpace(content)) < 200 && utf8.RuneCountInString(plain) > utf8.RuneCountInString(collapseSpace(content)) {
		// Readability found no article (a short page, a listing, a docs index): use the cleaned main area.
		content = toMarkdown(ctx, root, pageURL)
	}
	content = strings.TrimSpace(content)
	if utf8.RuneCountInString(collapseSpace(content)) < BrowserMinText {
		body := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
		if body == nil {
			body = doc
		}
		snippet, _ := cutRunes(collapseSpace(visibleText(body)), BrowserSnippetChars)
		return "Page rendered little readable text (possible bot wall, login page or a page that needs JavaScript, " +
			"which this fetch does not run). Snippet:\n" + snippet
	}
	if title != "" && !strings.HasPrefix(content, "# ") {
		content = "# " + title + "\n\n" + content
	}
	if truncated {
		content += "\n\n…[page cut at 2 MiB before extraction]"
	}
	linksText := ""
	if len(links) > 0 {
		var lb strings.Builder
		lb.WriteString("\n\n### Links\n")
		for _, l := range links {
			line := "- " + l[0] + " → " + l[1] + "\n"
			if lb.Len()+len(line) > browserLinksBudget {
				break
			}
			lb.WriteString(line)
		}
		linksText = strings.TrimRight(lb.String(), "\n")
	}
	return capText(content, BrowserTextLimit-utf8.RuneCountInString(linksText)) + linksText
}

// capText cuts text to limit characters, marking the cut.
func capText(text string, limit int) string {
	const mark = "\n\n…[truncated]"
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	cut, _ := cutRunes(text, max(0, limit-utf8.RuneCountInString(mark)))
	return strings.TrimRight(cut, " \n") + mark
}

// noise says whether an element is page chrome or not content.
func noise(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return n.Type == html.CommentNode
	}
	switch n.DataAtom {
	case atom.Header:
		// A page banner (a header directly in body) is chrome; an article's header holds its title.
		return n.Parent != nil && n.Parent.DataAtom == atom.Body
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Nav, atom.Footer, atom.Aside,
		atom.Form, atom.Iframe, atom.Svg, atom.Canvas, atom.Button, atom.Select, atom.Dialog, atom.Object,
		atom.Embed, atom.Img, atom.Picture, atom.Video, atom.Audio, atom.Link, atom.Meta, atom.Input, atom.Textarea:
		return true
	}
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(a.Val, "true") {
				return true
			}
		case "role":
			switch strings.ToLower(a.Val) {
			case "navigation", "banner", "contentinfo", "complementary", "search", "dialog":
				return true
			}
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

func findFirst(n *html.Node, pred func(*html.Node) bool) *html.Node {
	if n == nil {
		return nil
	}
	if pred(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, pred); f != nil {
			return f
		}
	}
	return nil
}

// mainRoot is the page's main area: main, article, [role=main] or #main-content, else body.
func mainRoot(doc *html.Node) *html.Node {
	for _, pred := range []func(*html.Node) bool{
		func(n *html.Node) bool { return n.DataAtom == atom.Main },
		func(n *html.Node) bool { return strings.EqualFold(attr(n, "role"), "main") },
		func(n *html.Node) bool { return attr(n, "id") == "main-content" },
		func(n *html.Node) bool { return n.DataAtom == atom.Article },
		func(n *html.Node) bool { return n.DataAtom == atom.Body },
	} {
		if n := findFirst(doc, func(n *html.Node) bool { return n.Type == html.ElementNode && pred(n) }); n != nil {
			return n
		}
	}
	return doc
}

// visibleText is the text of n without noise elements.
func visibleText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
			return
		}
		if noise(n) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	if n != nil {
		walk(n)
	}
	return b.String()
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// collectLinks lists the links of the main area (noise dropped): absolute http(s) URLs, not the page
// itself, each once, labels of at least 3 characters cut to 100, at most BrowserMaxLinks.
func collectLinks(root *html.Node, pageURL *url.URL) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	self := *pageURL
	self.Fragment = ""
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if len(out) >= BrowserMaxLinks {
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.A {
			href := strings.TrimSpace(attr(n, "href"))
			label := collapseSpace(textOf(n))
			if label == "" {
				label = collapseSpace(attr(n, "title") + " " + attr(n, "aria-label"))
			}
			if u, err := pageURL.Parse(href); err == nil && href != "" && (u.Scheme == "http" || u.Scheme == "https") {
				u.Fragment, u.RawFragment = "", ""
				abs := u.String()
				if utf8.RuneCountInString(label) >= 3 && abs != self.String() && !seen[abs] {
					seen[abs] = true
					label, cut := cutRunes(label, browserLabelChars)
					if cut {
						label += "…"
					}
					out = append(out, [2]string{label, abs})
				}
			}
			return
		}
		if noise(n) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// cloneClean copies n without noise elements, with link targets made absolute against pageURL.
func cloneClean(n *html.Node, pageURL *url.URL) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace, Attr: append([]html.Attribute(nil), n.Attr...)}
	if c.Type == html.DocumentNode || c.DataAtom == atom.Body || c.DataAtom == atom.Html {
		// Convert the area as a fragment.
		c = &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"}
	}
	if c.DataAtom == atom.A {
		for i, a := range c.Attr {
			if strings.EqualFold(a.Key, "href") {
				if u, err := pageURL.Parse(strings.TrimSpace(a.Val)); err == nil {
					c.Attr[i].Val = u.String()
				}
			}
		}
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if noise(ch) {
			continue
		}
		c.AppendChild(cloneClean(ch, pageURL))
	}
	return c
}

// toMarkdown converts an HTML subtree to Markdown with absolute links; images are dropped first.
func toMarkdown(ctx context.Context, n *html.Node, pageURL *url.URL) string {
	clean := cloneClean(n, pageURL)
	md, err := htmltomarkdown.ConvertNode(clean, converter.WithDomain(pageURL.Scheme+"://"+pageURL.Host), converter.WithContext(ctx))
	if err != nil {
		return collapseSpace(visibleText(clean))
	}
	return string(md)
}
