import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { Settings } from "../lib/api"
import { keys } from "../lib/queries"
import { useSession } from "../lib/session"

/**
 * AgentSettingsForm is the user's own model, base URL and key. The fields start from what chat has (the sheet
 * mounts it once chat has answered; later reads leave what the user types); the key is never shown back.
 */
export function AgentSettingsForm({ settings }: { settings: Settings }) {
  const { api, fail: onError, toast } = useSession()
  const qc = useQueryClient()
  const [model, setModel] = useState(settings.model)
  const [baseURL, setBaseURL] = useState(settings.base_url)
  const [apiKey, setApiKey] = useState("")
  const [busy, setBusy] = useState(false)
  const save = async (patch: { model?: string; base_url?: string; api_key?: string }) => {
    setBusy(true)
    try {
      const s = await api.saveSettings(patch)
      qc.setQueryData(keys.settings, s)
      setApiKey("")
      toast("success", "Agent settings saved")
    } catch (err) {
      onError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
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
  )
}
