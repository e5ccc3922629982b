/// <reference types="vitest/config" />
import { writeFileSync } from "node:fs"
import { defineConfig, type Plugin } from "vite"
import react from "@vitejs/plugin-react"

// dist/.keep is committed so the embed compiles before any build; the build empties dist/ and puts it back.
const keep: Plugin = {
  name: "keep-dist",
  apply: "build",
  closeBundle() {
    writeFileSync(new URL("./dist/.keep", import.meta.url), "")
  },
}

// The build goes to dist/, which the Go function embeds (//go:embed all:web/dist). No inline scripts: the
// function serves the page with a Content-Security-Policy of script-src 'self' (docs/chat.md).
export default defineConfig({
  // base "./": every URL is relative, so the page works at a function domain's root and under the stand-in's
  // /_local/domains/chat/ prefix (chat inserts <base href>, docs/chat.md "Relative URLs").
  base: "./",
  plugins: [react(), keep],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
  // `CHAT_URL=http://127.0.0.1:8080/_local/domains/chat npm run dev`: Vite serves the page, chat answers /api/.
  server: process.env.CHAT_URL ? { proxy: { "/api": { target: process.env.CHAT_URL, changeOrigin: true } } } : {},
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    // A ceiling, not a speed goal: vitest's 5 s default failed a rendering test once on a machine shared by
    // several test runs (load average 46); no test waits on the clock.
    testTimeout: 30_000,
    // One jsdom per worker, not one per test file: a fresh jsdom for each of the files was three quarters of
    // the page tests' time (35 s against 7 s). Tests leave no state behind: stubbed globals are unstubbed
    // and rendered roots unmounted in afterEach, sessionStorage cleared.
    isolate: false,
  },
})
