export type Toast = { id: number; level: "success" | "error" | "info" | "warning"; message: string; description?: string }

/** Toasts is the stack of notifications (console toast actions, errors, confirmations). */
export function Toasts({ toasts, onDismiss }: { toasts: Toast[]; onDismiss: (id: number) => void }) {
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast toast-${t.level}`} role={t.level === "error" ? "alert" : "status"}>
          <div>
            <div className="toast-message">{t.message}</div>
            {t.description && <div className="muted">{t.description}</div>}
          </div>
          <button type="button" className="icon" aria-label="Dismiss" onClick={() => onDismiss(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  )
}
