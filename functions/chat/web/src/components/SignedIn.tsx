import { QueryClientProvider } from "@tanstack/react-query"
import type { Models } from "appwrite"
import { useCallback, useEffect, useMemo, useRef, useState } from "react"
import { SignedOutError, type ChatAPI, type ChatConfig } from "../lib/api"
import type { Appwrite } from "../lib/appwrite"
import { isCallback } from "../lib/paths"
import { isMissingConversation, newQueryClient, onQueryError } from "../lib/queries"
import { SessionContext, type Notify, type SessionTools } from "../lib/session"
import type { Theme } from "../lib/theme"
import { ChatScreen } from "./ChatScreen"
import { OAuthCallback } from "./OAuthCallback"
import { Toasts, type Toast } from "./Toasts"

const TOAST_MS = 10_000
const onCallback = isCallback()

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * SignedIn is everything of one signed-in user: their query cache, toasts and Realtime subscriptions. App keys
 * it by the user's id, so nothing of one user survives into the next user's page; when it unmounts it closes
 * the Realtime socket, which Appwrite binds to the session it opened with (docs/chat.md, "Sign-out").
 */
export function SignedIn({
  aw,
  config,
  user,
  api,
  theme,
  onTheme,
  onSessionEnded,
  onSignOut,
}: {
  aw: Appwrite
  config: ChatConfig
  user: Models.User
  api: ChatAPI
  theme: Theme
  onTheme: (t: Theme) => void
  onSessionEnded: () => void
  onSignOut: () => void
}) {
  const [toasts, setToasts] = useState<Toast[]>([])
  const toastSeq = useRef(0)
  const toast = useCallback<Notify>((level, message, description) => {
    const id = ++toastSeq.current
    setToasts((all) => [...all.slice(-4), { id, level, message, ...(description ? { description } : {}) }])
    window.setTimeout(() => setToasts((all) => all.filter((t) => t.id !== id)), TOAST_MS)
  }, [])
  const fail = useCallback(
    (err: unknown) => {
      if (err instanceof SignedOutError) onSessionEnded()
      else toast("error", errText(err))
    },
    [onSessionEnded, toast],
  )
  const [client] = useState(newQueryClient)
  // A conversation that is not the user's (or gone) is an answer the chat screen handles; every other failed
  // read is reported.
  useEffect(
    () =>
      onQueryError(client, (err, key) => {
        if (!isMissingConversation(err, key)) fail(err)
      }),
    [client, fail],
  )
  const tools = useMemo<SessionTools>(() => ({ api, toast, fail }), [api, toast, fail])

  useEffect(
    () => () => {
      client.clear()
      void aw.realtime.disconnect()
    },
    [aw, client],
  )

  return (
    <QueryClientProvider client={client}>
      <SessionContext.Provider value={tools}>
        {onCallback ? (
          <OAuthCallback />
        ) : (
          <ChatScreen aw={aw} config={config} user={user} theme={theme} onTheme={onTheme} onSignOut={onSignOut} />
        )}
        <Toasts toasts={toasts} onDismiss={(id) => setToasts((all) => all.filter((t) => t.id !== id))} />
      </SessionContext.Provider>
    </QueryClientProvider>
  )
}
