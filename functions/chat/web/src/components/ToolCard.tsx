import type { ToolCall } from "../lib/events"

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

/** ToolCard shows one tool call (paired by run_id) with its input and output in a collapsible. */
export function ToolCard({ call }: { call: ToolCall }) {
  const label = call.state === "running" ? "running" : call.state === "failed" ? "failed" : "done"
  return (
    <details className={`tool tool-${call.state}`} data-run-id={call.runId} data-tool={call.tool}>
      <summary>
        <span className="tool-name">{call.tool}</span>
        <span className="muted">{call.agent}</span>
        <span className={`pill pill-${call.state}`}>{label}</span>
      </summary>
      <div className="tool-body">
        <div className="tool-label">Input</div>
        <pre className="tool-input">{pretty(call.input) || "(none)"}</pre>
        {call.output !== undefined && (
          <>
            <div className="tool-label">Output</div>
            <pre className="tool-output">{pretty(call.output)}</pre>
          </>
        )}
      </div>
    </details>
  )
}
