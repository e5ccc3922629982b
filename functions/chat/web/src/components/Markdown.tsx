import { createElement, useMemo, type ReactNode } from "react"
import { isCode, parseMarkdown, type MdNode } from "../lib/markdown"
import { CodeBlock } from "./CodeBlock"

function render(n: MdNode, key: number): ReactNode {
  if (typeof n === "string") return n
  if (isCode(n)) return <CodeBlock key={key} code={n.code} lang={n.lang} />
  const { href, title, start, align } = n.attrs
  const props: Record<string, unknown> = { key }
  if (title) props.title = title
  if (start !== undefined) props.start = start
  if (align) props.className = `align-${align}`
  if (n.tag === "a" && href) Object.assign(props, { href, target: "_blank", rel: "noopener noreferrer nofollow" })
  const el = createElement(n.tag, props, ...n.children.map(render))
  // A wide table scrolls inside its own box, never the page.
  return n.tag === "table" ? (
    <div key={key} className="table-wrap">
      {el}
    </div>
  ) : (
    el
  )
}

/** Markdown renders model markdown as React elements of the allowed tree (lib/markdown.ts); nothing is inserted as HTML. */
export function Markdown({ text }: { text: string }) {
  const nodes = useMemo(() => parseMarkdown(text), [text])
  return <div className="md">{nodes.map(render)}</div>
}
