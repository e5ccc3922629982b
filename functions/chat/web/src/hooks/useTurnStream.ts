// useTurnStream follows the user's running turns live (docs/chat.md, "Watching a turn"): the progress rows
// Realtime sends, put in seq order once each (Sequencer), a gap or a turn found running read from chat
// (catch-up), and a watchdog for a turn that falls silent. What the page shows of each turn is a reducer
// over applyEvent.
import type { RealtimeSubscription } from "appwrite"
import { useCallback, useEffect, useReducer, useRef } from "react"
import type { ChatAPI, ChatConfig } from "../lib/api"
import type { Appwrite } from "../lib/appwrite"
import { applyEvent, emptyTurn, Sequencer, type TurnEvent, type TurnView } from "../lib/events"

/** How long a running turn may stay silent before the page reads it from chat, and how often it looks. */
export const SILENCE_MS = 15_000
const WATCHDOG_MS = 5_000

type Turns = Readonly<Record<string, TurnView>>
type Action = { type: "watch"; turnId: string } | { type: "events"; turnId: string; events: TurnEvent[] } | { type: "drop"; turnId: string }

/** turnsReducer is the state of the live turns: each a TurnView built by applyEvent. */
export function turnsReducer(state: Turns, a: Action): Turns {
  switch (a.type) {
    case "watch":
      return state[a.turnId] ? state : { ...state, [a.turnId]: emptyTurn() }
    case "events":
      return { ...state, [a.turnId]: a.events.reduce(applyEvent, state[a.turnId] ?? emptyTurn()) }
    case "drop":
      return Object.fromEntries(Object.entries(state).filter(([id]) => id !== a.turnId))
  }
}

type ProgressRow = { turn_id?: string; seq?: number; type?: string; payload?: string }

export type TurnStreamOptions = {
  api: ChatAPI
  aw: Appwrite
  config: ChatConfig
  /** Every event as it arrives live (console toasts, set_theme, a title). */
  onEvent: (turnId: string, ev: TurnEvent) => void
  /** A turn's `complete` arrived. */
  onComplete: (turnId: string) => void
  onError: (err: unknown) => void
}

export type TurnStream = {
  /** The live view of every watched turn. */
  turns: Turns
  /** watch starts following a turn; one found running on the server (fromServer) is read from chat first. */
  watch: (turnId: string, fromServer: boolean) => void
  /** unwatch stops following a turn (its start failed). */
  unwatch: (turnId: string) => void
}

export function useTurnStream({ api, aw, config, onEvent, onComplete, onError }: TurnStreamOptions): TurnStream {
  const [turns, dispatch] = useReducer(turnsReducer, {})
  const sequencers = useRef(new Map<string, Sequencer>())
  const lastHeard = useRef(new Map<string, number>()) // turn id -> when its last event arrived (ms)
  const catchingUp = useRef(new Set<string>())
  const callbacks = useRef({ onEvent, onComplete, onError })
  useEffect(() => {
    callbacks.current = { onEvent, onComplete, onError }
  }, [onEvent, onComplete, onError])

  const deliver = useCallback((turnId: string, events: TurnEvent[]) => {
    if (events.length === 0) return
    lastHeard.current.set(turnId, Date.now())
    dispatch({ type: "events", turnId, events })
    for (const ev of events) callbacks.current.onEvent(turnId, ev)
    if (events.some((e) => e.type === "complete")) {
      sequencers.current.delete(turnId)
      callbacks.current.onComplete(turnId)
    }
  }, [])

  /** catchUp reads the events chat has after the last one delivered (a gap, a turn found running, silence). */
  const catchUp = useCallback(
    async (turnId: string) => {
      const seq = sequencers.current.get(turnId)
      if (!seq || catchingUp.current.has(turnId)) return
      catchingUp.current.add(turnId)
      try {
        const r = await api.events(turnId, seq.last)
        deliver(turnId, r.events.flatMap((e) => (e.event.type === "stop" ? [] : seq.push(e.seq, e.event))))
      } catch (err) {
        callbacks.current.onError(err)
      } finally {
        catchingUp.current.delete(turnId)
      }
    },
    [api, deliver],
  )

  const watch = useCallback(
    (turnId: string, fromServer: boolean) => {
      if (sequencers.current.has(turnId)) return
      sequencers.current.set(turnId, new Sequencer())
      lastHeard.current.set(turnId, Date.now())
      dispatch({ type: "watch", turnId })
      if (fromServer) void catchUp(turnId)
    },
    [catchUp],
  )

  const unwatch = useCallback((turnId: string) => {
    sequencers.current.delete(turnId)
    lastHeard.current.delete(turnId)
    dispatch({ type: "drop", turnId })
  }, [])

  // Realtime: the progress rows of the user's turns (readable by that user only). The subscription lives as
  // long as the signed-in page; a turn's rows are rendered once it is watched (which happens before the turn
  // starts, so nothing is missed). A stop row (seq 0, docs/turn.md) is a signal to turn, not an event.
  useEffect(() => {
    let closed = false
    let sub: RealtimeSubscription | null = null
    const channel = `tablesdb.${config.progress.database}.tables.${config.progress.table}.rows`
    aw.realtime
      .subscribe(channel, (msg) => {
        const row = msg.payload as ProgressRow
        const turnId = row.turn_id
        const seq = turnId ? sequencers.current.get(turnId) : undefined
        if (!turnId || !seq || row.type === "stop" || typeof row.seq !== "number" || typeof row.payload !== "string") return
        let ev: TurnEvent
        try {
          ev = JSON.parse(row.payload) as TurnEvent
        } catch {
          return
        }
        deliver(turnId, seq.push(row.seq, ev))
        if (seq.hasGap()) void catchUp(turnId)
      })
      .then((s) => {
        if (closed) void s.unsubscribe()
        else sub = s
      })
      .catch((err: unknown) => callbacks.current.onError(err))
    return () => {
      closed = true
      void sub?.unsubscribe()
    }
  }, [aw, config, deliver, catchUp])

  // Realtime is the way events arrive; should it fall silent (a dropped socket, a lost row), a running turn
  // is read from chat after SILENCE_MS without news, so the page never waits forever.
  useEffect(() => {
    const timer = window.setInterval(() => {
      const now = Date.now()
      for (const turnId of sequencers.current.keys()) {
        if (now - (lastHeard.current.get(turnId) ?? now) > SILENCE_MS) {
          lastHeard.current.set(turnId, now)
          void catchUp(turnId)
        }
      }
    }, WATCHDOG_MS)
    return () => window.clearInterval(timer)
  }, [catchUp])

  return { turns, watch, unwatch }
}
