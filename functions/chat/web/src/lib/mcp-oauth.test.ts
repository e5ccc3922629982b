import { afterEach, describe, expect, it, vi } from "vitest"
import { authServerURLs, canonicalResource, completeMcpOAuth, parseBearerChallenge, pkceChallenge, protectedResourceURLs, type PendingOAuth } from "./mcp-oauth"

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
