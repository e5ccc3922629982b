import { useQueryClient } from "@tanstack/react-query"
import { ID, type Models } from "appwrite"
import { useCallback, useEffect, useMemo, useRef, useState } from "react"
import type { ChatConfig, Conversation, Message } from "../lib/api"
import type { Appwrite } from "../lib/appwrite"
import { checkAttachments, DEFAULT_LIMITS, encodeFile } from "../lib/attachments"
import { readsLikeAutomation, type Offer } from "../lib/automations"
import type { TurnEvent } from "../lib/events"
import { conversationFromHash, conversationURL } from "../lib/paths"
import { parseConsole } from "../lib/protocols"
import { isMissingConversation, keys, onQueryError, putConversation, refreshAfterTurn, startedTurn, useConversation, useConversations } from "../lib/queries"
import { useSession } from "../lib/session"
import type { Theme } from "../lib/theme"
import { useConversationRows } from "../hooks/useConversationRows"
import { useTurnStream } from "../hooks/useTurnStream"
import { AutomationsSheet } from "./AutomationsSheet"
import { Composer } from "./Composer"
import { DetailsSheet } from "./DetailsSheet"
import { MessageList } from "./MessageList"
import { FLASH_KEY } from "./OAuthCallback"
import { SettingsSheet } from "./SettingsSheet"
import { Sidebar } from "./Sidebar"

/** readFlash takes the message the previous page load left (the OAuth callback navigates back to the root). */
function readFlash(): { message: string; settings?: boolean } | null {
  const raw = sessionStorage.getItem(FLASH_KEY)
  if (!raw) return null
  sessionStorage.removeItem(FLASH_KEY)
  try {
    const f = JSON.parse(raw) as { message?: unknown; settings?: unknown }
    return typeof f.message === "string" ? { message: f.message, settings: f.settings === true } : null
  } catch {
    return null // a malformed flash is dropped
  }
}

/**
 * ChatScreen is the signed-in chat: the conversations (a sidebar, a drawer on a phone), the messages of the
 * conversation in the URL (#c=<id>) with its running turn followed live, the composer, and the settings and
 * details sheets.
 */
export function ChatScreen({
  aw,
  config,
  user,
  theme,
  onTheme,
  onSignOut,
}: {
  aw: Appwrite
  config: ChatConfig
  user: Models.User
  theme: Theme
  onTheme: (t: Theme) => void
  onSignOut: () => void
}) {
  const { api, toast, fail } = useSession()
  const qc = useQueryClient()
  const [conversationId, setConversationId] = useState<string | null>(() => conversationFromHash(window.location.hash))
  const [drawer, setDrawer] = useState(false)
  const [flash] = useState(readFlash) // what the previous page load left to say (a finished MCP connection)
  const [settingsOpen, setSettingsOpen] = useState(flash?.settings === true)
  const [details, setDetails] = useState<Message | null>(null)
  // The automations sheet, and the message that opened it because it read like "when … do …".
  const [automationsOpen, setAutomationsOpen] = useState(false)
  const [offer, setOffer] = useState<(Offer & { text: string }) | null>(null)
  const [composerKey, setComposerKey] = useState(0) // a new key empties the composer (its offered message was used)
  const [stopping, setStopping] = useState<string | null>(null) // the turn a stop was asked for
  const turnConversation = useRef(new Map<string, string>()) // turn id -> its conversation
  const shownId = useRef(conversationId)
  useEffect(() => {
    shownId.current = conversationId
  }, [conversationId])
  const limits = config.limits ?? DEFAULT_LIMITS

  /** navigate shows a conversation (or the new-chat page for null). */
  const navigate = useCallback((id: string | null, replace = false) => {
    const to = conversationURL(id)
    if (replace) window.history.replaceState(null, "", to)
    else window.history.pushState(null, "", to)
    setConversationId(id)
    setDrawer(false)
  }, [])
  useEffect(() => {
    const onPop = () => setConversationId(conversationFromHash(window.location.hash))
    window.addEventListener("popstate", onPop)
    window.addEventListener("hashchange", onPop)
    return () => {
      window.removeEventListener("popstate", onPop)
      window.removeEventListener("hashchange", onPop)
    }
  }, [])

  const conversations = useConversations(api, qc)
  const conversation = useConversation(api, qc, conversationId)
  // An automation conversation whose automation started a turn is read again: at once when it is shown (the
  // new turn is then followed live, and reading it marks it read), else when it is next opened.
  const onRowChange = useCallback(
    (id: string) => {
      const c = qc.getQueryData<Conversation[]>(keys.conversations)?.find((x) => x.id === id)
      if (c?.automation_id && c.unread) void qc.invalidateQueries({ queryKey: keys.conversation(id) })
    },
    [qc],
  )
  useConversationRows(aw, config, qc, onRowChange)

  // Effects of live events: console toasts and theme changes happen once, when the event arrives.
  const onEvent = useCallback(
    (turnId: string, ev: TurnEvent) => {
      if (ev.type === "tool_end" && ev.tool === "console" && !ev.failed && ev.output) {
        for (const a of parseConsole(ev.output) ?? []) {
          if (a.type === "toast") toast(a.level, a.message, a.description)
          if (a.type === "set_theme") onTheme(a.theme)
        }
      }
      const conv = turnConversation.current.get(turnId)
      if (ev.type === "conversation_title" && ev.title && conv) {
        const known = qc.getQueryData<Conversation[]>(keys.conversations)?.find((c) => c.id === conv)
        if (known && !known.title) putConversation(qc, { ...known, title: ev.title })
      }
    },
    [toast, onTheme, qc],
  )
  const onComplete = useCallback(
    (turnId: string) => {
      setStopping((s) => (s === turnId ? null : s))
      void refreshAfterTurn(qc, turnConversation.current.get(turnId) ?? shownId.current)
    },
    [qc],
  )
  const stream = useTurnStream({ api, aw, config, onEvent, onComplete, onError: fail })
  const { watch, unwatch } = stream
  const liveRef = useRef(stream.turns)
  useEffect(() => {
    liveRef.current = stream.turns
  }, [stream.turns])

  // A conversation that is not the user's: say so and show a new chat.
  useEffect(
    () =>
      onQueryError(qc, (err, key) => {
        if (!isMissingConversation(err, key) || key[1] !== shownId.current) return
        toast("error", "This conversation does not exist (or is not yours).")
        qc.removeQueries({ queryKey: key })
        navigate(null, true)
      }),
    [navigate, qc, toast],
  )

  // A turn found running in a conversation read from chat (a reload mid-turn, another tab) is followed.
  const data = conversation.data
  const messages = useMemo(() => (conversationId ? (data?.messages ?? []) : []), [conversationId, data])
  useEffect(() => {
    for (const m of messages) {
      if (m.role === "assistant" && m.status === "running" && conversationId) {
        turnConversation.current.set(m.turn_id, conversationId)
        watch(m.turn_id, true)
      }
    }
  }, [messages, conversationId, watch])

  useEffect(() => {
    if (flash) toast("success", flash.message)
  }, [flash, toast])

  const runningTurn = [...messages].reverse().find((m) => m.role === "assistant" && m.status === "running" && !stream.turns[m.turn_id]?.complete)?.turn_id ?? null

  const send = useCallback(
    async (text: string, files: File[], asMessage = false): Promise<boolean> => {
      // A message that reads like an automation is offered as one first (the agent cannot make automations).
      const asks = asMessage || files.length > 0 ? null : readsLikeAutomation(text)
      if (asks) {
        setOffer({ ...asks, text })
        setAutomationsOpen(true)
        return false
      }
      const problem = checkAttachments(files, limits, text.length)
      if (problem) {
        toast("error", problem)
        return false
      }
      const turnId = ID.unique()
      watch(turnId, false) // followed before the turn starts: nothing is missed
      if (conversationId) turnConversation.current.set(turnId, conversationId)
      try {
        const attachments = await Promise.all(files.map(encodeFile))
        const r = await api.startTurn({ ...(conversationId ? { conversation_id: conversationId } : {}), turn_id: turnId, message: text, attachments })
        turnConversation.current.set(turnId, r.conversation.id)
        startedTurn(qc, r.conversation, r.messages)
        if (conversationId !== r.conversation.id) navigate(r.conversation.id)
        // The turn may have finished before chat answered (Realtime is quick): read it back now.
        if (liveRef.current[turnId]?.complete) void refreshAfterTurn(qc, r.conversation.id)
        return true
      } catch (err) {
        unwatch(turnId)
        fail(err)
        return false
      }
    },
    [api, limits, conversationId, navigate, fail, toast, watch, unwatch, qc],
  )

  const stop = useCallback(() => {
    if (!runningTurn || stopping === runningTurn) return
    setStopping(runningTurn)
    api.stopTurn(runningTurn).catch((err: unknown) => {
      setStopping(null)
      fail(err)
    })
  }, [api, runningTurn, stopping, fail])

  // Esc stops the running turn (unless it closes something first: a sheet, the drawer, a dialog).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented) return
      if (drawer) {
        setDrawer(false)
        return
      }
      if (settingsOpen || automationsOpen || details || document.querySelector("dialog[open]")) return
      if (runningTurn) {
        e.preventDefault()
        stop()
      }
    }
    window.addEventListener("keydown", onKey)
    return () => window.removeEventListener("keydown", onKey)
  }, [drawer, settingsOpen, automationsOpen, details, runningTurn, stop])

  const current = conversations.data?.find((c) => c.id === conversationId)
  return (
    <div className={`app${drawer ? " drawer-open" : ""}`}>
      <Sidebar
        conversations={conversations.data ?? []}
        currentId={conversationId}
        email={user.email}
        theme={theme}
        onTheme={onTheme}
        onNavigate={navigate}
        onSettings={() => {
          setDrawer(false)
          setSettingsOpen(true)
        }}
        onAutomations={() => {
          setDrawer(false)
          setOffer(null)
          setAutomationsOpen(true)
        }}
        onSignOut={onSignOut}
        open={drawer}
        onClose={() => setDrawer(false)}
      />
      {drawer && <div className="backdrop" aria-hidden="true" onClick={() => setDrawer(false)} />}
      <main className="main" aria-label="Chat">
        <header className="topbar">
          <button
            type="button"
            className="icon menu"
            id="open-drawer"
            aria-label="Conversations and settings"
            aria-controls="sidebar"
            aria-expanded={drawer}
            onClick={() => setDrawer(true)}
          >
            <span aria-hidden="true">☰</span>
          </button>
          <h1 id="conversation-title">{conversationId ? current?.title || "New conversation" : "New chat"}</h1>
        </header>
        <MessageList
          conversationId={conversationId}
          automation={!!current?.automation_id}
          messages={messages}
          live={stream.turns}
          running={runningTurn !== null}
          onSend={(text) => void send(text, [])}
          onDetails={setDetails}
        />
        <Composer
          key={composerKey}
          limits={limits}
          running={runningTurn !== null}
          stopping={stopping !== null && stopping === runningTurn}
          onSend={send}
          onStop={stop}
          onRefuse={(why) => toast("error", why)}
        />
      </main>
      {settingsOpen && <SettingsSheet onClose={() => setSettingsOpen(false)} />}
      {automationsOpen && (
        <AutomationsSheet
          offer={offer}
          project={config.project}
          onClose={() => {
            setAutomationsOpen(false)
            setOffer(null)
          }}
          onOpenConversation={(id) => {
            setAutomationsOpen(false)
            if (offer) setComposerKey((k) => k + 1)
            setOffer(null)
            void qc.invalidateQueries({ queryKey: keys.conversations })
            navigate(id)
          }}
          onSendInstead={(text) => {
            setAutomationsOpen(false)
            setOffer(null)
            void send(text, [], true).then((ok) => ok && setComposerKey((k) => k + 1))
          }}
        />
      )}
      {details && <DetailsSheet message={details} onClose={() => setDetails(null)} />}
    </div>
  )
}
