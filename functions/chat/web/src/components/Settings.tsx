import { useCallback, useEffect, useRef, useState } from "react"
import type { ChatAPI, McpConnection, Memory, Settings as AgentSettings } from "../lib/api"
import { connectionId } from "../lib/connection-id"
import { beginMcpOAuth } from "../lib/mcp-oauth"

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * SettingsSheet holds the user's agent settings (model and key, kept by chat: the key is never shown back),
 * MCP connections (connected through OAuth in the browser) and saved memories.
 */
export function SettingsSheet({
  api,
  refresh,
  onClose,
  onError,
  onNotice,
}: {
  api: ChatAPI
  /** changes when a turn was stored: memories and connections are read again */
  refresh: number
  onClose: () => void
  onError: (err: unknown) => void
  onNotice: (text: string) => void
}) {
  const [settings, setSettings] = useState<AgentSettings | null>(null)
  const [model, setModel] = useState("")
  const [baseURL, setBaseURL] = useState("")
  const [apiKey, setApiKey] = useState("")
  const [connections, setConnections] = useState<McpConnection[]>([])
  const [memories, setMemories] = useState<Memory[]>([])
  const [mcpName, setMcpName] = useState("")
  const [mcpURL, setMcpURL] = useState("")
  const [mcpError, setMcpError] = useState("")
  const [busy, setBusy] = useState(false)

  const fetchAll = useCallback(() => Promise.all([api.settings(), api.mcpConnections(), api.memories()]), [api])
  const show = ([s, c, m]: Awaited<ReturnType<typeof fetchAll>>) => {
    setSettings(s)
    setModel(s.model)
    setBaseURL(s.base_url)
    setConnections(c.connections)
    setMemories(m.memories)
  }
  const load = () => fetchAll().then(show).catch(onError)

  useEffect(() => {
    let open = true
    fetchAll()
      .then(([s, c, m]) => {
        if (!open) return
        setSettings(s)
        setModel(s.model)
        setBaseURL(s.base_url)
        setConnections(c.connections)
        setMemories(m.memories)
      })
      .catch(onError)
    return () => {
      open = false
    }
  }, [fetchAll, onError])

  // A turn stored while the sheet is open may have saved a memory or refreshed a connection's tokens; the
  // agent fields are left alone (the user may be editing them).
  const firstRefresh = useRef(refresh)
  useEffect(() => {
    if (refresh === firstRefresh.current) return
    let open = true
    Promise.all([api.mcpConnections(), api.memories()])
      .then(([c, m]) => {
        if (!open) return
        setConnections(c.connections)
        setMemories(m.memories)
      })
      .catch(onError)
    return () => {
      open = false
    }
  }, [api, refresh, onError])

  const save = async (patch: { model?: string; base_url?: string; api_key?: string }) => {
    setBusy(true)
    try {
      const s = await api.saveSettings(patch)
      setSettings(s)
      setApiKey("")
      onNotice("Agent settings saved")
    } catch (err) {
      onError(err)
    } finally {
      setBusy(false)
    }
  }

  const connect = async (c: { id: string; name: string; url: string; description?: string }) => {
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
          ×
        </button>
      </header>

      <section>
        <h3>Agent</h3>
        <p className="muted small">Your own model and key, used for your turns. Kept on the server; the key is never shown again.</p>
        <form
          id="agent-settings"
          onSubmit={(e) => {
            e.preventDefault()
            void save({ model, base_url: baseURL, ...(apiKey ? { api_key: apiKey } : {}) })
          }}
        >
          <label>
            Model
            <input name="model" placeholder="server default" value={model} onChange={(e) => setModel(e.target.value)} />
          </label>
          <label>
            Base URL
            <input name="base_url" placeholder="https://api.openai.com/v1 (server default)" value={baseURL} onChange={(e) => setBaseURL(e.target.value)} />
          </label>
          <label>
            API key
            <input
              name="api_key"
              type="password"
              autoComplete="off"
              placeholder={settings?.api_key_set ? "a key is set (type to replace)" : "server default"}
              value={apiKey}
              onChange={(e) => setApiKey(e.target.value)}
            />
          </label>
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              Save
            </button>
            {settings?.api_key_set && (
              <button type="button" disabled={busy} onClick={() => void save({ api_key: "" })}>
                Remove my key
              </button>
            )}
          </div>
          <p className="muted small" id="api-key-state">
            {settings ? (settings.api_key_set ? "Your key is set." : "No key of yours is set.") : ""}
          </p>
        </form>
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
            void connect({ id: connectionId(name), name, url: mcpURL.trim() })
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
