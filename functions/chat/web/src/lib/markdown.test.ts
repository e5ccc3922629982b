import { describe, expect, it } from "vitest"
import { renderMarkdown } from "./markdown"

function dom(html: string): HTMLElement {
  const div = document.createElement("div")
  div.innerHTML = html
  return div
}

describe("renderMarkdown", () => {
  it("renders code, tables and links", () => {
    const d = dom(renderMarkdown("# Hi\n\n```go\nfmt.Println(1)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://appwrite.io/docs) and `x`"))
    expect(d.querySelector("h1")?.textContent).toBe("Hi")
    expect(d.querySelector("pre code")?.textContent).toBe("fmt.Println(1)\n")
    expect(d.querySelector("pre code")?.className).toBe("language-go")
    expect([...d.querySelectorAll("table td")].map((c) => c.textContent)).toEqual(["1", "2"])
    const a = d.querySelector("a")
    expect(a?.getAttribute("href")).toBe("https://appwrite.io/docs")
    expect(a?.getAttribute("target")).toBe("_blank")
    expect(a?.getAttribute("rel")).toBe("noopener noreferrer nofollow")
  })

  it("keeps model HTML inert", () => {
    const hostile = [
      "<script>window.pwned=1</script>",
      '<img src=x onerror="window.pwned=1">',
      '<a href="javascript:window.pwned=1">click</a>',
      "[md link](javascript:alert(1))",
      '<iframe src="https://evil.example"></iframe>',
      '<svg onload="window.pwned=1"><circle/></svg>',
      '<form action="https://evil.example"><input name=p></form>',
      '<p style="position:fixed;inset:0" onclick="window.pwned=1">cover</p>',
      '<a href="data:text/html,<script>1</script>">d</a>',
    ].join("\n\n")
    const html = renderMarkdown(hostile)
    const d = dom(html)
    expect(d.querySelectorAll("script, iframe, svg, form, style, img").length).toBe(0)
    for (const el of d.querySelectorAll("*")) {
      for (const attr of el.attributes) {
        expect(attr.name.startsWith("on"), `${el.tagName} ${attr.name}`).toBe(false)
        expect(attr.name).not.toBe("style")
      }
    }
    for (const a of d.querySelectorAll("a")) {
      const href = a.getAttribute("href")
      expect(href === null || /^(https?:|mailto:)/.test(href), String(href)).toBe(true)
    }
    expect(d.textContent).toContain("cover")
  })

  it("replaces a remote image with its alt text", () => {
    const d = dom(renderMarkdown("![chart of usage](https://tracker.example/p.png)"))
    expect(d.querySelector("img")).toBeNull()
    expect(d.textContent).toContain("chart of usage")
  })
})
