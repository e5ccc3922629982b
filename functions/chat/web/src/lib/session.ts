// What every part of the signed-in page reaches without passing it down: the user's ChatAPI and the ways to
// tell the user something (a toast) or report a failure (a lost session shows the sign-in form).
import { createContext, useContext } from "react"
import type { ChatAPI } from "./api"
import type { Toast } from "../components/Toasts"

export type Notify = (level: Toast["level"], message: string, description?: string) => void

export type SessionTools = {
  api: ChatAPI
  toast: Notify
  /** fail reports an error: a lost session shows the sign-in form, anything else a toast. */
  fail: (err: unknown) => void
}

export const SessionContext = createContext<SessionTools | null>(null)

/** useSession is the signed-in session's tools; only components under SignedIn call it. */
export function useSession(): SessionTools {
  const s = useContext(SessionContext)
  if (!s) throw new Error("useSession outside the signed-in page")
  return s
}
