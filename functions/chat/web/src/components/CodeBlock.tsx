import { useEffect, useState, type CSSProperties } from "react"
import type { Token } from "../lib/highlight"
import { CopyButton } from "./CopyButton"

/**
 * CodeBlock is a code block of an answer: its language, a copy button, and the code highlighted once the
 * highlighter (a chunk of its own, lib/highlight.ts, loaded when the first block appears) has tokenized it;
 * until then, and for a language it does not know, the plain text.
 */
export function CodeBlock({ code, lang }: { code: string; lang: string }) {
  const text = code.replace(/\n$/, "")
  const [lines, setLines] = useState<{ for: string; tokens: Token[][] } | null>(null)
  useEffect(() => {
    if (!lang) return
    let live = true
    import("../lib/highlight")
      .then((m) => m.highlight(text, lang))
      .then((tokens) => {
        if (live && tokens) setLines({ for: `${lang}\n${text}`, tokens })
      })
      .catch(() => undefined) // unhighlighted code is still the code
    return () => {
      live = false
    }
  }, [text, lang])
  const tokens = lines?.for === `${lang}\n${text}` ? lines.tokens : null
  return (
    <figure className="code-block" data-lang={lang || undefined} data-highlighted={tokens ? "true" : "false"}>
      <figcaption>
        <span className="code-lang">{lang || "text"}</span>
        <CopyButton text={text} label={`Copy ${lang || "the"} code`} what="the code" />
      </figcaption>
      <pre tabIndex={0} aria-label={`${lang || "plain"} code`}>
        <code>
          {tokens
            ? tokens.map((line, i) => (
                <span key={i} className="line">
                  {line.map((t, j) => (
                    <span key={j} style={{ "--hl-light": t.light, "--hl-dark": t.dark } as CSSProperties}>
                      {t.content}
                    </span>
                  ))}
                  {i < tokens.length - 1 ? "\n" : null}
                </span>
              ))
            : text}
        </code>
      </pre>
    </figure>
  )
}
