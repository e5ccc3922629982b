import type { Message } from "../lib/api"
import { totalUsage, viewOf } from "../lib/events"

const n = (v: number) => v.toLocaleString("en-US")

/** DetailsSheet shows a turn's metadata: ids, routes, tools, tokens (per model call and in all) and the raw timeline. */
export function DetailsSheet({ message, onClose }: { message: Message; onClose: () => void }) {
  const view = viewOf(message.timeline ?? [])
  const tools = Object.values(view.tools)
  const calls = message.usage?.calls ?? view.usage
  const total = message.usage ?? totalUsage(calls)
  return (
    <aside className="sheet" id="metadata" aria-label="Message details">
      <header>
        <h2>Details</h2>
        <button type="button" className="icon" aria-label="Close details" onClick={onClose}>
          <span aria-hidden="true">×</span>
        </button>
      </header>
      <dl className="meta">
        <dt>Message</dt>
        <dd>{message.id}</dd>
        <dt>Turn</dt>
        <dd>{message.turn_id}</dd>
        <dt>Status</dt>
        <dd>{message.status}</dd>
        <dt>Created</dt>
        <dd>{message.created_at}</dd>
        <dt>Routes</dt>
        <dd>{view.routes.map((r) => r.agent).join(" → ") || "–"}</dd>
        <dt>Tool calls</dt>
        <dd>{tools.length ? tools.map((t) => `${t.tool}${t.failed ? " (failed)" : ""}`).join(", ") : "–"}</dd>
        <dt>Tokens</dt>
        <dd id="usage-total">
          {calls.length
            ? `${n(total.total_tokens)} (${n(total.prompt_tokens)} prompt, ${n(total.completion_tokens)} completion) in ${calls.length} model call${calls.length === 1 ? "" : "s"}`
            : "not reported"}
        </dd>
        <dt>Streamed</dt>
        <dd>
          {view.tokenEvents} token events, {view.tokenChars} characters
        </dd>
        <dt>Answer</dt>
        <dd>{message.content.length} characters</dd>
        <dt>Events</dt>
        <dd>{message.timeline?.length ?? 0}</dd>
      </dl>
      {calls.length > 0 && (
        <table className="usage" id="usage-calls">
          <caption>Tokens per model call</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Model</th>
              <th scope="col">Prompt</th>
              <th scope="col">Completion</th>
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((c, i) => (
              <tr key={i}>
                <td>{c.agent || "–"}</td>
                <td>{c.model}</td>
                <td>{n(c.prompt_tokens)}</td>
                <td>{n(c.completion_tokens)}</td>
                <td>{n(c.total_tokens)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details>
        <summary>Timeline</summary>
        <pre tabIndex={0}>{JSON.stringify(message.timeline ?? [], null, 2)}</pre>
      </details>
    </aside>
  )
}
