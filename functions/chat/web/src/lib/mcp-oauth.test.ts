import { afterEach, describe, expect, it, vi } from "vitest"
import {
  authServerURLs,
  beginMcpOAuth,
  canonicalResource,
  chooseScope,
  completeMcpOAuth,
  MAX_STEP_UPS,
  parseBearerChallenge,
  pkceChallenge,
  protectedResourceURLs,
  resourceCovers,
  type Discovery,
  type PendingOAuth,
} from "./mcp-oauth"

/** startedHere records a connection started in this tab (what beginMcpOAuth keeps across the redirect). */
function startedHere(changes: Partial<PendingOAuth> = {}): void {
  const pending: PendingOAuth = {
    server: { id: "m", name: "M", url: "https://m.example/mcp" },
    state: "s1",
    codeVerifier: "v",
    redirectUri: "http://localhost/oauth/mcp/callback",
    clientInfo: { client_id: "c" },
    tokenEndpoint: "https://as.example/token",
    resource: "https://m.example/mcp",
    returnTo: "/",
    issuer: "https://as.example",
    issRequired: false,
    ...changes,
  }
  sessionStorage.setItem("chat_mcp_oauth_pending", JSON.stringify(pending))
}

afterEach(() => {
  vi.unstubAllGlobals()
  sessionStorage.clear()
})

describe("mcp-oauth", () => {
  it("computes the RFC 7636 Appendix B challenge", async () => {
    expect(await pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
  })

  it("reads the Bearer challenge", () => {
    expect(parseBearerChallenge('Bearer error="invalid_token", resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", scope="a b"')).toEqual({
      resourceMetadata: "https://m.example/.well-known/oauth-protected-resource/mcp",
      scope: "a b",
      error: "invalid_token",
    })
    expect(parseBearerChallenge("Bearer resource_metadata=https://m.example/x")).toEqual({ resourceMetadata: "https://m.example/x" })
    expect(parseBearerChallenge("")).toEqual({})
  })

  it("builds the discovery URLs", () => {
    expect(protectedResourceURLs("https://m.example/mcp/")).toEqual([
      "https://m.example/.well-known/oauth-protected-resource/mcp",
      "https://m.example/.well-known/oauth-protected-resource",
    ])
    expect(authServerURLs("https://as.example")).toEqual([
      "https://as.example/.well-known/oauth-authorization-server",
      "https://as.example/.well-known/openid-configuration",
    ])
    expect(authServerURLs("https://as.example/tenant1")[0]).toBe("https://as.example/.well-known/oauth-authorization-server/tenant1")
    expect(canonicalResource("https://m.example")).toBe("https://m.example/")
    expect(canonicalResource("https://m.example/mcp#x")).toBe("https://m.example/mcp")
  })

  it("refuses a callback whose state does not match, and uses the pending state once", async () => {
    startedHere()
    await expect(completeMcpOAuth("?code=x&state=other")).rejects.toThrow(/state does not match/)
    await expect(completeMcpOAuth("?code=x&state=s1")).rejects.toThrow(/no connection was started/)
  })

  it("refuses a callback from another issuer, or without one where the server promised it (RFC 9207)", async () => {
    let fetched = 0
    vi.stubGlobal("fetch", async () => {
      fetched++
      return new Response("{}", { status: 500 })
    })
    startedHere({ issRequired: true })
    await expect(completeMcpOAuth("?code=x&state=s1&iss=https%3A%2F%2Fevil.example")).rejects.toThrow(/issuer https:\/\/evil.example, not from https:\/\/as.example/)
    startedHere({ issRequired: true })
    await expect(completeMcpOAuth("?code=x&state=s1")).rejects.toThrow(/issuer \(none\)/)
    startedHere({ issRequired: true })
    await expect(completeMcpOAuth("?error=access_denied&state=s1&iss=https%3A%2F%2Fevil.example")).rejects.toThrow(/RFC 9207/)
    expect(fetched).toBe(0)
  })

  it("exchanges the code with the verifier and the resource", async () => {
    startedHere({ codeVerifier: "verifier", returnTo: "/c/abc", issRequired: true })
    let sent: URLSearchParams | null = null
    vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
      expect(url).toBe("https://as.example/token")
      sent = init.body as URLSearchParams
      return new Response(JSON.stringify({ access_token: "at", token_type: "Bearer", refresh_token: "rt" }), { status: 200 })
    })
    const creds = await completeMcpOAuth("?code=abc&state=s1&iss=https%3A%2F%2Fas.example")
    expect(creds.tokens.access_token).toBe("at")
    expect(creds.returnTo).toBe("/c/abc")
    // the client is bound to the issuer that registered it (turn refreshes with that server only)
    expect(creds.client_info).toEqual({ client_id: "c", issuer: "https://as.example" })
    expect(Object.fromEntries(sent!)).toEqual({
      grant_type: "authorization_code",
      code: "abc",
      redirect_uri: "http://localhost/oauth/mcp/callback",
      client_id: "c",
      code_verifier: "verifier",
      resource: "https://m.example/mcp",
    })
  })
})

/** fakeServer answers the discovery of an MCP server at https://m.example/mcp and its authorization server. */
function fakeServer(as: Record<string, unknown> = {}, prm: Record<string, unknown> = {}) {
  const seen: { url: string; init?: RequestInit }[] = []
  vi.stubGlobal("fetch", async (url: string, init?: RequestInit) => {
    seen.push({ url, ...(init ? { init } : {}) })
    const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } })
    if (url === "https://m.example/mcp") return new Response("", { status: 401, headers: { "WWW-Authenticate": 'Bearer resource_metadata="https://m.example/prm"' } })
    if (url === "https://m.example/prm") return json({ resource: "https://m.example/mcp", authorization_servers: ["https://as.example"], ...prm })
    if (url === "https://as.example/.well-known/oauth-authorization-server") {
      return json({
        issuer: "https://as.example",
        authorization_endpoint: "https://as.example/authorize",
        token_endpoint: "https://as.example/token",
        registration_endpoint: "https://as.example/register",
        code_challenge_methods_supported: ["S256"],
        ...as,
      })
    }
    if (url === "https://as.example/register") return json({ client_id: "dcr-client" }, 201)
    return new Response("not found", { status: 404 })
  })
  return seen
}

describe("mcp-oauth flows", () => {
  it("takes metadata only for its own resource: the same origin, at or above the server's path", async () => {
    expect(resourceCovers("https://m.example/mcp", "https://m.example/mcp")).toBe(true)
    expect(resourceCovers("https://m.example/mcp/", "https://m.example/mcp")).toBe(true)
    expect(resourceCovers("https://m.example", "https://m.example/mcp")).toBe(true)
    expect(resourceCovers("https://m.example/mcp", "https://m.example/mcp/tenant")).toBe(true)
    expect(resourceCovers("https://evil.example/mcp", "https://m.example/mcp")).toBe(false)
    expect(resourceCovers("https://m.example:8443/mcp", "https://m.example/mcp")).toBe(false)
    expect(resourceCovers("https://m.example/mc", "https://m.example/mcp")).toBe(false)
    expect(resourceCovers("https://m.example/other", "https://m.example/mcp")).toBe(false)
    expect(resourceCovers("not a url", "https://m.example/mcp")).toBe(false)
    fakeServer({}, { resource: "https://evil.example/mcp" })
    await expect(beginMcpOAuth({ id: "m", name: "M", url: "https://m.example/mcp" }, "")).rejects.toThrow(/for another resource \(https:\/\/evil.example\/mcp\)/)
    expect(sessionStorage.getItem("chat_mcp_oauth_pending")).toBeNull()
  })

  it("chooses the scope: the challenge's, else scopes_supported, else none; offline_access when offered, never alone", () => {
    const d = (scope: string | undefined, supported?: string[], asScopes?: string[]): Discovery => ({
      prm: supported ? { scopes_supported: supported } : {},
      as: { authorization_endpoint: "a", token_endpoint: "t", ...(asScopes ? { scopes_supported: asScopes } : {}) },
      ...(scope ? { scope } : {}),
      legacy: false,
    })
    expect(chooseScope(d("mcp:basic", ["a", "b"]))).toBe("mcp:basic")
    expect(chooseScope(d(undefined, ["a", "b"]))).toBe("a b")
    expect(chooseScope(d(undefined))).toBeUndefined()
    expect(chooseScope(d(undefined, ["a"], ["a", "offline_access"]))).toBe("a offline_access")
    expect(chooseScope(d(undefined, undefined, ["offline_access"]))).toBeUndefined()
    // a step-up asks for what the 403 named with what was asked for before
    expect(chooseScope(d("mcp:basic"), { asked: "mcp:basic", needed: "mcp:basic mcp:write" })).toBe("mcp:basic mcp:write")
    expect(chooseScope(d(undefined), { asked: "a", needed: "b" })).toBe("a b")
  })

  it("identifies the client: pre-registered, else a Client ID Metadata Document from an https page only, else DCR", async () => {
    // This page is http (jsdom's http://localhost): an authorization server's CIMD support is not used.
    const seen = fakeServer({ client_id_metadata_document_supported: true })
    const url = new URL(await beginMcpOAuth({ id: "m", name: "M", url: "https://m.example/mcp" }, ""))
    expect(url.searchParams.get("client_id")).toBe("dcr-client")
    expect(seen.some((r) => r.url === "https://as.example/register")).toBe(true)
    // A user's pre-registered client is used as it is, with the method the server offers for a secret.
    const seen2 = fakeServer({ registration_endpoint: undefined, token_endpoint_auth_methods_supported: ["client_secret_post"] })
    const url2 = new URL(await beginMcpOAuth({ id: "m", name: "M", url: "https://m.example/mcp", client: { client_id: "pre", client_secret: "s" } }, ""))
    expect(url2.searchParams.get("client_id")).toBe("pre")
    expect(seen2.some((r) => r.url.endsWith("/register"))).toBe(false)
    const pending = JSON.parse(sessionStorage.getItem("chat_mcp_oauth_pending")!) as PendingOAuth
    expect(pending.clientInfo).toEqual({ client_id: "pre", client_secret: "s", token_endpoint_auth_method: "client_secret_post" })
    expect(pending.server).toEqual({ id: "m", name: "M", url: "https://m.example/mcp" }) // the secret is not kept with the server
    // Neither a registration endpoint nor CIMD nor a pre-registered client: the user is told what to do.
    fakeServer({ registration_endpoint: undefined })
    await expect(beginMcpOAuth({ id: "m", name: "M", url: "https://m.example/mcp" }, "")).rejects.toThrow(/registers no clients.*client ID/)
  })

  it(`steps up at most ${MAX_STEP_UPS} times per connection, then refuses without asking the server`, async () => {
    const seen = fakeServer()
    const server = { id: "m", name: "M", url: "https://m.example/mcp" }
    const stepUp = 'Bearer error="insufficient_scope", scope="mcp:basic mcp:write"'
    await beginMcpOAuth(server, "")
    for (let i = 0; i < MAX_STEP_UPS; i++) {
      const url = new URL(await beginMcpOAuth(server, "", stepUp))
      expect(url.searchParams.get("scope")).toBe("mcp:basic mcp:write")
    }
    const before = seen.length
    await expect(beginMcpOAuth(server, "", stepUp)).rejects.toThrow(`M still asks for more access (scope mcp:basic mcp:write) after ${MAX_STEP_UPS} authorizations`)
    expect(seen.length).toBe(before)
    // A 401 or another refusal is not a step-up; connecting again (no challenge) starts over.
    await expect(beginMcpOAuth(server, "", 'Bearer error="invalid_token"')).rejects.toThrow(/refused the connection's token \(invalid_token\)/)
    await beginMcpOAuth(server, "")
    await expect(beginMcpOAuth(server, "", stepUp)).resolves.toContain("scope=mcp%3Abasic+mcp%3Awrite")
  })

  it("authenticates at the token endpoint as the client registered: Basic with form-encoded parts, or in the body", async () => {
    for (const method of ["client_secret_basic", "client_secret_post", "none"]) {
      startedHere({ clientInfo: { client_id: "id:1", ...(method === "none" ? {} : { client_secret: "s p" }), token_endpoint_auth_method: method } })
      let sent: { body: URLSearchParams; headers: Record<string, string> } | null = null
      vi.stubGlobal("fetch", async (_url: string, init: RequestInit) => {
        sent = { body: init.body as URLSearchParams, headers: init.headers as Record<string, string> }
        return new Response(JSON.stringify({ access_token: "at" }), { status: 200 })
      })
      await completeMcpOAuth("?code=abc&state=s1")
      const { body, headers } = sent!
      expect(body.get("client_id")).toBe("id:1")
      if (method === "client_secret_basic") {
        expect(headers.Authorization).toBe(`Basic ${btoa("id%3A1:s+p")}`)
        expect(body.has("client_secret")).toBe(false)
      } else {
        expect(headers.Authorization).toBeUndefined()
        expect(body.get("client_secret")).toBe(method === "none" ? null : "s p")
      }
    }
  })
})
