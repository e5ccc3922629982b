import { renderToStaticMarkup } from "react-dom/server"
import { describe, expect, it } from "vitest"
import { Markdown } from "../components/Markdown"
import type { ChatAPI } from "./api"
import { isCode, parseMarkdown } from "./markdown"
import { SessionContext } from "./session"

const session = { api: {} as ChatAPI, toast: () => undefined, fail: () => undefined }

function dom(text: string): HTMLElement {
  const div = document.createElement("div")
  div.innerHTML = renderToStaticMarkup(
    <SessionContext.Provider value={session}>
      <Markdown text={text} />
    </SessionContext.Provider>,
  )
  return div
}

describe("Markdown", () => {
  it("renders code, tables and links", () => {
    const d = dom("# Hi\n\n```go\nfmt.Println(1)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://appwrite.io/docs) and `x`\n\n- [x] done\n- [ ] todo")
    expect(d.querySelector("h1")?.textContent).toBe("Hi")
    expect(d.querySelector("figure.code-block pre code")?.textContent).toBe("fmt.Println(1)")
    expect(d.querySelector("figure.code-block")?.getAttribute("data-lang")).toBe("go")
    expect(d.querySelector("figure.code-block .code-lang")?.textContent).toBe("go")
    expect(d.querySelector("figure.code-block button")?.getAttribute("aria-label")).toBe("Copy go code")
    expect([...d.querySelectorAll(".table-wrap table td")].map((c) => c.textContent)).toEqual(["1", "2"])
    const a = d.querySelector("a")
    expect(a?.getAttribute("href")).toBe("https://appwrite.io/docs")
    expect(a?.getAttribute("target")).toBe("_blank")
    expect(a?.getAttribute("rel")).toBe("noopener noreferrer nofollow")
    // a task list is text, not form controls
    expect(d.querySelectorAll("input").length).toBe(0)
    expect([...d.querySelectorAll("li")].map((l) => l.textContent?.trim())).toEqual(["☑ done", "☐ todo"])
  })

  it("finds code blocks in lists too", () => {
    const nodes = parseMarkdown("1. step\n\n   ```bash\n   npm i appwrite\n   ```\n")
    const flat = JSON.stringify(nodes)
    expect(flat).toContain('"lang":"bash"')
    expect(nodes.some(isCode)).toBe(false) // nested in the list item
  })

  it("keeps model HTML inert: no script, handler, style, form control, iframe or remote load", () => {
    const hostile = [
      "<script>window.pwned=1</script>",
      '<img src=x onerror="window.pwned=1">',
      '<a href="javascript:window.pwned=1">click</a>',
      '<a href="java\tscript:window.pwned=1">tab</a>',
      "[md link](javascript:alert(1))",
      '<iframe src="https://evil.example"></iframe>',
      '<svg onload="window.pwned=1"><circle/></svg>',
      '<form action="https://evil.example"><input name=p value=secret><button formaction="https://evil.example">go</button><select><option>o</option></select><textarea>t</textarea></form>',
      '<p style="position:fixed;inset:0" onclick="window.pwned=1">cover</p>',
      "<style>body{display:none}</style>",
      '<link rel=stylesheet href="https://evil.example/x.css"><meta http-equiv=refresh content="0;url=https://evil.example">',
      '<video src="https://evil.example/v.mp4" autoplay></video><audio src="https://evil.example/a.mp3"></audio>',
      '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x">',
      '<a href="data:text/html,<script>1</script>">d</a>',
      '<details open ontoggle="window.pwned=1"><summary>s</summary>inside</details>',
      '<div class="sheet" id="settings">spoof</div>',
      "<base href=\"https://evil.example/\"><template><img src=x onerror=alert(1)></template>",
    ].join("\n\n")
    const d = dom(hostile)
    expect(d.querySelectorAll("script, iframe, svg, form, style, img, input, button, select, textarea, option, link, meta, video, audio, object, embed, base, details, template").length).toBe(0)
    for (const el of d.querySelectorAll("*")) {
      for (const attr of el.attributes) {
        expect(attr.name.startsWith("on"), `${el.tagName} ${attr.name}`).toBe(false)
        expect(attr.name, el.tagName).not.toBe("style")
        expect(attr.name === "id" && el.tagName !== "DIV", `${el.tagName} id`).toBe(false)
      }
    }
    expect(d.querySelector("#settings")).toBeNull()
    for (const a of d.querySelectorAll("a")) {
      const href = a.getAttribute("href")
      expect(href === null || /^(https?:|mailto:)/.test(href), String(href)).toBe(true)
    }
    expect(d.textContent).toContain("cover")
    expect(d.textContent).toContain("inside")
  })

  it("replaces a remote image with its alt text", () => {
    const d = dom("![chart of usage](https://tracker.example/p.png)")
    expect(d.querySelector("img")).toBeNull()
    expect(d.textContent).toContain("chart of usage")
  })
})
