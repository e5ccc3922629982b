import { useState } from "react"
import { useSession } from "../lib/session"

/** CopyButton copies text to the clipboard and says so in a toast (and on itself, for a moment). */
export function CopyButton({ text, label, what }: { text: string; label: string; what: string }) {
  const { toast } = useSession()
  const [done, setDone] = useState(false)
  return (
    <button
      type="button"
      className="copy"
      aria-label={label}
      onClick={() => {
        navigator.clipboard
          .writeText(text)
          .then(() => {
            toast("success", `Copied ${what}`)
            setDone(true)
            window.setTimeout(() => setDone(false), 1500)
          })
          .catch((err: unknown) => toast("error", `Could not copy: ${err instanceof Error ? err.message : String(err)}`))
      }}
    >
      {done ? "Copied" : "Copy"}
    </button>
  )
}
