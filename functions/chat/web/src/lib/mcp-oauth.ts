// MCP OAuth in the browser, as the Python UI did it (ui/src/lib/mcp-oauth.ts of eldadfux/openhands) and as
// the MCP authorization spec asks: discover the protected resource (RFC 9728, from the server's
// WWW-Authenticate or its well-known URL), then its authorization server (RFC 8414, OpenID discovery as a
// fallback), register a public client dynamically (RFC 7591), authorize with PKCE S256 (RFC 7636) and the
// resource indicator (RFC 8707), redirect back to {origin}/oauth/mcp/callback, exchange the code. The page
// then hands the tokens to chat, which keeps them server-side. The flow runs in the same tab: the state it
// needs across the redirect is kept in sessionStorage.

export type McpServerRef = { id: string; name: string; url: string; description?: string }

export type ProtectedResourceMetadata = { resource?: string; authorization_servers?: string[]; scopes_supported?: string[] }
export type AuthServerMetadata = {
  issuer?: string
  authorization_endpoint: string
  token_endpoint: string
  registration_endpoint?: string
  code_challenge_methods_supported?: string[]
  scopes_supported?: string[]
  authorization_details_types_supported?: string[]
  authorization_response_iss_parameter_supported?: boolean
}
export type ClientInfo = { client_id: string; client_secret?: string; [key: string]: unknown }

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

import { callbackURL } from "./paths"

const PENDING_KEY = "chat_mcp_oauth_pending"

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

/** resourceMetadataFromHeader reads resource_metadata (and scope) from a WWW-Authenticate Bearer challenge. */
export function parseBearerChallenge(header: string): { resourceMetadata?: string; scope?: string } {
  const out: { resourceMetadata?: string; scope?: string } = {}
  const re = /([a-zA-Z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g
  for (const m of header.matchAll(re)) {
    const value = (m[2] ?? m[3] ?? "").replace(/\\(.)/g, "$1")
    if (m[1] === "resource_metadata") out.resourceMetadata = value
    if (m[1] === "scope") out.scope = value
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

async function getJSON<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, { ...init, headers: { Accept: "application/json", ...(init?.headers ?? {}) } })
  if (!res.ok) {
    const text = await res.text().catch(() => "")
    throw new Error(`${init?.method ?? "GET"} ${url} answered ${res.status}${text ? `: ${text.slice(0, 300)}` : ""}`)
  }
  return (await res.json()) as T
}

async function firstJSON<T>(urls: string[], what: string): Promise<T> {
  const errors: string[] = []
  for (const url of urls) {
    try {
      return await getJSON<T>(url)
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err))
    }
  }
  throw new Error(`could not discover ${what}: ${errors.join("; ")}`)
}

/** discover finds the protected resource's and its authorization server's metadata. */
export async function discover(serverUrl: string): Promise<{ prm: ProtectedResourceMetadata; as: AuthServerMetadata; scope?: string }> {
  let challenge: { resourceMetadata?: string; scope?: string } = {}
  try {
    // An unauthenticated MCP request answers 401 with the resource metadata's URL (MCP authorization spec).
    const probe = await fetch(serverUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "appwrite-agent-chat", version: "1.0.0" } },
      }),
    })
    challenge = parseBearerChallenge(probe.headers.get("WWW-Authenticate") ?? "")
  } catch {
    // CORS may hide the header; the well-known URLs come next.
  }
  const prm = await firstJSON<ProtectedResourceMetadata>(
    challenge.resourceMetadata ? [challenge.resourceMetadata, ...protectedResourceURLs(serverUrl)] : protectedResourceURLs(serverUrl),
    `the protected resource metadata of ${serverUrl}`,
  )
  const issuer = prm.authorization_servers?.[0]
  if (!issuer) throw new Error(`the protected resource metadata of ${serverUrl} names no authorization server`)
  const as = await firstJSON<AuthServerMetadata>(authServerURLs(issuer), `the authorization server ${issuer}`)
  if (!as.authorization_endpoint || !as.token_endpoint) throw new Error(`the authorization server ${issuer} has no authorization or token endpoint`)
  if (!as.code_challenge_methods_supported?.includes("S256")) {
    throw new Error(`the authorization server ${issuer} does not support PKCE S256 (code_challenge_methods_supported), so the connection is refused`)
  }
  return { prm, as, ...(challenge.scope ? { scope: challenge.scope } : {}) }
}

/** beginMcpOAuth discovers, registers, and sends the browser to the authorization server. */
export async function beginMcpOAuth(server: McpServerRef, returnTo: string): Promise<void> {
  const { prm, as, scope } = await discover(server.url)
  const redirectUri = callbackURL()
  if (!as.registration_endpoint) throw new Error("the authorization server offers no dynamic client registration (registration_endpoint)")
  const clientInfo = await getJSON<ClientInfo>(as.registration_endpoint, {
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
  if (!clientInfo.client_id) throw new Error("the client registration answered no client_id")
  const codeVerifier = randomString(48)
  const state = randomString(24)
  const resource = prm.resource || canonicalResource(server.url)
  const pending: PendingOAuth = {
    server,
    state,
    codeVerifier,
    redirectUri,
    clientInfo,
    tokenEndpoint: as.token_endpoint,
    resource,
    returnTo,
    issuer: as.issuer || prm.authorization_servers?.[0] || "",
    issRequired: as.authorization_response_iss_parameter_supported === true,
  }
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending))
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientInfo.client_id,
    redirect_uri: redirectUri,
    state,
    code_challenge: await pkceChallenge(codeVerifier),
    code_challenge_method: "S256",
    resource,
  })
  const scopes = scope || prm.scopes_supported?.join(" ")
  if (scopes) params.set("scope", scopes)
  // Appwrite's Console OAuth grants project and organization scopes only through authorization_details
  // (as the Python UI sent them); other servers do not get a parameter they did not advertise.
  if (as.authorization_details_types_supported?.includes("project")) {
    params.set("authorization_details", JSON.stringify([{ type: "project", identifiers: ["*"] }, { type: "organization", identifiers: ["*"] }]))
  }
  const sep = as.authorization_endpoint.includes("?") ? "&" : "?"
  window.location.assign(`${as.authorization_endpoint}${sep}${params.toString()}`)
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
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: pending.redirectUri,
    client_id: pending.clientInfo.client_id,
    code_verifier: pending.codeVerifier,
    resource: pending.resource,
  })
  if (pending.clientInfo.client_secret) body.set("client_secret", pending.clientInfo.client_secret)
  const tokens = await getJSON<Record<string, unknown>>(pending.tokenEndpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body,
  })
  if (typeof tokens.access_token !== "string" || !tokens.access_token) throw new Error("the token endpoint answered no access_token")
  // The MCP spec's authorization server binding: the registered client is kept with the issuer that
  // registered it, so that turn never uses it (or its refresh token) with another authorization server.
  const clientInfo: ClientInfo = { ...pending.clientInfo, issuer: pending.issuer }
  return { ...pending.server, tokens, client_info: clientInfo, returnTo: pending.returnTo }
}
