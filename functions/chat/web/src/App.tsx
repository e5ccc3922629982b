import type { Models } from "appwrite"
import { useCallback, useEffect, useMemo, useRef, useState } from "react"
import { ChatAPI, readConfig, type ChatConfig } from "./lib/api"
import { connect, currentUser, jwtSource, signIn, signOut, signUp, type Appwrite } from "./lib/appwrite"
import { conversationFromHash, conversationURL, dropsConversation, isCallback } from "./lib/paths"
import { applyTheme, storedTheme, type Theme } from "./lib/theme"
import { SignIn } from "./components/SignIn"
import { SignedIn } from "./components/SignedIn"

// A session's ChatAPI lives in its phase: its JWT cache ends with the session, so a user signing in after
// another never sends the other's JWT.
type Phase =
  | { kind: "loading" }
  | { kind: "broken"; message: string }
  | { kind: "signin"; notice?: string }
  | { kind: "ready"; user: Models.User; api: ChatAPI }

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * App is the shell: the configuration, the session (sign-in form or the signed-in page) and the theme. The
 * signed-in page is a subtree keyed by the user's id, so whatever it holds (conversations, live turns, its
 * query cache, its Realtime subscriptions, toasts) starts fresh for each user by construction.
 */
export function App() {
  const [config, setConfig] = useState<ChatConfig | null>(null)
  const [phase, setPhase] = useState<Phase>({ kind: "loading" })
  const [theme, setTheme] = useState<Theme>(storedTheme())
  const lastUser = useRef<string | null>(null) // who was signed in last (a conversation in the URL is theirs)
  const aw = useMemo<Appwrite | null>(() => (config ? connect(config) : null), [config])

  useEffect(() => applyTheme(theme), [theme])

  useEffect(() => {
    readConfig()
      .then(setConfig)
      .catch((err: unknown) => setPhase({ kind: "broken", message: `The chat service is not available: ${errText(err)}` }))
  }, [])

  /** enter starts a session of user: a new JWT cache; a conversation in the URL stays only for the user it was for. */
  const enter = useCallback((conn: Appwrite, user: Models.User, fresh: boolean) => {
    if (dropsConversation(lastUser.current, user.$id, fresh) && conversationFromHash(window.location.hash)) {
      window.history.replaceState(null, "", conversationURL(null))
    }
    lastUser.current = user.$id
    setPhase({ kind: "ready", user, api: new ChatAPI(jwtSource(conn)) })
  }, [])

  useEffect(() => {
    if (!aw) return
    currentUser(aw)
      .then((user) => (user ? enter(aw, user, false) : setPhase({ kind: "signin" })))
      .catch((err: unknown) => setPhase({ kind: "broken", message: `Appwrite is not reachable: ${errText(err)}` }))
  }, [aw, enter])

  // The signed-in page unmounts first (closing its Realtime socket), then the form shows.
  const sessionEnded = useCallback(() => setPhase({ kind: "signin", notice: "Your session has ended. Sign in again." }), [])
  const signedOut = useCallback(() => {
    if (!aw) return
    void signOut(aw).then(() => {
      lastUser.current = null
      if (!isCallback()) window.history.replaceState(null, "", conversationURL(null))
      setPhase({ kind: "signin" })
    })
  }, [aw])

  if (phase.kind === "broken") return <div className="center error">{phase.message}</div>
  if (phase.kind === "loading" || !aw || !config) return <div className="center muted">Loading…</div>
  if (phase.kind === "signin") {
    return (
      <SignIn
        {...(phase.notice ? { notice: phase.notice } : {})}
        onSignIn={async (email, password) => enter(aw, await signIn(aw, email, password), false)}
        onSignUp={async (email, password, name) => enter(aw, await signUp(aw, email, password, name), true)}
      />
    )
  }
  return (
    <SignedIn
      key={phase.user.$id}
      aw={aw}
      config={config}
      user={phase.user}
      api={phase.api}
      theme={theme}
      onTheme={setTheme}
      onSessionEnded={sessionEnded}
      onSignOut={signedOut}
    />
  )
}
