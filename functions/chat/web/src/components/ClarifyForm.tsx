import { useState } from "react"
import { clarifyMessage, type ClarifyAnswer, type ClarifyEnvelope, type ClarifyPrompt } from "../lib/protocols"

function initial(p: ClarifyPrompt): ClarifyAnswer {
  switch (p.kind) {
    case "choice":
      return { id: p.id, kind: "choice", values: [] }
    case "confirm":
      return { id: p.id, kind: "confirm", confirmed: false }
    case "text":
      return { id: p.id, kind: "text", value: p.defaultValue ?? "" }
  }
}

function missing(p: ClarifyPrompt, a: ClarifyAnswer | undefined): boolean {
  if (!p.required || !a) return false
  if (a.kind === "choice") return a.values.length === 0
  if (a.kind === "text") return a.value.trim() === ""
  return false
}

/**
 * ClarifyForm renders a clarify envelope as a form; its answers become the next user message (the protocol's
 * bare JSON). `onSubmit` is absent when the form can no longer be answered; `answered`, the answers of the
 * next user message, fills an answered form back in (read-only), as the Console does.
 */
export function ClarifyForm({
  envelope,
  onSubmit,
  answered,
}: {
  envelope: ClarifyEnvelope
  onSubmit?: (message: string) => void
  answered?: ClarifyAnswer[]
}) {
  const [answers, setAnswers] = useState<ClarifyAnswer[]>(() =>
    envelope.prompts.map((p) => answered?.find((a) => a.id === p.id && a.kind === p.kind) ?? initial(p)),
  )
  const set = (a: ClarifyAnswer) => setAnswers((all) => all.map((x) => (x.id === a.id ? a : x)))
  const disabled = !onSubmit || answered !== undefined
  const incomplete = envelope.prompts.some((p, i) => missing(p, answers[i]))
  const submit = (final: ClarifyAnswer[]) => onSubmit?.(clarifyMessage(final))
  // A single confirm is answered by its two buttons.
  const only = envelope.prompts.length === 1 ? envelope.prompts[0] : undefined
  const onlyConfirm = only?.kind === "confirm"
  return (
    <form
      className={`card clarify${answered ? " answered" : ""}`}
      aria-label={envelope.title || "Questions from the agent"}
      onSubmit={(e) => {
        e.preventDefault()
        if (!incomplete) submit(answers)
      }}
    >
      {envelope.title && <div className="card-title">{envelope.title}</div>}
      {envelope.prompts.map((p, i) => {
        const a = answers[i]
        return (
          <fieldset key={p.id} className={`prompt prompt-${p.kind}`} data-prompt-id={p.id} disabled={disabled}>
            <legend>
              {p.question}
              {p.required && <span className="req"> *</span>}
            </legend>
            {p.hint && <p className="muted">{p.hint}</p>}
            {p.kind === "choice" && a?.kind === "choice" &&
              p.options.map((o) => (
                <label key={o.id} className="option">
                  <input
                    type={p.allowMultiple ? "checkbox" : "radio"}
                    name={`clarify-${p.id}`}
                    value={o.id}
                    checked={a.values.includes(o.id)}
                    onChange={(e) =>
                      set({
                        ...a,
                        values: p.allowMultiple
                          ? e.target.checked
                            ? [...a.values, o.id]
                            : a.values.filter((v) => v !== o.id)
                          : [o.id],
                      })
                    }
                  />
                  <span>{o.label}</span>
                  {o.description && <span className="muted"> {o.description}</span>}
                </label>
              ))}
            {p.kind === "text" && a?.kind === "text" &&
              (p.multiline ? (
                <textarea name={`clarify-${p.id}`} aria-label={p.question} placeholder={p.placeholder} value={a.value} onChange={(e) => set({ ...a, value: e.target.value })} />
              ) : (
                <input name={`clarify-${p.id}`} aria-label={p.question} placeholder={p.placeholder} value={a.value} onChange={(e) => set({ ...a, value: e.target.value })} />
              ))}
            {p.kind === "confirm" && a?.kind === "confirm" && !onlyConfirm && (
              <div className="confirm-row">
                <label className="option">
                  <input type="radio" name={`clarify-${p.id}`} checked={a.confirmed} onChange={() => set({ ...a, confirmed: true })} />
                  <span className={p.danger ? "danger" : ""}>{p.confirmLabel}</span>
                </label>
                <label className="option">
                  <input type="radio" name={`clarify-${p.id}`} checked={!a.confirmed} onChange={() => set({ ...a, confirmed: false })} />
                  <span>{p.cancelLabel}</span>
                </label>
              </div>
            )}
          </fieldset>
        )
      })}
      {!disabled &&
        (only && only.kind === "confirm" ? (
          <div className="actions">
            <button type="button" className={only.danger ? "danger" : "primary"} onClick={() => submit([{ id: only.id, kind: "confirm", confirmed: true }])}>
              {only.confirmLabel}
            </button>
            <button type="button" onClick={() => submit([{ id: only.id, kind: "confirm", confirmed: false }])}>
              {only.cancelLabel}
            </button>
          </div>
        ) : (
          <div className="actions">
            <button type="submit" className="primary" disabled={incomplete}>
              Send answers
            </button>
          </div>
        ))}
    </form>
  )
}
