import { useEffect, useMemo, useState } from "react"
import type { ChatConfig } from "../lib/api"
import { checkAttachments, isImage, pastedFiles } from "../lib/attachments"

/**
 * Composer is the message box: Enter sends (Shift+Enter is a new line); files come by the picker, a drop or a
 * paste (a screenshot, copied files), checked against the engine's limits, images shown as thumbnails. While
 * a turn runs, Stop replaces Send (Esc stops too).
 */
export function Composer({
  limits,
  running,
  stopping,
  onSend,
  onStop,
  onRefuse,
}: {
  limits: ChatConfig["limits"]
  running: boolean
  stopping: boolean
  onSend: (text: string, files: File[]) => Promise<boolean>
  onStop: () => void
  onRefuse: (why: string) => void
}) {
  const [text, setText] = useState("")
  const [files, setFiles] = useState<File[]>([])
  const [problem, setProblem] = useState("")
  const [dragging, setDragging] = useState(false)
  const [busy, setBusy] = useState(false)
  const previews = useMemo(() => files.map((f) => (isImage(f) ? URL.createObjectURL(f) : null)), [files])
  useEffect(() => () => previews.forEach((u) => u && URL.revokeObjectURL(u)), [previews])

  const add = (incoming: File[]) => {
    if (incoming.length === 0) return
    const next = [...files, ...incoming]
    const why = checkAttachments(next, limits, text.length)
    if (why) {
      setProblem(why)
      onRefuse(why)
      return
    }
    setProblem("")
    setFiles(next)
  }
  const submit = async () => {
    if (busy || running || (!text.trim() && files.length === 0)) return
    setBusy(true)
    const ok = await onSend(text.trim(), files)
    setBusy(false)
    if (ok) {
      setText("")
      setFiles([])
      setProblem("")
    }
  }
  return (
    <form
      id="composer"
      className={`composer${dragging ? " dragging" : ""}`}
      aria-label="Message the agent"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
      onDragOver={(e) => {
        e.preventDefault()
        setDragging(true)
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault()
        setDragging(false)
        add([...e.dataTransfer.files])
      }}
    >
      {files.length > 0 && (
        <ul className="chips" id="pending-attachments" aria-label="Attachments to send">
          {files.map((f, i) => (
            <li key={`${f.name}-${i}`} className={`chip${previews[i] ? " chip-image" : ""}`}>
              {previews[i] && <img className="thumb" src={previews[i] ?? undefined} alt={`Image ${f.name}`} width={48} height={48} />}
              <span>
                {f.name} <span className="muted">{Math.ceil(f.size / 1024)} KB</span>
              </span>
              <button type="button" className="icon" aria-label={`Remove ${f.name}`} onClick={() => setFiles(files.filter((_, j) => j !== i))}>
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {problem && (
        <p className="error attach-error" role="alert" id="attach-error">
          {problem}
        </p>
      )}
      <div className="composer-row">
        <label className="attach" title="Attach files (or drop or paste them here)">
          <span aria-hidden="true">+</span>
          <input
            type="file"
            multiple
            id="file-input"
            aria-label="Attach files"
            onChange={(e) => {
              add([...(e.target.files ?? [])])
              e.target.value = ""
            }}
          />
        </label>
        <textarea
          id="prompt"
          name="message"
          aria-label="Message"
          placeholder={running ? "The agent is working… (Esc stops it)" : "Message the agent (paste or drop files to attach)"}
          value={text}
          rows={2}
          enterKeyHint="send"
          onChange={(e) => setText(e.target.value)}
          onPaste={(e) => {
            const pasted = pastedFiles(e.clipboardData)
            if (pasted.length === 0) return // text is pasted as text
            e.preventDefault()
            add(pasted)
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault()
              void submit()
            }
          }}
        />
        {running ? (
          <button type="button" className="stop" id="stop" onClick={onStop} disabled={stopping} aria-keyshortcuts="Escape">
            {stopping ? "Stopping…" : "Stop"}
          </button>
        ) : (
          <button type="submit" className="primary" id="send" disabled={busy}>
            Send
          </button>
        )}
      </div>
    </form>
  )
}
