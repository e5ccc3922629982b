import { useMemo } from "react"
import { renderMarkdown } from "../lib/markdown"

/** Markdown renders model text as sanitized HTML (lib/markdown.ts); the only place HTML is inserted. */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text])
  return <div className="md" dangerouslySetInnerHTML={{ __html: html }} />
}
