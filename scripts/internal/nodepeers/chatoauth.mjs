// The chat page's MCP OAuth client (functions/chat/web/src/lib/mcp-oauth.ts, built by chatoauth-build.mjs) as a
// client command of the official MCP conformance suite: `conformance client --command "node chatoauth.mjs"
// --scenario auth/...` starts it with the scenario's MCP server URL as its last argument. Driven by
// scripts/internal/nodepeers's TestChatOAuthConformance.
//
// It plays what surrounds the module in a browser: the page at https://conformance-test.local/ (document.baseURI:
// its callback is https://conformance-test.local/oauth/mcp/callback and its client metadata document
// https://conformance-test.local/client-metadata.json, the URL the suite's auth/basic-cimd scenario expects), the
// tab's sessionStorage, and the browser's navigation: window.location.assign is where the module sends the
// user; this script follows the authorization server's redirect back (the user consents) and hands the callback
// URL's query to completeMcpOAuth, as the page's callback route does. Then it plays turn, which uses the tokens
// chat keeps: initialize, tools/list and tools/call of each tool with the access token. A 403
// insufficient_scope goes back to the module as a step-up (beginMcpOAuth with the challenge), which refuses
// after MAX_STEP_UPS. Pre-registered credentials in MCP_CONFORMANCE_CONTEXT are the ones a user enters when
// adding the server.
//
// Environment: CHAT_OAUTH_MODULE (the built module), MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT.
// Exit status 0 when every tool was called, 1 with the reason on stderr otherwise.
import { writeSync } from 'node:fs';
import { inspect } from 'node:util';
import { pathToFileURL } from 'node:url';

const serverUrl = process.argv.at(-1);
// Written synchronously: process.exit below would drop what a pipe has not taken yet.
const line = (fd, a) => writeSync(fd, a.map((x) => (typeof x === 'string' ? x : inspect(x, { depth: 4 }))).join(' ') + '\n');
const log = (...a) => line(1, a);

// The browser around the module.
const storage = new Map();
globalThis.sessionStorage = {
  getItem: (k) => (storage.has(k) ? storage.get(k) : null),
  setItem: (k, v) => storage.set(k, String(v)),
  removeItem: (k) => storage.delete(k),
  clear: () => storage.clear(),
};
globalThis.document = { baseURI: 'https://conformance-test.local/' };
let navigation;
globalThis.window = { location: { assign: (url) => (navigation = url) } };
// A browser sends a request again, on a new connection, when the kept-alive connection it wrote it to was
// closed by the server before any answer (the suite's servers close idle connections after 5 s, which a loaded
// machine can let pass between two requests); Node's fetch reports it as a failure instead.
const nativeFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  try {
    return await nativeFetch(url, init);
  } catch (err) {
    if (['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'].includes(err?.cause?.code)) {
      log('fetch', String(url), 'sent again after', err.cause.code);
      return nativeFetch(url, init);
    }
    throw err;
  }
};

const oauth = await import(pathToFileURL(process.env.CHAT_OAUTH_MODULE).href);

const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const server = { id: 'conformance', name: 'Conformance server', url: serverUrl };
if (context.client_id && context.name === 'auth/pre-registration') {
  server.client = { client_id: context.client_id, ...(context.client_secret ? { client_secret: context.client_secret } : {}) };
}

// authorize runs the page's flow: beginMcpOAuth (challenge: a step-up), the consent, completeMcpOAuth.
async function authorize(challenge) {
  navigation = undefined;
  await oauth.beginMcpOAuth(server, '', challenge);
  if (!navigation) throw new Error('beginMcpOAuth did not send the browser anywhere');
  const url = new URL(navigation);
  log('authorize:', url.origin + url.pathname, Object.fromEntries(url.searchParams));
  const res = await fetch(url, { redirect: 'manual' });
  const back = res.headers.get('location');
  if (!back) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
  const creds = await oauth.completeMcpOAuth(new URL(back, url).search);
  log('connected:', JSON.stringify({ tokens: creds.tokens, client_info: creds.client_info }));
  return creds.tokens.access_token;
}

// rpc sends one JSON-RPC message as turn would (Streamable HTTP); a 401 or 403 comes back as { refused }.
async function rpc(token, session, message) {
  const res = await fetch(serverUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      ...(session.id ? { 'Mcp-Session-Id': session.id } : {}),
      ...(session.version ? { 'MCP-Protocol-Version': session.version } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
  if (res.status === 401 || res.status === 403) return { refused: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
  const text = await res.text();
  if (!res.ok) throw new Error(`${message.method} answered ${res.status}: ${text.slice(0, 200)}`);
  if (message.id === undefined) return {};
  session.id = res.headers.get('mcp-session-id') ?? session.id;
  const replies = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean).map((d) => JSON.parse(d))
    : [JSON.parse(text)];
  const reply = replies.find((r) => r.id === message.id);
  if (!reply) throw new Error(`${message.method}: no answer in ${text.slice(0, 200)}`);
  if (reply.error) throw new Error(`${message.method}: error ${reply.error.code} ${reply.error.message}`);
  return { result: reply.result };
}

// use is what turn does with the connection: initialize, list the tools, call each.
async function use(token) {
  const session = {};
  let r = await rpc(token, session, { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'appwrite-agent', version: '1.0.0' } } });
  if (r.refused) return r;
  session.version = r.result.protocolVersion;
  await rpc(token, session, { method: 'notifications/initialized' });
  r = await rpc(token, session, { id: 2, method: 'tools/list', params: {} });
  if (r.refused) return r;
  let id = 3;
  for (const tool of r.result.tools) {
    const call = await rpc(token, session, { id: id++, method: 'tools/call', params: { name: tool.name, arguments: {} } });
    if (call.refused) return call;
    log('call', tool.name, JSON.stringify(call.result));
  }
  return {};
}

try {
  let token = await authorize();
  for (;;) {
    const r = await use(token);
    if (!r.refused) break;
    log(`refused with ${r.refused}: ${r.challenge}`);
    if (r.refused !== 403) throw new Error(`the server refused the new access token (HTTP ${r.refused})`);
    token = await authorize(r.challenge); // a step-up; the module refuses after MAX_STEP_UPS
  }
} catch (err) {
  line(2, [String(err?.stack ?? err)]);
  process.exit(1);
}
process.exit(0); // the fetch connections kept alive would hold the process until their idle timeout
