import { useEffect, useState } from "react"
import { SignedOutError } from "../lib/api"
import { completeMcpOAuth } from "../lib/mcp-oauth"
import { conversationFromHash, conversationURL } from "../lib/paths"
import { useSession } from "../lib/session"

/** A message for the next page load (the OAuth callback ends with a full navigation back to the root). */
export const FLASH_KEY = "chat_flash"

/** OAuthCallback finishes an MCP OAuth flow: it exchanges the code, hands the tokens to chat, and goes back. */
export function OAuthCallback() {
  const { api, fail } = useSession()
  const [error, setError] = useState("")
  useEffect(() => {
    completeMcpOAuth(window.location.search)
      .then(async (c) => {
        await api.saveMcpConnection(c.id, { name: c.name, url: c.url, description: c.description ?? "", tokens: c.tokens, client_info: c.client_info })
        // Automations whose refresh failed on this connection are subscribed again with the new grant.
        const again = await api.automationsReconnected(c.id).catch(() => null)
        const retried = again?.automations.filter((a) => a.connection_id === c.id) ?? []
        const failing = retried.filter((a) => a.refresh_error).length
        const note = retried.length === 0 ? "" : failing === 0 ? ` (its automations run again)` : ` (${failing} of its automations still fail: see Automations)`
        sessionStorage.setItem(FLASH_KEY, JSON.stringify({ message: `Connected ${c.name}${note}`, settings: retried.length === 0 }))
        // another path: its <base href> differs, so the root is loaded again
        window.location.replace(conversationURL(conversationFromHash(c.returnTo)))
      })
      .catch((err: unknown) => {
        if (err instanceof SignedOutError) fail(err)
        else setError(err instanceof Error ? err.message : String(err))
      })
  }, [api, fail])
  return (
    <main className="center">
      <div className="card" id="oauth-callback">
        {error ? (
          <>
            <h1>Connection failed</h1>
            <p className="error" role="alert">
              {error}
            </p>
            <button type="button" onClick={() => window.location.replace(conversationURL(null))}>
              Back to the chat
            </button>
          </>
        ) : (
          <p className="muted">Finishing the connection…</p>
        )}
      </div>
    </main>
  )
}
