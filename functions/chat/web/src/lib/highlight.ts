// Code highlighting with Shiki (shikijs/shiki: VS Code's TextMate grammars, its JavaScript regex engine, so no
// WebAssembly). This module is loaded only when a code block appears (CodeBlock imports it dynamically), and
// each language's grammar is a chunk of its own, loaded the first time a block of that language is shown. The
// result is tokens, which CodeBlock renders as React elements: no HTML string is inserted.
import { createHighlighterCore, type HighlighterCore, type ThemedToken } from "shiki/core"
import { createJavaScriptRegexEngine } from "shiki/engine/javascript"

type Loader = () => Promise<unknown>

// The languages an Appwrite agent writes about: its SDKs' languages, the shell, and the formats around them.
const LANGUAGES: Record<string, Loader> = {
  bash: () => import("shiki/langs/bash.mjs"),
  c: () => import("shiki/langs/c.mjs"),
  cpp: () => import("shiki/langs/cpp.mjs"),
  csharp: () => import("shiki/langs/csharp.mjs"),
  css: () => import("shiki/langs/css.mjs"),
  dart: () => import("shiki/langs/dart.mjs"),
  diff: () => import("shiki/langs/diff.mjs"),
  dockerfile: () => import("shiki/langs/dockerfile.mjs"),
  go: () => import("shiki/langs/go.mjs"),
  graphql: () => import("shiki/langs/graphql.mjs"),
  html: () => import("shiki/langs/html.mjs"),
  http: () => import("shiki/langs/http.mjs"),
  java: () => import("shiki/langs/java.mjs"),
  javascript: () => import("shiki/langs/javascript.mjs"),
  json: () => import("shiki/langs/json.mjs"),
  jsx: () => import("shiki/langs/jsx.mjs"),
  kotlin: () => import("shiki/langs/kotlin.mjs"),
  markdown: () => import("shiki/langs/markdown.mjs"),
  php: () => import("shiki/langs/php.mjs"),
  python: () => import("shiki/langs/python.mjs"),
  ruby: () => import("shiki/langs/ruby.mjs"),
  rust: () => import("shiki/langs/rust.mjs"),
  sql: () => import("shiki/langs/sql.mjs"),
  swift: () => import("shiki/langs/swift.mjs"),
  toml: () => import("shiki/langs/toml.mjs"),
  tsx: () => import("shiki/langs/tsx.mjs"),
  typescript: () => import("shiki/langs/typescript.mjs"),
  xml: () => import("shiki/langs/xml.mjs"),
  yaml: () => import("shiki/langs/yaml.mjs"),
}

const ALIASES: Record<string, string> = {
  sh: "bash", shell: "bash", zsh: "bash", console: "bash", shellscript: "bash",
  "c++": "cpp", cs: "csharp", "c#": "csharp", docker: "dockerfile", golang: "go", gql: "graphql",
  js: "javascript", mjs: "javascript", cjs: "javascript", node: "javascript", kt: "kotlin", kts: "kotlin",
  md: "markdown", py: "python", rb: "ruby", rs: "rust", ts: "typescript", mts: "typescript", yml: "yaml",
  svg: "xml", jsonc: "json", json5: "json",
}

/** languageOf is the grammar a fence's info string names ("ts", "Python"), or null when none is known. */
export function languageOf(info: string): string | null {
  const name = info.trim().toLowerCase()
  const lang = ALIASES[name] ?? name
  return lang in LANGUAGES ? lang : null
}

let highlighter: Promise<HighlighterCore> | null = null

function core(): Promise<HighlighterCore> {
  highlighter ??= createHighlighterCore({
    themes: [import("shiki/themes/github-light.mjs"), import("shiki/themes/github-dark.mjs")],
    langs: [],
    engine: createJavaScriptRegexEngine(),
  })
  return highlighter
}

/** A highlighted token: its text and its colour in each theme (CSS custom properties). */
export type Token = { content: string; light?: string; dark?: string }

/** highlight tokenizes code of a fence's language, line by line; null when the language is not known. */
export async function highlight(code: string, info: string): Promise<Token[][] | null> {
  const lang = languageOf(info)
  const load = lang ? LANGUAGES[lang] : undefined
  if (!lang || !load) return null
  const h = await core()
  if (!h.getLoadedLanguages().includes(lang)) await h.loadLanguage(load as Parameters<HighlighterCore["loadLanguage"]>[0])
  const { tokens } = h.codeToTokens(code, { lang, themes: { light: "github-light", dark: "github-dark" }, defaultColor: false })
  return tokens.map((line) => line.map(token))
}

function token(t: ThemedToken): Token {
  const style = t.htmlStyle ?? {}
  const out: Token = { content: t.content }
  if (style["--shiki-light"]) out.light = style["--shiki-light"]
  if (style["--shiki-dark"]) out.dark = style["--shiki-dark"]
  return out
}
