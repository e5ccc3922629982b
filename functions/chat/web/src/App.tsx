import { ID, type Models, type RealtimeSubscription } from "appwrite"
import { useCallback, useEffect, useMemo, useRef, useState } from "react"
import { APIError, ChatAPI, SignedOutError, readConfig, type ChatConfig, type Conversation, type Message } from "./lib/api"
import { connect, currentUser, jwtSource, signIn, signOut, signUp, type Appwrite } from "./lib/appwrite"
import { checkAttachments, DEFAULT_LIMITS, encodeFile } from "./lib/attachments"
import { applyEvent, emptyTurn, Sequencer, viewOf, type TurnEvent, type TurnView as Turn } from "./lib/events"
import { mergeList, mergeOne } from "./lib/conversations"
import { completeMcpOAuth } from "./lib/mcp-oauth"
import { conversationFromHash, conversationURL, dropsConversation, isCallback } from "./lib/paths"
import { parseConsole } from "./lib/protocols"
import { applyTheme, storedTheme, type Theme } from "./lib/theme"
import { SettingsSheet } from "./components/Settings"
import { SignIn } from "./components/SignIn"
import { Toasts, type Toast } from "./components/Toasts"
import { TurnView } from "./components/TurnView"

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

// A message for the next page load (the OAuth callback ends with a full navigation back to the root).
const FLASH_KEY = "chat_flash"
const onCallback = isCallback()

type ProgressRow = { turn_id?: string; seq?: number; payload?: string; $id?: string }
type ConversationRow = { $id?: string; title?: string; $updatedAt?: string; $createdAt?: string }

export function App() {
  const [config, setConfig] = useState<ChatConfig | null>(null)
  const [phase, setPhase] = useState<Phase>({ kind: "loading" })
  const [conversationId, setConversationId] = useState<string | null>(() => conversationFromHash(window.location.hash))
  const [conversations, setConversations] = useState<Conversation[]>([])
  const [messages, setMessages] = useState<Message[]>([])
  const [live, setLive] = useState<Record<string, Turn>>({})
  const [toasts, setToasts] = useState<Toast[]>([])
  const [theme, setTheme] = useState<Theme>(storedTheme())
  const [settingsOpen, setSettingsOpen] = useState(false)
  const [details, setDetails] = useState<Message | null>(null)
  const [stored, setStored] = useState(0) // counts turns read back stored (memories may have changed)
  const [oauthError, setOauthError] = useState("")

  const aw = useMemo<Appwrite | null>(() => (config ? connect(config) : null), [config])
  const sequencers = useRef(new Map<string, Sequencer>())
  const catchingUp = useRef(new Set<string>())
  const lastHeard = useRef(new Map<string, number>()) // turn id -> when its last event arrived (ms)
  const loadedFor = useRef<string | null>(null)
  const toastSeq = useRef(0)
  const lastUser = useRef<string | null>(null) // who was signed in last (a conversation in the URL is theirs)
  // The message list follows new content while the user is at (or near) its end.
  const listRef = useRef<HTMLDivElement>(null)
  const stick = useRef(true)

  const limits = config?.limits ?? DEFAULT_LIMITS

  useEffect(() => applyTheme(theme), [theme])

  /** navigate shows a conversation (or the new-chat page for null). */
  const navigate = useCallback((id: string | null, replace = false) => {
    const to = conversationURL(id)
    if (onCallback) {
      window.location.replace(to) // another path: its <base href> differs, so load the root again
      return
    }
    if (replace) window.history.replaceState(null, "", to)
    else window.history.pushState(null, "", to)
    setConversationId(id)
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

  const toast = useCallback((level: Toast["level"], message: string, description?: string) => {
    const id = ++toastSeq.current
    setToasts((all) => [...all.slice(-4), { id, level, message, ...(description ? { description } : {}) }])
    window.setTimeout(() => setToasts((all) => all.filter((t) => t.id !== id)), 10_000)
  }, [])

  /** forgetUser drops everything the page holds of the signed-in user, so nothing of it shows to the next. */
  const forgetUser = useCallback(() => {
    sequencers.current.clear()
    catchingUp.current.clear()
    lastHeard.current.clear()
    loadedFor.current = null
    setConversations([])
    setMessages([])
    setLive({})
    setDetails(null)
    setSettingsOpen(false)
    setToasts([])
  }, [])

  /** signedOut shows the sign-in form when the session ended; the URL keeps the conversation for the same user. */
  const signedOut = useCallback(
    (notice: string) => {
      forgetUser()
      setPhase({ kind: "signin", notice })
    },
    [forgetUser],
  )

  const api = phase.kind === "ready" ? phase.api : null

  /** fail reports an error: a lost session shows the sign-in form, anything else a toast. */
  const fail = useCallback(
    (err: unknown) => {
      if (err instanceof SignedOutError) signedOut("Your session has ended. Sign in again.")
      else toast("error", errText(err))
    },
    [signedOut, toast],
  )

  // Configuration, then the session.
  useEffect(() => {
    readConfig()
      .then(setConfig)
      .catch((err: unknown) => setPhase({ kind: "broken", message: `The chat service is not available: ${errText(err)}` }))
  }, [])
  /** enter starts a session of user: a new JWT cache; a conversation in the URL stays only for the user it was for. */
  const enter = useCallback(
    (conn: Appwrite, user: Models.User, fresh: boolean) => {
      if (dropsConversation(lastUser.current, user.$id, fresh) && conversationFromHash(window.location.hash)) navigate(null, true)
      lastUser.current = user.$id
      setPhase({ kind: "ready", user, api: new ChatAPI(jwtSource(conn)) })
    },
    [navigate],
  )

  useEffect(() => {
    if (!aw) return
    currentUser(aw)
      .then((user) => (user ? enter(aw, user, false) : setPhase({ kind: "signin" })))
      .catch((err: unknown) => setPhase({ kind: "broken", message: `Appwrite is not reachable: ${errText(err)}` }))
  }, [aw, enter])

  const ready = phase.kind === "ready"

  // watchTurn starts following a turn; one found running on the server first reads what it already has.
  // (catchUp is reached through a ref: it depends on loadConversation, which calls watchTurn.)
  const catchUpRef = useRef<(turnId: string) => Promise<void>>(async () => undefined)
  const watchTurn = useCallback((turnId: string, fromServer: boolean) => {
    sequencers.current.set(turnId, new Sequencer())
    lastHeard.current.set(turnId, Date.now())
    setLive((all) => ({ ...all, [turnId]: emptyTurn() }))
    if (fromServer) void catchUpRef.current(turnId)
  }, [])

  const loadConversations = useCallback(() => {
    api
      ?.conversations()
      .then((r) => setConversations((all) => mergeList(all, r.conversations)))
      .catch(fail)
  }, [api, fail])

  const loadConversation = useCallback(
    async (id: string) => {
      if (!api) return
      try {
        const r = await api.conversation(id)
        loadedFor.current = id
        setMessages(r.messages)
        setConversations((all) => mergeOne(all, r.conversation))
        for (const m of r.messages) {
          if (m.role === "assistant" && m.status === "running" && !sequencers.current.has(m.turn_id)) watchTurn(m.turn_id, true)
        }
      } catch (err) {
        if (err instanceof APIError && err.status === 404) {
          toast("error", "This conversation does not exist (or is not yours).")
          navigate(null, true)
        } else fail(err)
      }
    },
    [api, fail, navigate, toast, watchTurn],
  )

  // Effects of live events: console toasts and theme changes happen once, when the event arrives.
  const sideEffects = useCallback(
    (ev: TurnEvent) => {
      if (ev.type === "tool_end" && ev.tool === "console" && !ev.failed && ev.output) {
        for (const a of parseConsole(ev.output) ?? []) {
          if (a.type === "toast") toast(a.level, a.message, a.description)
          if (a.type === "set_theme") setTheme(a.theme)
        }
      }
      if (ev.type === "conversation_title" && ev.title) {
        const title = ev.title
        setConversations((all) => all.map((c) => (c.id === loadedFor.current && !c.title ? { ...c, title } : c)))
      }
    },
    [toast],
  )

  const deliver = useCallback(
    (turnId: string, events: TurnEvent[]) => {
      if (events.length === 0) return
      lastHeard.current.set(turnId, Date.now())
      setLive((all) => ({ ...all, [turnId]: events.reduce(applyEvent, all[turnId] ?? emptyTurn()) }))
      events.forEach(sideEffects)
      if (events.some((e) => e.type === "complete")) {
        sequencers.current.delete(turnId)
        if (loadedFor.current) void loadConversation(loadedFor.current).then(() => setStored((n) => n + 1))
        loadConversations()
      }
    },
    [sideEffects, loadConversation, loadConversations],
  )

  /** catchUp reads the events chat has after the last one delivered (a gap, or a turn found running). */
  const catchUp = useCallback(
    async (turnId: string) => {
      const seq = sequencers.current.get(turnId)
      if (!api || !seq || catchingUp.current.has(turnId)) return
      catchingUp.current.add(turnId)
      try {
        const r = await api.events(turnId, seq.last)
        deliver(turnId, r.events.flatMap((e) => seq.push(e.seq, e.event)))
      } catch (err) {
        fail(err)
      } finally {
        catchingUp.current.delete(turnId)
      }
    },
    [api, deliver, fail],
  )

  useEffect(() => {
    catchUpRef.current = catchUp
  }, [catchUp])

  // Realtime: progress rows of the user's turns, and the user's conversation rows (titles).
  const handleProgress = useCallback((row: ProgressRow) => {
    const turnId = row.turn_id
    const seq = turnId ? sequencers.current.get(turnId) : undefined
    if (!turnId || !seq || typeof row.seq !== "number" || typeof row.payload !== "string") return
    let ev: TurnEvent
    try {
      ev = JSON.parse(row.payload) as TurnEvent
    } catch {
      return
    }
    deliver(turnId, seq.push(row.seq, ev))
    if (seq.hasGap()) void catchUp(turnId)
  }, [deliver, catchUp])
  const handleConversation = useCallback((row: ConversationRow, events: string[]) => {
    const id = row.$id
    if (!id) return
    if (events.some((e) => e.endsWith(".delete"))) {
      setConversations((all) => all.filter((c) => c.id !== id))
      return
    }
    setConversations((all) => {
      const known = all.find((c) => c.id === id)
      const next: Conversation = {
        id,
        title: row.title ?? known?.title ?? "",
        created_at: row.$createdAt ?? known?.created_at ?? "",
        updated_at: row.$updatedAt ?? known?.updated_at ?? "",
      }
      return mergeOne(all, next)
    })
  }, [])
  // The subscription lives as long as the session; it reaches the current handlers through a ref.
  const handlers = useRef({ progress: handleProgress, conversation: handleConversation })
  useEffect(() => {
    handlers.current = { progress: handleProgress, conversation: handleConversation }
  }, [handleProgress, handleConversation])

  useEffect(() => {
    if (!ready || !aw || !config) return
    let closed = false
    const subs: RealtimeSubscription[] = []
    const progress = `tablesdb.${config.progress.database}.tables.${config.progress.table}.rows`
    const convs = `tablesdb.${config.database}.tables.${config.tables.conversations}.rows`
    aw.realtime
      .subscribe([progress, convs], (msg) => {
        const row = msg.payload as ProgressRow & ConversationRow
        if (msg.channels.some((c) => c.startsWith(progress))) handlers.current.progress(row)
        else if (msg.channels.some((c) => c.startsWith(convs))) handlers.current.conversation(row, msg.events)
      })
      .then((s) => {
        if (closed) void s.unsubscribe()
        else subs.push(s)
      })
      .catch(fail)
    return () => {
      closed = true
      subs.forEach((s) => void s.unsubscribe())
      // The socket is the signed-in user's: Appwrite binds a Realtime connection to the session it opened
      // with, and a session ending does not change it. Closing it makes the next user's subscription open
      // their own, so nothing sent to this user reaches the next.
      void aw.realtime.disconnect()
    }
  }, [ready, aw, config, fail])

  useEffect(() => {
    if (ready) loadConversations()
  }, [ready, loadConversations])

  useEffect(() => {
    if (!ready) return
    if (conversationId) {
      if (loadedFor.current !== conversationId) void loadConversation(conversationId)
    } else {
      loadedFor.current = null
    }
  }, [ready, conversationId, loadConversation])

  // The MCP OAuth callback: exchange the code, hand the tokens to chat, go back.
  useEffect(() => {
    if (!ready || !api || !onCallback) return
    const search = window.location.search
    completeMcpOAuth(search)
      .then(async (c) => {
        await api.saveMcpConnection(c.id, { name: c.name, url: c.url, description: c.description ?? "", tokens: c.tokens, client_info: c.client_info })
        sessionStorage.setItem(FLASH_KEY, JSON.stringify({ message: `Connected ${c.name}`, settings: true }))
        navigate(conversationFromHash(c.returnTo), true)
      })
      .catch((err: unknown) => {
        if (err instanceof SignedOutError) fail(err)
        else setOauthError(errText(err))
      })
  }, [ready, api, navigate, fail])

  // What the previous page load left to say (a finished MCP connection).
  useEffect(() => {
    if (!ready) return
    const raw = sessionStorage.getItem(FLASH_KEY)
    if (!raw) return
    sessionStorage.removeItem(FLASH_KEY)
    try {
      const flash = JSON.parse(raw) as { message: string; settings?: boolean }
      toast("success", flash.message)
      if (flash.settings) window.setTimeout(() => setSettingsOpen(true), 0)
    } catch {
      // a malformed flash is dropped
    }
  }, [ready, toast])

  useEffect(() => {
    const el = listRef.current
    if (el && stick.current) el.scrollTop = el.scrollHeight
  }, [messages, live, conversationId])

  // Realtime is the way events arrive; should it fall silent (a dropped socket, a lost row), a running
  // turn is read from chat after 15 s without news, so the page never waits forever.
  useEffect(() => {
    if (!ready) return
    const timer = window.setInterval(() => {
      const now = Date.now()
      for (const turnId of sequencers.current.keys()) {
        if (now - (lastHeard.current.get(turnId) ?? now) > 15_000) {
          lastHeard.current.set(turnId, now)
          void catchUp(turnId)
        }
      }
    }, 5_000)
    return () => window.clearInterval(timer)
  }, [ready, catchUp])

  // A new chat shows no messages (those of the last conversation stay in state until another loads).
  const shown = conversationId ? messages : []
  const running = shown.some((m) => m.role === "assistant" && m.status === "running" && !live[m.turn_id]?.complete)

  const send = useCallback(
    async (text: string, files: File[]): Promise<boolean> => {
      if (!api) return false
      const problem = checkAttachments(files, limits, text.length)
      if (problem) {
        toast("error", problem)
        return false
      }
      const turnId = ID.unique()
      watchTurn(turnId, false) // subscribed before the turn starts: nothing is missed
      try {
        const attachments = await Promise.all(files.map(encodeFile))
        const r = await api.startTurn({ ...(conversationId ? { conversation_id: conversationId } : {}), turn_id: turnId, message: text, attachments })
        loadedFor.current = r.conversation.id
        setConversations((all) => [r.conversation, ...all.filter((c) => c.id !== r.conversation.id)])
        if (conversationId === r.conversation.id) setMessages((all) => [...all, ...r.messages])
        else {
          setMessages(r.messages)
          navigate(r.conversation.id)
        }
        return true
      } catch (err) {
        sequencers.current.delete(turnId)
        fail(err)
        return false
      }
    },
    [api, limits, conversationId, navigate, fail, toast, watchTurn],
  )

  if (phase.kind === "loading") return <div className="center muted">Loading…</div>
  if (phase.kind === "broken") return <div className="center error">{phase.message}</div>
  if (!aw) return <div className="center muted">Loading…</div>
  if (phase.kind === "signin") {
    return (
      <SignIn
        {...(phase.notice ? { notice: phase.notice } : {})}
        onSignIn={async (email, password) => enter(aw, await signIn(aw, email, password), false)}
        onSignUp={async (email, password, name) => enter(aw, await signUp(aw, email, password, name), true)}
      />
    )
  }
  if (!api) return <div className="center muted">Loading…</div>

  if (onCallback) {
    return (
      <div className="center">
        <div className="card" id="oauth-callback">
          {oauthError ? (
            <>
              <h1>Connection failed</h1>
              <p className="error" role="alert">
                {oauthError}
              </p>
              <button type="button" onClick={() => navigate(null, true)}>
                Back to the chat
              </button>
            </>
          ) : (
            <p className="muted">Finishing the connection…</p>
          )}
        </div>
      </div>
    )
  }

  const lastAssistant = [...shown].reverse().find((m) => m.role === "assistant")
  const current = conversations.find((c) => c.id === conversationId)

  return (
    <div className="app">
      <nav className="sidebar" aria-label="Conversations">
        <button type="button" className="primary new-chat" onClick={() => navigate(null)}>
          New chat
        </button>
        <ul id="conversations">
          {conversations.map((c) => (
            <li key={c.id} className={c.id === conversationId ? "active" : ""} data-conversation-id={c.id}>
              <a
                href={conversationURL(c.id)}
                onClick={(e) => {
                  e.preventDefault()
                  navigate(c.id)
                }}
              >
                {c.title || "New conversation"}
              </a>
              <button
                type="button"
                className="icon"
                aria-label={`Delete ${c.title || "conversation"}`}
                onClick={() => {
                  if (!window.confirm(`Delete "${c.title || "New conversation"}"?`)) return
                  api
                    .deleteConversation(c.id)
                    .then(() => {
                      setConversations((all) => all.filter((x) => x.id !== c.id))
                      if (c.id === conversationId) navigate(null, true)
                    })
                    .catch(fail)
                }}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
        <div className="me">
          <div className="small" id="me">
            {phase.user.email}
          </div>
          <div className="row-actions">
            <button type="button" onClick={() => setSettingsOpen(true)} id="open-settings">
              Settings
            </button>
            <button type="button" onClick={() => setTheme(theme === "dark" ? "light" : "dark")} aria-label="Toggle theme">
              {theme === "dark" ? "Light" : "Dark"}
            </button>
            <button
              type="button"
              onClick={() => {
                void signOut(aw).then(() => {
                  forgetUser()
                  lastUser.current = null
                  navigate(null, true)
                  setPhase({ kind: "signin" })
                })
              }}
            >
              Sign out
            </button>
          </div>
        </div>
      </nav>

      <main className="main">
        <header className="topbar">
          <h1 id="conversation-title">{conversationId ? current?.title || "New conversation" : "New chat"}</h1>
        </header>
        <div
          className="messages"
          id="messages"
          ref={listRef}
          onScroll={(e) => {
            const el = e.currentTarget
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120
          }}
        >
          {!conversationId && (
            <div className="empty-state">
              <h2>Ask the Appwrite agent</h2>
              <p className="muted">It can answer questions, search the web, and act on your project through connected MCP servers.</p>
            </div>
          )}
          {shown.map((m) => {
            if (m.role === "user") {
              return (
                <div key={m.id} className="msg msg-user" data-message-id={m.id}>
                  <div className="bubble">{m.content}</div>
                  {m.attachments && m.attachments.length > 0 && (
                    <div className="chips">
                      {m.attachments.map((a) => (
                        <span key={a.name} className="chip">
                          {a.name} <span className="muted">{Math.ceil(a.size / 1024)} KB</span>
                        </span>
                      ))}
                    </div>
                  )}
                </div>
              )
            }
            const liveView = live[m.turn_id]
            const isRunning = m.status === "running" && !(liveView?.complete ?? false)
            const view = m.status === "running" ? (liveView ?? emptyTurn()) : m.timeline && m.timeline.length ? viewOf(m.timeline) : emptyTurn()
            const canAnswer = m === lastAssistant && !running
            return (
              <div key={m.id} className={`msg msg-assistant status-${m.status}`} data-message-id={m.id} data-turn-id={m.turn_id}>
                <TurnView turn={view} running={isRunning} stored={m.content} {...(canAnswer ? { onClarify: (text: string) => void send(text, []) } : {})} />
                {m.error && !view.error && (
                  <p className="error" role="alert">
                    {m.error.detail}
                  </p>
                )}
                {!isRunning && (
                  <button type="button" className="link small" onClick={() => setDetails(m)}>
                    Details
                  </button>
                )}
              </div>
            )
          })}
        </div>
        <Composer limits={limits} disabled={running} onSend={send} onRefuse={(why) => toast("error", why)} />
      </main>

      {settingsOpen && <SettingsSheet api={api} refresh={stored} onClose={() => setSettingsOpen(false)} onError={fail} onNotice={(t) => toast("success", t)} />}
      {details && <MetadataSheet message={details} onClose={() => setDetails(null)} />}
      <Toasts toasts={toasts} onDismiss={(id) => setToasts((all) => all.filter((t) => t.id !== id))} />
    </div>
  )
}

/** Composer is the message box, with attachments by drag and drop or the file picker, checked against the engine's limits. */
function Composer({
  limits,
  disabled,
  onSend,
  onRefuse,
}: {
  limits: ChatConfig["limits"]
  disabled: boolean
  onSend: (text: string, files: File[]) => Promise<boolean>
  onRefuse: (why: string) => void
}) {
  const [text, setText] = useState("")
  const [files, setFiles] = useState<File[]>([])
  const [problem, setProblem] = useState("")
  const [dragging, setDragging] = useState(false)
  const [busy, setBusy] = useState(false)

  const add = (incoming: File[]) => {
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
    if (busy || disabled || (!text.trim() && files.length === 0)) return
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
        <div className="chips" id="pending-attachments">
          {files.map((f, i) => (
            <span key={`${f.name}-${i}`} className="chip">
              {f.name} <span className="muted">{Math.ceil(f.size / 1024)} KB</span>
              <button type="button" className="icon" aria-label={`Remove ${f.name}`} onClick={() => setFiles(files.filter((_, j) => j !== i))}>
                ×
              </button>
            </span>
          ))}
        </div>
      )}
      {problem && (
        <p className="error attach-error" role="alert" id="attach-error">
          {problem}
        </p>
      )}
      <div className="composer-row">
        <label className="attach" title="Attach files (or drop them here)">
          +
          <input
            type="file"
            multiple
            id="file-input"
            onChange={(e) => {
              add([...(e.target.files ?? [])])
              e.target.value = ""
            }}
          />
        </label>
        <textarea
          id="prompt"
          name="message"
          placeholder={disabled ? "The agent is working…" : "Message the agent (drop files to attach)"}
          value={text}
          rows={2}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault()
              void submit()
            }
          }}
        />
        <button type="submit" className="primary" id="send" disabled={busy || disabled}>
          Send
        </button>
      </div>
    </form>
  )
}

/** MetadataSheet shows a turn's metadata: ids, routes, tools, token counts and the raw timeline. */
function MetadataSheet({ message, onClose }: { message: Message; onClose: () => void }) {
  const view = viewOf(message.timeline ?? [])
  const tools = Object.values(view.tools)
  return (
    <aside className="sheet" id="metadata" aria-label="Message details">
      <header>
        <h2>Details</h2>
        <button type="button" className="icon" aria-label="Close details" onClick={onClose}>
          ×
        </button>
      </header>
      <dl className="meta">
        <dt>Message</dt>
        <dd>{message.id}</dd>
        <dt>Turn</dt>
        <dd>{message.turn_id}</dd>
        <dt>Status</dt>
        <dd>{message.status}</dd>
        <dt>Created</dt>
        <dd>{message.created_at}</dd>
        <dt>Routes</dt>
        <dd>{view.routes.map((r) => r.agent).join(" → ") || "–"}</dd>
        <dt>Tool calls</dt>
        <dd>{tools.length ? tools.map((t) => `${t.tool}${t.failed ? " (failed)" : ""}`).join(", ") : "–"}</dd>
        <dt>Tokens</dt>
        <dd>
          {view.tokenEvents} events, {view.tokenChars} characters
        </dd>
        <dt>Answer</dt>
        <dd>{message.content.length} characters</dd>
        <dt>Events</dt>
        <dd>{message.timeline?.length ?? 0}</dd>
      </dl>
      <details>
        <summary>Timeline</summary>
        <pre>{JSON.stringify(message.timeline ?? [], null, 2)}</pre>
      </details>
    </aside>
  )
}
