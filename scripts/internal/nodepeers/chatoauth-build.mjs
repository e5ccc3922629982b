// Builds the chat page's MCP OAuth module (functions/chat/web/src/lib/mcp-oauth.ts, with the ./paths module it
// imports) into one ES module that Node can import, with the page's own bundler: Vite, from the page's
// node_modules (scripts/build-chat-web prepare installs them), which compiles the page's TypeScript for
// `npm run bundle`. Type-checking is the page's own build's (tsc -b in `npm run check`).
//
// Usage: node chatoauth-build.mjs <functions/chat/web> <output folder>; writes <output folder>/mcp-oauth.mjs.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [web, out] = process.argv.slice(2).map((p) => resolve(p));
if (!web || !out) {
  console.error('usage: node chatoauth-build.mjs <functions/chat/web> <output folder>');
  process.exit(2);
}
const vite = await import(pathToFileURL(createRequire(join(web, 'package.json')).resolve('vite')).href);
await vite.build({
  root: web,
  configFile: false, // the page's config builds index.html into dist/; this build writes only <out>
  logLevel: 'warn',
  publicDir: false, // the page's public/ files are not part of the module
  build: {
    outDir: out,
    emptyOutDir: true,
    minify: false,
    target: 'es2022',
    lib: { entry: join(web, 'src', 'lib', 'mcp-oauth.ts'), formats: ['es'], fileName: () => 'mcp-oauth.mjs' },
  },
});
