// Markdown answers as a tree of allowed elements. marked renders GitHub-flavoured markdown to HTML; the HTML
// is parsed into an inert document (DOMParser: no script runs, nothing loads) and walked against an allow list
// of tags and attributes. The page renders the tree as React elements (components/Markdown.tsx), so no HTML
// string from the model is ever inserted: model output is untrusted, and raw HTML in it stays inert: no
// script, handler, style, form control, iframe, or remote load.
import { Marked } from "marked"

const marked = new Marked({ gfm: true, breaks: false, async: false })

/** An element of an answer: a tag from TAGS, its allowed attributes and its children. */
export type MdElement = { tag: string; attrs: MdAttrs; children: MdNode[] }
/** A fenced (or indented) code block: its text and the language of its fence ("" when none). */
export type MdCode = { code: string; lang: string }
export type MdNode = string | MdElement | MdCode
export type MdAttrs = { href?: string; title?: string; start?: number; align?: "left" | "center" | "right" }

/** The tags an answer may contain: what marked produces for GFM, nothing interactive. */
const TAGS = new Set([
  "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd", "li",
  "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
])

/** Elements dropped with everything inside them: what runs, loads, styles or takes input. */
const DROPPED = new Set([
  "script", "style", "template", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math",
  "noscript", "noembed", "noframes", "head", "title", "link", "meta", "base", "select", "option", "optgroup",
  "datalist", "textarea", "audio", "video", "source", "track", "canvas", "map", "portal", "dialog",
])

// Links keep only http(s) and mailto targets (resolved as the browser would, so "java\tscript:" is not one).
function safeHref(raw: string): string | undefined {
  try {
    const u = new URL(raw.trim()) // a relative link (no scheme) throws: it has no target on this page
    return u.protocol === "https:" || u.protocol === "http:" || u.protocol === "mailto:" ? u.href : undefined
  } catch {
    return undefined
  }
}

function attrsOf(el: Element): MdAttrs {
  const a: MdAttrs = {}
  const title = el.getAttribute("title")
  if (title) a.title = title
  switch (el.localName) {
    case "a": {
      const href = safeHref(el.getAttribute("href") ?? "")
      if (href) a.href = href
      break
    }
    case "ol": {
      const start = Number(el.getAttribute("start"))
      if (Number.isInteger(start) && start !== 1) a.start = start
      break
    }
    case "td":
    case "th": {
      const align = el.getAttribute("align")
      if (align === "left" || align === "center" || align === "right") a.align = align
      break
    }
  }
  return a
}

function walk(node: Node): MdNode[] {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent ? [node.textContent] : []
  if (node.nodeType !== Node.ELEMENT_NODE) return []
  const el = node as Element
  const tag = el.localName
  if (DROPPED.has(tag)) return []
  if (tag === "img") return el.getAttribute("alt") ? [el.getAttribute("alt") ?? ""] : [] // no remote load: the alt text
  if (tag === "input") return el.getAttribute("type") === "checkbox" ? [el.hasAttribute("checked") ? "☑" : "☐"] : [] // a GFM task
  const children = [...el.childNodes].flatMap(walk)
  if (tag === "pre") {
    const code = el.firstElementChild?.localName === "code" && el.children.length === 1 ? el.firstElementChild : null
    const lang = /(?:^|\s)language-([\w+#.-]{1,32})/.exec(code?.getAttribute("class") ?? "")?.[1] ?? ""
    return [{ code: (code ?? el).textContent ?? "", lang }]
  }
  if (!TAGS.has(tag)) return children // an unknown element (div, form, button, details…): its content only
  return [{ tag, attrs: attrsOf(el), children }]
}

/** parseMarkdown turns model markdown into the allowed tree (see the file comment). */
export function parseMarkdown(source: string): MdNode[] {
  const html = marked.parse(source) as string
  const doc = new DOMParser().parseFromString(`<!doctype html><body>${html}`, "text/html")
  return [...doc.body.childNodes].flatMap(walk)
}

/** isCode tells a code block from an element or text. */
export function isCode(n: MdNode): n is MdCode {
  return typeof n === "object" && "code" in n
}
