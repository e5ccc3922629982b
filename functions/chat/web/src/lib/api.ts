// The chat function's HTTP API (docs/chat.md): JSON under /api/, the user's Appwrite JWT on every call.
import type { EncodedAttachment, Limits } from "./attachments"
import type { TurnEvent, UsageCall } from "./events"
import { at } from "./paths"

export type ChatConfig = {
  endpoint: string
  project: string
  database: string
  tables: { conversations: string; messages: string; memories: string }
  progress: { database: string; table: string }
  limits: Limits
  build_id?: string
}

/** A conversation; an automation's conversation carries its id, and `unread` once the automation has acted. */
export type Conversation = { id: string; title: string; created_at: string; updated_at: string; automation_id?: string; unread?: boolean }

/** An attachment's metadata as chat stores it; `thumbnail` is a small data: image the page made for an image. */
export type AttachmentMeta = { name: string; mime: string; size: number; thumbnail?: string }

/** Tokens of the whole turn and of each model call (the turn's `usage` events), as chat stores them. */
export type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number; calls: UsageCall[] }

export type Message = {
  id: string
  /** notice: a message of chat itself (an automation created, paused by its rate limit) */
  role: "user" | "assistant" | "notice"
  content: string
  status: "done" | "running" | "failed" | "stopped"
  turn_id: string
  attachments?: AttachmentMeta[]
  timeline?: TurnEvent[]
  error?: { code: string; detail: string }
  usage?: Usage
  created_at: string
}

export type Settings = { model: string; base_url: string; api_key_set: boolean }
export type Memory = { key: string; content: string; category: string; priority: number; active: boolean; updated_at?: string }
export type McpConnection = { id: string; name: string; url: string; description: string; connected: boolean; updated_at?: string }
export type ProgressEvent = { seq: number; time: string; event: TurnEvent }
/** Whether the engine (turn's GET /ready, read by chat) can run turns, and what it says. */
export type EngineStatus = { ready: boolean; status: number; detail: string; checks?: Record<string, unknown> }

/** What an automation has cost: the turns it started (and the events its rate limit refused), their tokens. */
export type AutomationUsage = { turns: number; limited: number; prompt_tokens: number; completion_tokens: number; total_tokens: number }

/** An automation (docs/chat.md "Automations"): an event of an MCP events server and what the agent does then. */
export type Automation = {
  id: string
  conversation_id: string
  connection_id: string
  event: string
  arguments: Record<string, string>
  instruction: string
  status: "active" | "paused"
  pause_reason: "" | "user" | "rate_limit"
  refresh_before: string
  refreshed_at: string
  refresh_error: string
  usage: AutomationUsage
  created_at: string
}

/** An event an MCP events server offers (its events/list entry): the arguments it takes are its inputSchema. */
export type EventType = { name: string; description: string; inputSchema?: JSONSchema }
export type JSONSchema = { type?: string; properties?: Record<string, JSONSchema & { description?: string; pattern?: string; enum?: string[] }>; required?: string[] }

export type NewAutomation = { connection_id: string; event: string; arguments: Record<string, string>; instruction: string }

/** An answer of chat that is not 2xx, with its error body. */
export class APIError extends Error {
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** Thrown when the user must sign in again (the session is gone, so no new JWT can be had). */
export class SignedOutError extends Error {}

/** readConfig reads GET /api/config (no auth). */
export async function readConfig(): Promise<ChatConfig> {
  const res = await fetch(at("api/config"), { headers: { Accept: "application/json" } })
  if (!res.ok) throw await apiError(res)
  return (await res.json()) as ChatConfig
}

async function apiError(res: Response): Promise<APIError> {
  const text = await res.text().catch(() => "")
  try {
    const body = JSON.parse(text) as { error?: string; message?: string }
    return new APIError(res.status, body.error ?? "error", body.message || text || res.statusText)
  } catch {
    return new APIError(res.status, "error", text || `${res.status} ${res.statusText}`)
  }
}

/**
 * A source of JWTs: the cached one, or a new one when chat refused `stale` (a 401). Callers that were refused
 * the same JWT share one renewal. Throws SignedOutError when no JWT can be had (the session is gone).
 */
export type JWTSource = (stale?: string) => Promise<string>

/** ChatAPI calls chat with the user's JWT; a 401 gets a new JWT and one retry. */
export class ChatAPI {
  private readonly jwt: JWTSource

  constructor(jwt: JWTSource) {
    this.jwt = jwt
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let stale: string | undefined
    for (;;) {
      const token = await this.jwt(stale)
      const headers: Record<string, string> = { Accept: "application/json", Authorization: `Bearer ${token}` }
      if (body !== undefined) headers["Content-Type"] = "application/json"
      const res = await fetch(at(path), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      if (res.status === 401 && stale === undefined) {
        await res.text().catch(() => "") // read to the end: the connection is free again
        stale = token
        continue
      }
      if (res.status === 401) throw new SignedOutError((await apiError(res)).message)
      if (!res.ok) throw await apiError(res)
      return (await res.json()) as T
    }
  }

  conversations() {
    return this.call<{ conversations: Conversation[] }>("GET", "api/conversations")
  }
  conversation(id: string) {
    return this.call<{ conversation: Conversation; messages: Message[] }>("GET", `api/conversations/${encodeURIComponent(id)}`)
  }
  renameConversation(id: string, title: string) {
    return this.call<{ conversation: Conversation }>("PATCH", `api/conversations/${encodeURIComponent(id)}`, { title })
  }
  deleteConversation(id: string) {
    return this.call<{ deleted: boolean }>("DELETE", `api/conversations/${encodeURIComponent(id)}`)
  }
  stopTurn(turnId: string) {
    return this.call<{ turn_id: string; stopping: boolean }>("POST", `api/turns/${encodeURIComponent(turnId)}/stop`, {})
  }
  engine() {
    return this.call<EngineStatus>("GET", "api/engine")
  }
  startTurn(body: { conversation_id?: string; turn_id: string; message: string; attachments: EncodedAttachment[] }) {
    return this.call<{ conversation: Conversation; turn: { id: string; execution_id: string; status: string }; messages: Message[] }>(
      "POST",
      "api/turns",
      body,
    )
  }
  events(turnId: string, after: number) {
    return this.call<{ turn_id: string; events: ProgressEvent[]; complete: boolean }>(
      "GET",
      `api/turns/${encodeURIComponent(turnId)}/events?after=${after}`,
    )
  }
  settings() {
    return this.call<Settings>("GET", "api/settings")
  }
  saveSettings(s: { model?: string; base_url?: string; api_key?: string }) {
    return this.call<Settings>("PUT", "api/settings", s)
  }
  memories() {
    return this.call<{ memories: Memory[] }>("GET", "api/memories")
  }
  forgetMemory(key: string) {
    return this.call<{ deleted: boolean }>("DELETE", `api/memories/${encodeURIComponent(key)}`)
  }
  mcpConnections() {
    return this.call<{ connections: McpConnection[] }>("GET", "api/mcp/connections")
  }
  saveMcpConnection(id: string, c: { name: string; url: string; description?: string; tokens?: unknown; client_info?: unknown }) {
    return this.call<McpConnection>("PUT", `api/mcp/connections/${encodeURIComponent(id)}`, c)
  }
  deleteMcpConnection(id: string) {
    return this.call<{ deleted: boolean }>("DELETE", `api/mcp/connections/${encodeURIComponent(id)}`)
  }
  automations() {
    return this.call<{ automations: Automation[] }>("GET", "api/automations")
  }
  automationEvents(connectionId: string) {
    return this.call<{ events: EventType[] }>("GET", `api/automations/events?connection_id=${encodeURIComponent(connectionId)}`)
  }
  createAutomation(a: NewAutomation) {
    return this.call<{ automation: Automation }>("POST", "api/automations", a)
  }
  pauseAutomation(id: string) {
    return this.call<{ automation: Automation }>("POST", `api/automations/${encodeURIComponent(id)}/pause`, {})
  }
  resumeAutomation(id: string) {
    return this.call<{ automation: Automation }>("POST", `api/automations/${encodeURIComponent(id)}/resume`, {})
  }
  deleteAutomation(id: string) {
    return this.call<{ deleted: boolean; unsubscribed: boolean; reason?: string }>("DELETE", `api/automations/${encodeURIComponent(id)}`)
  }
  /** automationsReconnected subscribes again the automations of a connection the user has just reconnected. */
  automationsReconnected(connectionId: string) {
    return this.call<{ automations: Automation[] }>("POST", "api/automations/reconnected", { connection_id: connectionId })
  }
}
