import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { Settings as AgentSettings } from "../lib/api"
import { connectionId } from "../lib/connection-id"
import { beginMcpOAuth, type McpServerRef } from "../lib/mcp-oauth"
import { keys, useEngine, useMcpConnections, useMemories, useSettings } from "../lib/queries"
import { useSession } from "../lib/session"
import { AgentSettingsForm } from "./AgentSettingsForm"

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * SettingsSheet holds the user's agent settings (model and key, kept by chat: the key is never shown back),
 * whether the engine is ready, MCP connections (connected through OAuth in the browser) and saved memories.
 * Its data is read again each time it opens, and when a turn finishes while it is open.
 */
export function SettingsSheet({ onClose }: { onClose: () => void }) {
  const { api, fail: onError } = useSession()
  const qc = useQueryClient()
  const settingsQ = useSettings(api)
  const engine = useEngine(api)
  const connections = useMcpConnections(api).data ?? []
  const memories = useMemories(api).data ?? []
  const settings: AgentSettings | null = settingsQ.data ?? null
  const [mcpName, setMcpName] = useState("")
  const [mcpURL, setMcpURL] = useState("")
  const [clientID, setClientID] = useState("")
  const [clientSecret, setClientSecret] = useState("")
  const [mcpError, setMcpError] = useState("")
  const load = () => Promise.all([qc.invalidateQueries({ queryKey: keys.mcp }), qc.invalidateQueries({ queryKey: keys.memories })])

  const connect = async (c: McpServerRef) => {
    setMcpError("")
    try {
      const u = new URL(c.url)
      if (u.protocol !== "https:" && u.protocol !== "http:") throw new Error("the URL must be http(s)")
      await beginMcpOAuth(c, window.location.hash)
    } catch (err) {
      setMcpError(`Could not connect ${c.name}: ${message(err)}`)
    }
  }

  return (
    <aside className="sheet" id="settings" aria-label="Settings">
      <header>
        <h2>Settings</h2>
        <button type="button" className="icon" aria-label="Close settings" onClick={onClose}>
          <span aria-hidden="true">×</span>
        </button>
      </header>

      {settings ? <AgentSettingsForm settings={settings} /> : <p className="muted">Loading…</p>}

      <section aria-labelledby="engine-heading">
        <h3 id="engine-heading">Engine</h3>
        <p id="engine-state" className="small" data-ready={engine.data ? String(engine.data.ready) : "unknown"}>
          {engine.isPending ? (
            <span className="muted">Checking the engine…</span>
          ) : engine.data?.ready ? (
            <>
              <span className="pill pill-done">ready</span> The engine can run turns.
            </>
          ) : (
            <>
              <span className="pill pill-failed">not ready</span> {engine.data?.detail || (engine.error ? message(engine.error) : "The engine did not answer.")}
            </>
          )}
        </p>
      </section>

      <section>
        <h3>MCP servers</h3>
        <ul className="list" id="mcp-connections">
          {connections.map((c) => (
            <li key={c.id} data-connection-id={c.id}>
              <div>
                <strong>{c.name || c.id}</strong> <span className={`pill ${c.connected ? "pill-done" : ""}`}>{c.connected ? "connected" : "not connected"}</span>
                <div className="muted small">{c.url}</div>
              </div>
              <div className="row-actions">
                <button type="button" onClick={() => void connect(c)}>
                  {c.connected ? "Reconnect" : "Connect"}
                </button>
                <button
                  type="button"
                  onClick={() =>
                    api
                      .deleteMcpConnection(c.id)
                      .then(load)
                      .catch(onError)
                  }
                >
                  Remove
                </button>
              </div>
            </li>
          ))}
          {connections.length === 0 && <li className="muted">No MCP server yet.</li>}
        </ul>
        <form
          id="mcp-add"
          onSubmit={(e) => {
            e.preventDefault()
            const name = mcpName.trim() || new URL(mcpURL).host
            const id = clientID.trim()
            const client = id ? { client: { client_id: id, ...(clientSecret ? { client_secret: clientSecret } : {}) } } : {}
            void connect({ id: connectionId(name), name, url: mcpURL.trim(), ...client })
          }}
        >
          <label>
            Name
            <input name="mcp_name" placeholder="My server" value={mcpName} onChange={(e) => setMcpName(e.target.value)} />
          </label>
          <label>
            URL
            <input name="mcp_url" type="url" required placeholder="https://mcp.example.com/mcp" value={mcpURL} onChange={(e) => setMcpURL(e.target.value)} />
          </label>
          <details>
            <summary>Client registered by the server&apos;s owner (optional)</summary>
            <p className="muted small">Only for a server whose sign-in does not register clients itself: enter the client ID (and secret) its owner gave you.</p>
            <label>
              Client ID
              <input name="mcp_client_id" autoComplete="off" value={clientID} onChange={(e) => setClientID(e.target.value)} />
            </label>
            <label>
              Client secret
              <input name="mcp_client_secret" type="password" autoComplete="off" value={clientSecret} onChange={(e) => setClientSecret(e.target.value)} />
            </label>
          </details>
          <div className="actions">
            <button type="submit" className="primary">
              Connect with OAuth
            </button>
          </div>
          {mcpError && (
            <p className="error" role="alert">
              {mcpError}
            </p>
          )}
        </form>
      </section>

      <section>
        <h3>Memories</h3>
        <ul className="list" id="memories">
          {memories.map((m) => (
            <li key={m.key} data-memory-key={m.key}>
              <div>
                <code>{m.key}</code> <span className="muted small">{m.category}</span>
                <div>{m.content}</div>
              </div>
              <button
                type="button"
                onClick={() =>
                  api
                    .forgetMemory(m.key)
                    .then(load)
                    .catch(onError)
                }
              >
                Forget
              </button>
            </li>
          ))}
          {memories.length === 0 && <li className="muted">The agent has saved nothing yet. Ask it to remember something.</li>}
        </ul>
      </section>
    </aside>
  )
}
