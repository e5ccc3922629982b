import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { Automation } from "../lib/api"
import { argumentFields, type Offer } from "../lib/automations"
import { keys, useAutomationEvents, useMcpConnections } from "../lib/queries"
import { useSession } from "../lib/session"

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * AutomationForm makes a new automation: one of the user's connected MCP servers, an event of its events/list
 * (so only what its token may use is offered), the event's arguments (its inputSchema), and the instruction.
 * An offer (a message that read like "when … do …") fills it in; nothing is made until the user submits.
 */
export function AutomationForm({ offer, project, onCreated }: { offer: Offer | null; project: string; onCreated: (a: Automation) => void }) {
  const { api, toast } = useSession()
  const qc = useQueryClient()
  const connections = (useMcpConnections(api).data ?? []).filter((c) => c.connected)
  const [connectionId, setConnectionId] = useState("")
  const chosen = connectionId || connections[0]?.id || ""
  const events = useAutomationEvents(api, chosen || null)
  const [event, setEvent] = useState(offer?.event ?? "")
  const [args, setArgs] = useState<Record<string, string>>({ project_id: project, ...(offer?.arguments ?? {}) })
  const [instruction, setInstruction] = useState(offer?.instruction ?? "")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState("")
  const list = events.data ?? []
  // An offered event the server does not offer (or none yet): the first one it does, for the user to check.
  const selected = list.some((e) => e.name === event) ? event : (list[0]?.name ?? "")
  const current = list.find((e) => e.name === selected)
  const fields = argumentFields(current)

  const submit = async () => {
    setError("")
    setBusy(true)
    try {
      const kept = Object.fromEntries(fields.map((f) => [f.name, (args[f.name] ?? "").trim()]).filter(([, v]) => v !== ""))
      const r = await api.createAutomation({ connection_id: chosen, event: selected, arguments: kept, instruction: instruction.trim() })
      await Promise.all([qc.invalidateQueries({ queryKey: keys.automations }), qc.invalidateQueries({ queryKey: keys.conversations })])
      toast("success", "Automation created")
      onCreated(r.automation)
    } catch (err) {
      setError(message(err))
    } finally {
      setBusy(false)
    }
  }

  if (connections.length === 0) {
    return (
      <p className="muted" id="automation-no-connection">
        Connect an MCP events server first (Settings → MCP servers): automations subscribe to its events with your sign-in.
      </p>
    )
  }
  return (
    <form
      id="automation-form"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <label>
        Events server
        <select name="connection" value={chosen} onChange={(e) => setConnectionId(e.target.value)}>
          {connections.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name || c.id}
            </option>
          ))}
        </select>
      </label>
      <label>
        When
        <select name="event" value={selected} onChange={(e) => setEvent(e.target.value)} disabled={list.length === 0} required>
          {list.length === 0 && <option value="">{events.isPending ? "Reading its events…" : "This server offers no events"}</option>}
          {list.map((e) => (
            <option key={e.name} value={e.name}>
              {e.name}
            </option>
          ))}
        </select>
        {current?.description && <span className="muted small">{current.description}</span>}
      </label>
      {fields.map((f) => (
        <label key={f.name}>
          <span>
            {f.name}
            {f.required ? <span className="req"> *</span> : <span className="muted small"> (optional)</span>}
          </span>
          {f.options ? (
            <select name={`arg-${f.name}`} value={args[f.name] ?? ""} onChange={(e) => setArgs({ ...args, [f.name]: e.target.value })}>
              <option value="">any</option>
              {f.options.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          ) : (
            <input
              name={`arg-${f.name}`}
              value={args[f.name] ?? ""}
              required={f.required}
              placeholder={f.description}
              onChange={(e) => setArgs({ ...args, [f.name]: e.target.value })}
            />
          )}
        </label>
      ))}
      <label>
        Do
        <textarea
          name="instruction"
          rows={3}
          required
          maxLength={4000}
          placeholder="Triage the new ticket: read it, set its priority, and tell me why."
          value={instruction}
          onChange={(e) => setInstruction(e.target.value)}
        />
      </label>
      <div className="actions">
        <button type="submit" className="primary" id="automation-create" disabled={busy || !selected}>
          {busy ? "Creating…" : "Create automation"}
        </button>
      </div>
      {error && (
        <p className="error" role="alert" id="automation-error">
          {error}
        </p>
      )}
    </form>
  )
}
