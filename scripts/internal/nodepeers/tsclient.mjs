// An MCP client application built on the official TypeScript SDK (@modelcontextprotocol/sdk) and its OAuth
// client (OAuthClientProvider, StreamableHTTPClientTransport's auth, auth()), driven by scripts/internal/e2e's
// TestTypeScriptSDKOAuthFlow over stdin
// and stdout, one JSON object per line. The Go test plays the user's browser: when the SDK redirects to the
// authorization server, this script prints {"authorize": url} and waits for {"op": "redirect", "url": ...},
// the URL the browser was sent back to.
//
// Commands: {"op": "connect"} (with "pauseAfterExchange": true it prints {"exchanged": true, "tokens"} after
// the code exchange and waits for {"op": "continue"}), {"op": "ping"}, {"op": "request", "method", "params"}, {"op": "refresh"} (the
// application found its access token expired: the SDK's auth() refreshes it), {"op": "tokens"}, {"op": "close"}.
// Each is answered {"ok": true, "result": ...} or {"ok": false, "error": "...", "status": <HTTP status>}.
// Environment: MCP_URL (the MCP endpoint), MCP_NODE_MODULES (where the SDK is installed).
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.MCP_NODE_MODULES;
const sdk = (p) => import(pathToFileURL(join(modules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport, StreamableHTTPError } = await sdk('client/streamableHttp.js');
const { UnauthorizedError, auth } = await sdk('client/auth.js');
const { ResultSchema } = await sdk('types.js');

const serverURL = new URL(process.env.MCP_URL);
const redirectURL = 'http://127.0.0.1:33419/callback';

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
async function nextCommand() {
  const { value, done } = await lines.next();
  if (done) throw new Error('stdin closed');
  return JSON.parse(value);
}

// The application's storage of what the SDK hands it, in memory.
let clientInfo, tokens, verifier, pendingAuthorization;
const state = 'ts-' + Math.random().toString(36).slice(2);
const provider = {
  get redirectUrl() { return redirectURL; },
  get clientMetadata() {
    return {
      client_name: 'TypeScript SDK client',
      redirect_uris: [redirectURL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  state: () => state,
  clientInformation: () => clientInfo,
  saveClientInformation: (info) => { clientInfo = info; },
  tokens: () => tokens,
  saveTokens: (t) => { tokens = t; },
  redirectToAuthorization: (url) => { pendingAuthorization = url.toString(); },
  saveCodeVerifier: (v) => { verifier = v; },
  codeVerifier: () => verifier,
  invalidateCredentials: (scope) => {
    if (scope === 'all' || scope === 'tokens') tokens = undefined;
    if (scope === 'all' || scope === 'client') clientInfo = undefined;
    if (scope === 'all' || scope === 'verifier') verifier = undefined;
  },
};

let client, transport;
let pauseAfterExchange = false;

// finishAuthorization hands the authorization URL to the user (the Go test), and exchanges the code the
// browser came back with.
async function finishAuthorization() {
  const url = pendingAuthorization;
  pendingAuthorization = undefined;
  send({ authorize: url });
  const cmd = await nextCommand();
  if (cmd.op !== 'redirect') throw new Error('expected the redirect, got ' + cmd.op);
  const back = new URL(cmd.url);
  if (back.searchParams.get('error')) throw new Error('authorization refused: ' + back.searchParams.get('error'));
  if (back.searchParams.get('state') !== state) throw new Error('state mismatch');
  await transport.finishAuth(back.searchParams.get('code'));
  if (pauseAfterExchange) {
    // The test moves the authorization server's clock between the exchange and the next call.
    send({ exchanged: true, tokens });
    const next = await nextCommand();
    if (next.op !== 'continue') throw new Error('expected continue, got ' + next.op);
  }
}

// withAuthorization runs fn, going through the user's authorization when the SDK asks for it. A 403 that the
// SDK's own step-up could not lift (it refreshes, which keeps the scopes) drops the tokens, so that the next
// attempt asks the user for the scopes the challenge named.
async function withAuthorization(fn) {
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof UnauthorizedError && pendingAuthorization) {
        await finishAuthorization();
        continue;
      }
      if (e instanceof StreamableHTTPError && e.code === 403 && tokens) {
        provider.invalidateCredentials('tokens');
        continue;
      }
      throw e;
    }
  }
  throw new Error('authorization did not converge');
}

function newTransport() {
  transport = new StreamableHTTPClientTransport(serverURL, { authProvider: provider });
  client = new Client({ name: 'ts-sdk-oauth', version: '1.0.0' });
}

const ops = {
  connect: (cmd) => withAuthorization(async () => {
    pauseAfterExchange = !!cmd.pauseAfterExchange;
    newTransport();
    await client.connect(transport);
    return { protocolVersion: transport.protocolVersion ?? null, server: client.getServerVersion() };
  }),
  request: (cmd) => withAuthorization(() => client.request({ method: cmd.method, params: cmd.params }, ResultSchema)),
  ping: () => withAuthorization(() => client.ping()),
  refresh: async () => auth(provider, { serverUrl: serverURL }),
  tokens: async () => tokens ?? null,
  close: async () => { await client?.close(); return null; },
};

for (;;) {
  let cmd;
  try {
    cmd = await nextCommand();
  } catch {
    break;
  }
  try {
    const result = await ops[cmd.op](cmd);
    send({ ok: true, result });
  } catch (e) {
    send({ ok: false, error: String(e?.message ?? e), status: e?.code ?? null });
  }
  if (cmd.op === 'close') break;
}
process.exit(0);
