// Markdown answers as sanitized HTML: marked renders (GitHub-flavoured: code, tables, links), DOMPurify
// removes everything executable. Model output is untrusted: raw HTML in it must stay inert.
import DOMPurify from "dompurify"
import { Marked } from "marked"

const marked = new Marked({ gfm: true, breaks: false, async: false })

// Links open in a new tab without giving it window.opener; only http(s) and mailto targets survive
// (DOMPurify already drops javascript: and data: URLs from href).
const SAFE_LINK = /^(https?:|mailto:)/i

let hooked = false

function installHooks(): void {
  if (hooked) return
  hooked = true
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      const href = node.getAttribute("href") ?? ""
      if (!SAFE_LINK.test(href)) {
        node.removeAttribute("href")
      } else {
        node.setAttribute("target", "_blank")
        node.setAttribute("rel", "noopener noreferrer nofollow")
      }
    }
    if (node.tagName === "IMG") {
      // Images from the model would load remote URLs (a tracking pixel at least): keep the alt text only.
      const alt = node.getAttribute("alt") ?? ""
      node.replaceWith(node.ownerDocument.createTextNode(alt))
    }
  })
}

/** The tags an answer may contain: what marked produces for GFM, nothing interactive. */
const ALLOWED_TAGS = [
  "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
  "input", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul", "span",
]

/**
 * renderMarkdown turns model markdown into HTML that is safe to insert: no script, no event handler, no
 * style, no form, no iframe, no remote image; links are http(s)/mailto and open in a new tab.
 */
export function renderMarkdown(source: string): string {
  installHooks()
  const html = marked.parse(source) as string
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ["href", "title", "alt", "src", "type", "checked", "disabled", "align", "class", "start"],
    ALLOW_DATA_ATTR: false,
    FORBID_ATTR: ["style"],
  })
}
