import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { Automation, McpConnection } from "../lib/api"
import { describeArguments, stateOf, tokens } from "../lib/automations"
import { beginMcpOAuth } from "../lib/mcp-oauth"
import { keys } from "../lib/queries"
import { useSession } from "../lib/session"
import { ConfirmDialog } from "./ConfirmDialog"

function when(iso: string): string {
  const t = Date.parse(iso)
  return Number.isNaN(t) ? "" : new Date(t).toLocaleString()
}

/**
 * AutomationItem is one automation in the automations sheet: what it watches and does, whether it is active
 * (or paused, and by whom), what it has cost, until when its subscription runs, and a failed refresh with its
 * reason and a way to reconnect its MCP server. Pause, resume, open its conversation, delete (after a
 * confirmation: its subscription goes, its conversation stays).
 */
export function AutomationItem({ automation: a, connection, onOpen }: { automation: Automation; connection: McpConnection | undefined; onOpen: () => void }) {
  const { api, fail, toast } = useSession()
  const qc = useQueryClient()
  const [busy, setBusy] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const state = stateOf(a)
  const act = (f: () => Promise<unknown>, done: string) => {
    setBusy(true)
    f()
      .then(() => toast("success", done))
      .catch(fail)
      .finally(() => {
        setBusy(false)
        void qc.invalidateQueries({ queryKey: keys.automations })
      })
  }
  const target = describeArguments(a.arguments)
  return (
    <li className="automation" data-automation-id={a.id} data-status={a.status} data-refresh-error={a.refresh_error ? "true" : "false"}>
      <div className="automation-head">
        <strong className="automation-event">{a.event}</strong>
        {target && <span className="muted"> on {target}</span>} <span className={`pill ${state.tone ? `pill-${state.tone}` : ""} automation-state`}>{state.label}</span>
      </div>
      <p className="automation-instruction">{a.instruction}</p>
      <p className="small muted automation-usage">
        {a.usage.turns} {a.usage.turns === 1 ? "turn" : "turns"} · {tokens(a.usage.total_tokens)} tokens
        {a.usage.limited > 0 && ` · ${a.usage.limited} ${a.usage.limited === 1 ? "event" : "events"} over the limit`}
      </p>
      {a.status === "active" && !a.refresh_error && a.refresh_before && (
        <p className="small muted automation-refresh" data-refresh-before={a.refresh_before}>
          Subscribed; renewed before {when(a.refresh_before)}
        </p>
      )}
      {a.refresh_error && (
        <div className="automation-problem" role="alert">
          <p className="error small automation-refresh-error">{a.refresh_error}</p>
          {connection && (
            <button
              type="button"
              className="reconnect"
              onClick={() => {
                // The OAuth round trip ends on the callback page, which resubscribes this connection's automations.
                beginMcpOAuth({ id: connection.id, name: connection.name, url: connection.url, description: connection.description }, window.location.hash).catch(fail)
              }}
            >
              Reconnect {connection.name || connection.id}
            </button>
          )}
        </div>
      )}
      <div className="row-actions">
        <button type="button" className="open-conversation" onClick={onOpen}>
          Open conversation
        </button>
        {a.status === "active" ? (
          <button type="button" className="pause" disabled={busy} onClick={() => act(() => api.pauseAutomation(a.id), "Automation paused")}>
            Pause
          </button>
        ) : (
          <button type="button" className="resume" disabled={busy} onClick={() => act(() => api.resumeAutomation(a.id), "Automation resumed")}>
            Resume
          </button>
        )}
        <button type="button" className="danger delete" disabled={busy} onClick={() => setDeleting(true)}>
          Delete
        </button>
      </div>
      {deleting && (
        <ConfirmDialog
          title="Delete this automation?"
          message={`Its subscription to ${a.event} is removed and nothing starts turns any more. Its conversation stays.`}
          confirmLabel="Delete"
          danger
          onCancel={() => setDeleting(false)}
          onConfirm={() => {
            setDeleting(false)
            act(
              () =>
                api.deleteAutomation(a.id).then((r) => {
                  if (!r.unsubscribed && r.reason) toast("warning", "Automation deleted", r.reason)
                  void qc.invalidateQueries({ queryKey: keys.conversations })
                }),
              "Automation deleted",
            )
          }}
        />
      )}
    </li>
  )
}
