import type { MemoryAction } from "../lib/protocols"

/** MemoryNotice shows what a memory tool call saved or forgot. */
export function MemoryNotice({ actions }: { actions: MemoryAction[] }) {
  return (
    <div className="memory-actions">
      {actions.map((a, i) => (
        <p key={i} className={`notice notice-memory-${a.type}`}>
          {a.type === "set" ? (
            <>
              Remembered <code>{a.key}</code>: {a.content}
            </>
          ) : (
            <>
              Forgot <code>{a.key}</code>
            </>
          )}
        </p>
      ))}
    </div>
  )
}
