// MCP OAuth in the browser, as the Python UI did it (ui/src/lib/mcp-oauth.ts of eldadfux/openhands) and as
// the MCP authorization spec (2025-11-25) asks: discover the protected resource (RFC 9728, from the server's
// WWW-Authenticate or its well-known URL), then its authorization server (RFC 8414, OpenID discovery as a
// fallback), identify the client (pre-registered credentials the user entered; else a Client ID Metadata
// Document, chat's own URL, when the server supports them; else dynamic registration, RFC 7591), authorize
// with PKCE S256 (RFC 7636) and the resource indicator (RFC 8707), redirect back to
// {root}oauth/mcp/callback, exchange the code. A server without protected-resource metadata is a 2025-03-26
// server: its origin is the authorization server, with default endpoints when it has no metadata either. A
// 403 insufficient_scope asks for more scope (a step-up), at most MAX_STEP_UPS times per connection. The page
// then hands the tokens to chat, which keeps them server-side. The flow runs in the same tab: the state it
// needs across the redirect is kept in sessionStorage. The conformance suite's auth/* scenarios drive this
// module from Node (scripts/internal/nodepeers/chatoauth.mjs).

import { callbackURL, clientMetadataURL } from "./paths"

/** A pre-registered OAuth client the user entered for a server whose authorization server registers none. */
export type PreRegisteredClient = { client_id: string; client_secret?: string }

export type McpServerRef = { id: string; name: string; url: string; description?: string; client?: PreRegisteredClient }

export type ProtectedResourceMetadata = { resource?: string; authorization_servers?: string[]; scopes_supported?: string[] }
export type AuthServerMetadata = {
  issuer?: string
  authorization_endpoint: string
  token_endpoint: string
  registration_endpoint?: string
  code_challenge_methods_supported?: string[]
  scopes_supported?: string[]
  token_endpoint_auth_methods_supported?: string[]
  client_id_metadata_document_supported?: boolean
  authorization_details_types_supported?: string[]
  authorization_response_iss_parameter_supported?: boolean
}

/** How the client authenticates at the token endpoint. */
export type TokenAuthMethod = "none" | "client_secret_basic" | "client_secret_post"

/** The client registration handed to chat with the tokens (turn refreshes with it). */
export type ClientInfo = { client_id: string; client_secret?: string; token_endpoint_auth_method?: string; [key: string]: unknown }

/** What the callback needs, kept across the redirect. */
export type PendingOAuth = {
  server: McpServerRef
  state: string
  codeVerifier: string
  redirectUri: string
  clientInfo: ClientInfo
  tokenEndpoint: string
  resource: string
  /** the page's hash to come back to (#c=<id>, or empty) */
  returnTo: string
  /** the authorization server's issuer, which a callback's `iss` must equal (RFC 9207) */
  issuer: string
  /** whether the server promised `iss` on every callback (authorization_response_iss_parameter_supported) */
  issRequired: boolean
}

/** The MCP credentials handed to chat (PUT /api/mcp/connections/{id}). */
export type McpCredentials = McpServerRef & { tokens: Record<string, unknown>; client_info: ClientInfo; returnTo: string }

/** What discovery found: the metadata, the challenge's scope, and whether the server is a 2025-03-26 one. */
export type Discovery = { prm: ProtectedResourceMetadata; as: AuthServerMetadata; scope?: string; legacy: boolean }

/**
 * MAX_STEP_UPS bounds the step-ups of one connection: after this many authorizations asking for the scope a
 * 403 insufficient_scope named, since the user last connected it, another one is refused with an error
 * instead of sending the user to the authorization server again (the MCP spec's scope challenge handling:
 * clients SHOULD limit retries, so a server that never accepts a scope cannot loop).
 */
export const MAX_STEP_UPS = 2

const PENDING_KEY = "chat_mcp_oauth_pending"
const STEP_UP_KEY = "chat_mcp_oauth_step_up:"

export function base64url(bytes: Uint8Array): string {
  let s = ""
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

function randomString(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)))
}

/** pkceChallenge is the S256 code challenge of a verifier (RFC 7636 §4.2). */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))
  return base64url(new Uint8Array(digest))
}

/** BearerChallenge is what a WWW-Authenticate Bearer challenge says (RFC 6750 §3, RFC 9728 §5.1). */
export type BearerChallenge = { resourceMetadata?: string; scope?: string; error?: string }

/** parseBearerChallenge reads resource_metadata, scope and error from a WWW-Authenticate Bearer challenge. */
export function parseBearerChallenge(header: string): BearerChallenge {
  const out: BearerChallenge = {}
  const re = /([a-zA-Z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g
  for (const m of header.matchAll(re)) {
    const value = (m[2] ?? m[3] ?? "").replace(/\\(.)/g, "$1")
    if (m[1] === "resource_metadata") out.resourceMetadata = value
    if (m[1] === "scope") out.scope = value
    if (m[1] === "error") out.error = value
  }
  return out
}

/** The well-known URLs of a protected resource's metadata, path-specific first (RFC 9728 §3.1). */
export function protectedResourceURLs(serverUrl: string): string[] {
  const u = new URL(serverUrl)
  const path = u.pathname.replace(/\/$/, "")
  return [...(path ? [`${u.origin}/.well-known/oauth-protected-resource${path}`] : []), `${u.origin}/.well-known/oauth-protected-resource`]
}

/** The discovery URLs of an authorization server (RFC 8414 §3.1, then OpenID Connect Discovery). */
export function authServerURLs(issuer: string): string[] {
  const u = new URL(issuer)
  const path = u.pathname.replace(/\/$/, "")
  if (!path) return [`${u.origin}/.well-known/oauth-authorization-server`, `${u.origin}/.well-known/openid-configuration`]
  return [
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
    `${u.origin}/.well-known/openid-configuration${path}`,
    `${u.origin}${path}/.well-known/openid-configuration`,
  ]
}

/** The canonical resource URI of an MCP server URL (RFC 8707: no fragment). */
export function canonicalResource(serverUrl: string): string {
  const u = new URL(serverUrl)
  u.hash = ""
  return u.pathname === "/" ? `${u.origin}/` : u.href
}

/**
 * resourceCovers tells whether a protected-resource metadata's resource speaks for the server at serverUrl
 * (RFC 8707, the MCP spec: the client validates it before authorizing): the same origin, and a path the
 * server's URL equals or lies under, segment by segment, a trailing slash aside. turn applies the same rule
 * before a refresh (shared/mcpauth/refresh.go).
 */
export function resourceCovers(resource: string, serverUrl: string): boolean {
  let r: URL
  try {
    r = new URL(resource)
  } catch {
    return false
  }
  const s = new URL(serverUrl)
  if (r.origin !== s.origin) return false
  const rp = r.pathname.replace(/\/+$/, "")
  const sp = s.pathname.replace(/\/+$/, "")
  return rp === "" || sp === rp || sp.startsWith(`${rp}/`)
}

/** HTTPError is an answer other than 2xx: the URL, the status and the start of the body. */
class HTTPError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

async function getJSON<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, { ...init, headers: { Accept: "application/json", ...(init?.headers ?? {}) } })
  if (!res.ok) {
    const text = await res.text().catch(() => "")
    throw new HTTPError(url, res.status, `${init?.method ?? "GET"} ${url} answered ${res.status}${text ? `: ${text.slice(0, 300)}` : ""}`)
  }
  return (await res.json()) as T
}

/** firstJSON is the first document of urls that answers; absent is true when every one answered 404. */
async function firstJSON<T>(urls: string[]): Promise<{ doc?: T; errors: string[]; absent: boolean }> {
  const errors: string[] = []
  let absent = true
  for (const url of urls) {
    try {
      return { doc: await getJSON<T>(url), errors, absent: false }
    } catch (err) {
      absent &&= err instanceof HTTPError && err.status === 404
      errors.push(err instanceof Error ? err.message : String(err))
    }
  }
  return { errors, absent }
}

/**
 * discover finds the protected resource's and its authorization server's metadata. A server that serves no
 * protected-resource metadata (every well-known URL answers 404) and whose 401 names none is a 2025-03-26
 * server: the authorization server is its origin, with its RFC 8414 metadata there, or else the default
 * endpoints {origin}/authorize, /token and /register (the 2025-03-26 spec's fallbacks).
 */
export async function discover(serverUrl: string): Promise<Discovery> {
  let challenge: BearerChallenge = {}
  try {
    // An unauthenticated MCP request answers 401 with the resource metadata's URL (MCP authorization spec).
    const probe = await fetch(serverUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "appwrite-agent-chat", version: "1.0.0" } },
      }),
    })
    challenge = parseBearerChallenge(probe.headers.get("WWW-Authenticate") ?? "")
  } catch {
    // CORS may hide the header; the well-known URLs come next.
  }
  const scope = challenge.scope ? { scope: challenge.scope } : {}
  const urls = challenge.resourceMetadata ? [challenge.resourceMetadata, ...protectedResourceURLs(serverUrl)] : protectedResourceURLs(serverUrl)
  const found = await firstJSON<ProtectedResourceMetadata>(urls)
  if (!found.doc) {
    if (found.absent && !challenge.resourceMetadata) return { prm: {}, as: await legacyMetadata(serverUrl), ...scope, legacy: true }
    throw new Error(`could not discover the protected resource metadata of ${serverUrl}: ${found.errors.join("; ")}`)
  }
  const prm = found.doc
  if (prm.resource && !resourceCovers(prm.resource, serverUrl)) {
    throw new Error(`the protected resource metadata of ${serverUrl} is for another resource (${prm.resource}), so the connection is refused`)
  }
  const issuer = prm.authorization_servers?.[0]
  if (!issuer) throw new Error(`the protected resource metadata of ${serverUrl} names no authorization server`)
  const meta = await firstJSON<AuthServerMetadata>(authServerURLs(issuer))
  if (!meta.doc) throw new Error(`could not discover the authorization server ${issuer}: ${meta.errors.join("; ")}`)
  const as = meta.doc
  if (!as.authorization_endpoint || !as.token_endpoint) throw new Error(`the authorization server ${issuer} has no authorization or token endpoint`)
  if (!as.code_challenge_methods_supported?.includes("S256")) {
    throw new Error(`the authorization server ${issuer} does not support PKCE S256 (code_challenge_methods_supported), so the connection is refused`)
  }
  return { prm, as: { ...as, issuer: as.issuer || issuer }, ...scope, legacy: false }
}

/** legacyMetadata is the authorization server of a 2025-03-26 server: its origin's metadata, or the defaults. */
async function legacyMetadata(serverUrl: string): Promise<AuthServerMetadata> {
  const origin = new URL(serverUrl).origin
  try {
    const as = await getJSON<AuthServerMetadata>(`${origin}/.well-known/oauth-authorization-server`)
    if (!as.authorization_endpoint || !as.token_endpoint) throw new Error(`the authorization server ${origin} has no authorization or token endpoint`)
    // The document speaks for the server that serves it: an issuer on another origin is not this server's.
    if (as.issuer && new URL(as.issuer).origin !== origin) throw new Error(`the authorization server metadata of ${origin} names issuer ${as.issuer}, on another origin`)
    return { ...as, issuer: as.issuer || origin }
  } catch (err) {
    if (!(err instanceof HTTPError && err.status === 404)) throw err
  }
  // 2025-03-26 "Fallbacks for servers without metadata discovery": the default paths on the origin (PKCE is
  // required of every client by that spec, so S256 is assumed).
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    code_challenge_methods_supported: ["S256"],
  }
}

/**
 * chooseScope is the scope to ask for (the MCP spec's scope selection strategy): a step-up's scope (what the
 * 403 named, with what was asked for before), else the 401 challenge's, else the resource's scopes_supported,
 * else none. offline_access is added when the authorization server lists it (SEP-2207: chat wants a refresh
 * token, which turn uses), never alone.
 */
export function chooseScope(d: Discovery, stepUp?: { asked?: string; needed?: string }): string | undefined {
  const words = (s?: string) => (s ?? "").split(/\s+/).filter(Boolean)
  let scopes = stepUp?.needed ? [...new Set([...words(stepUp.asked), ...words(stepUp.needed)])] : words(d.scope || d.prm.scopes_supported?.join(" "))
  if (scopes.length > 0 && d.as.scopes_supported?.includes("offline_access") && !scopes.includes("offline_access")) scopes = [...scopes, "offline_access"]
  return scopes.length > 0 ? scopes.join(" ") : undefined
}

/** secretMethod is how a client with a secret authenticates: client_secret_basic unless only post is offered. */
function secretMethod(supported?: string[]): TokenAuthMethod {
  if (!supported?.length || supported.includes("client_secret_basic")) return "client_secret_basic"
  return supported.includes("client_secret_post") ? "client_secret_post" : "client_secret_basic"
}

/**
 * identify is the client the authorization request names: the user's pre-registered client; else, when the
 * authorization server supports Client ID Metadata Documents and chat's document has an https URL, that URL
 * (chat serves the document, docs/chat.md "MCP connections"); else a dynamic registration. Its
 * token_endpoint_auth_method is what the registration answered, or what the server offers for a secret.
 */
async function identify(server: McpServerRef, as: AuthServerMetadata, redirectUri: string): Promise<ClientInfo> {
  if (server.client?.client_id) {
    const { client_id, client_secret } = server.client
    return client_secret
      ? { client_id, client_secret, token_endpoint_auth_method: secretMethod(as.token_endpoint_auth_methods_supported) }
      : { client_id, token_endpoint_auth_method: "none" }
  }
  const metadataURL = clientMetadataURL()
  if (as.client_id_metadata_document_supported === true && metadataURL.startsWith("https://")) {
    return { client_id: metadataURL, token_endpoint_auth_method: "none" }
  }
  if (!as.registration_endpoint) {
    throw new Error(
      "the authorization server registers no clients (no registration_endpoint and no Client ID Metadata Documents): add the server again with the client ID (and secret) its owner gave you",
    )
  }
  const registered = await getJSON<ClientInfo>(as.registration_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Appwrite agent chat",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "web",
    }),
  })
  if (!registered.client_id) throw new Error("the client registration answered no client_id")
  // RFC 7591 §3.2.1: the server may register another method than asked for; with a secret and none named,
  // client_secret_basic is the default (§2).
  const method = registered.token_endpoint_auth_method || (registered.client_secret ? "client_secret_basic" : "none")
  return { ...registered, token_endpoint_auth_method: method }
}

/** StepUp is what a step-up remembers of a connection across its authorizations (sessionStorage). */
type StepUp = { count: number; asked?: string }

/**
 * beginMcpOAuth discovers, identifies the client, and sends the browser to the authorization server. With
 * challenge (the WWW-Authenticate header of a 403 insufficient_scope from the server), it is a step-up: it
 * asks for the scope the challenge names together with what was asked for before, and refuses once the
 * connection has had MAX_STEP_UPS step-ups since the user last connected it. It returns the URL the browser
 * was sent to.
 */
export async function beginMcpOAuth(server: McpServerRef, returnTo: string, challenge?: string): Promise<string> {
  const stepKey = STEP_UP_KEY + server.id
  let step: StepUp = { count: 0 }
  let needed: string | undefined
  if (challenge !== undefined) {
    const c = parseBearerChallenge(challenge)
    if (c.error !== "insufficient_scope") throw new Error(`the server refused the connection's token (${c.error || "no error named"}): connect it again`)
    step = JSON.parse(sessionStorage.getItem(stepKey) ?? '{"count":0}') as StepUp
    if (step.count >= MAX_STEP_UPS) {
      throw new Error(
        `${server.name} still asks for more access (scope ${c.scope ?? "unnamed"}) after ${step.count} authorizations that granted what it asked for: it is not asked again; check the server's settings, then connect it again`,
      )
    }
    needed = c.scope
  }
  const d = await discover(server.url)
  const redirectUri = callbackURL()
  const clientInfo = await identify(server, d.as, redirectUri)
  const codeVerifier = randomString(48)
  const state = randomString(24)
  const resource = d.prm.resource || canonicalResource(server.url)
  const scope = chooseScope(d, challenge !== undefined ? { asked: step.asked, needed: needed ?? d.scope } : undefined)
  // The pre-registered client's secret goes into clientInfo only, never back with the server's reference.
  const ref: McpServerRef = { id: server.id, name: server.name, url: server.url, ...(server.description !== undefined ? { description: server.description } : {}) }
  const pending: PendingOAuth = {
    server: ref,
    state,
    codeVerifier,
    redirectUri,
    clientInfo,
    tokenEndpoint: d.as.token_endpoint,
    resource,
    returnTo,
    issuer: d.as.issuer || "",
    issRequired: d.as.authorization_response_iss_parameter_supported === true,
  }
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending))
  sessionStorage.setItem(stepKey, JSON.stringify({ count: challenge !== undefined ? step.count + 1 : 0, asked: scope } satisfies StepUp))
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientInfo.client_id,
    redirect_uri: redirectUri,
    state,
    code_challenge: await pkceChallenge(codeVerifier),
    code_challenge_method: "S256",
    resource,
  })
  if (scope) params.set("scope", scope)
  // Appwrite's Console OAuth grants project and organization scopes only through authorization_details
  // (as the Python UI sent them); other servers do not get a parameter they did not advertise.
  if (d.as.authorization_details_types_supported?.includes("project")) {
    params.set("authorization_details", JSON.stringify([{ type: "project", identifiers: ["*"] }, { type: "organization", identifiers: ["*"] }]))
  }
  const sep = d.as.authorization_endpoint.includes("?") ? "&" : "?"
  const url = `${d.as.authorization_endpoint}${sep}${params.toString()}`
  window.location.assign(url)
  return url
}

/** completeMcpOAuth finishes on the callback page: checks the issuer and the state, exchanges the code. */
export async function completeMcpOAuth(search: string): Promise<McpCredentials> {
  const qs = new URLSearchParams(search)
  const raw = sessionStorage.getItem(PENDING_KEY)
  sessionStorage.removeItem(PENDING_KEY) // one use, whatever happens
  // RFC 9207: a callback that names another issuer than the server this tab went to (a mix-up), or none where
  // the server promised one, is refused before its code or its error is used.
  const iss = qs.get("iss")
  if (raw) {
    const started = JSON.parse(raw) as PendingOAuth
    if ((iss !== null || started.issRequired) && iss !== started.issuer) {
      throw new Error(`the callback comes from issuer ${iss ?? "(none)"}, not from ${started.issuer}, where this connection started (RFC 9207)`)
    }
  }
  const error = qs.get("error")
  if (error) throw new Error(`the authorization server refused: ${qs.get("error_description") || error}`)
  const code = qs.get("code")
  const state = qs.get("state")
  if (!code || !state) throw new Error("the callback has no code or state")
  if (!raw) throw new Error("no connection was started in this tab (or it was already finished): start it again")
  const pending = JSON.parse(raw) as PendingOAuth
  if (pending.state !== state) throw new Error("the callback's state does not match the connection started here")
  const { client_id, client_secret, token_endpoint_auth_method } = pending.clientInfo
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: pending.redirectUri,
    client_id,
    code_verifier: pending.codeVerifier,
    resource: pending.resource,
  })
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" }
  if (client_secret && token_endpoint_auth_method === "client_secret_basic") {
    // RFC 6749 §2.3.1: the id and the secret are form-encoded, then joined by ':' and base64-encoded.
    const enc = (s: string) => new URLSearchParams({ s }).toString().slice(2)
    headers.Authorization = `Basic ${btoa(`${enc(client_id)}:${enc(client_secret)}`)}`
  } else if (client_secret) {
    body.set("client_secret", client_secret)
  }
  const tokens = await getJSON<Record<string, unknown>>(pending.tokenEndpoint, { method: "POST", headers, body })
  if (typeof tokens.access_token !== "string" || !tokens.access_token) throw new Error("the token endpoint answered no access_token")
  // The MCP spec's authorization server binding: the registered client is kept with the issuer that
  // registered it, so that turn never uses it (or its refresh token) with another authorization server.
  const clientInfo: ClientInfo = { ...pending.clientInfo, issuer: pending.issuer }
  return { ...pending.server, tokens, client_info: clientInfo, returnTo: pending.returnTo }
}
