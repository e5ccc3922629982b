// The one query layer for what chat keeps (docs/chat.md): conversations and their messages, the agent
// settings, memories, MCP connections and the engine's readiness, cached by TanStack Query under the keys
// below. The cache belongs to one signed-in user (SignedIn makes it), and a finished turn refreshes what a turn
// can change (refreshAfterTurn).
import { QueryClient, useQuery } from "@tanstack/react-query"
import { APIError, type ChatAPI, type Conversation, type Message } from "./api"
import { mergeList, mergeOne, newer } from "./conversations"

export const keys = {
  conversations: ["conversations"] as const,
  conversation: (id: string) => ["conversation", id] as const,
  settings: ["settings"] as const,
  memories: ["memories"] as const,
  mcp: ["mcp"] as const,
  engine: ["engine"] as const,
  automations: ["automations"] as const,
  automationEvents: (connectionId: string) => ["automation-events", connectionId] as const,
}

export type ConversationData = { conversation: Conversation; messages: Message[] }

/**
 * newQueryClient is a user's cache. Nothing is retried behind the page's back (a 404 or a lost session is an
 * answer, not a fault) and nothing is read again on focus: conversations change through the page's own turns
 * and Realtime; the settings sheet reads its data again each time it opens.
 */
export function newQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, staleTime: Infinity, refetchOnWindowFocus: false, refetchOnReconnect: false },
      mutations: { retry: false },
    },
  })
}

/**
 * readConversations reads the list from chat and merges it with the cache as it is when the answer arrives:
 * a row Realtime sent while the read was on its way is newer than the answer (conversations.ts), so the
 * answer must not put the old title back.
 */
export async function readConversations(api: ChatAPI, qc: QueryClient): Promise<Conversation[]> {
  const fetched = (await api.conversations()).conversations
  return mergeList(qc.getQueryData<Conversation[]>(keys.conversations) ?? [], fetched)
}

/** readConversation reads one conversation and its messages, keeping a newer row of it from the cached list. */
export async function readConversation(api: ChatAPI, qc: QueryClient, id: string): Promise<ConversationData> {
  const d = await api.conversation(id)
  const known = qc.getQueryData<Conversation[]>(keys.conversations)?.find((c) => c.id === id)
  return { ...d, conversation: newer(known, d.conversation) }
}

/** useConversations is the user's conversations, most recently updated first (a row Realtime sent later wins). */
export function useConversations(api: ChatAPI, qc: QueryClient) {
  return useQuery({ queryKey: keys.conversations, queryFn: () => readConversations(api, qc) })
}

/** useConversation is one conversation and its messages (chat stores a finished turn when it is read). */
export function useConversation(api: ChatAPI, qc: QueryClient, id: string | null) {
  return useQuery({
    queryKey: keys.conversation(id ?? ""),
    queryFn: () => readConversation(api, qc, id ?? ""),
    enabled: id !== null,
  })
}

// The settings sheet's data: read again each time the sheet opens (staleTime 0).
export function useSettings(api: ChatAPI) {
  return useQuery({ queryKey: keys.settings, queryFn: () => api.settings(), staleTime: 0 })
}
export function useMemories(api: ChatAPI) {
  return useQuery({ queryKey: keys.memories, queryFn: async () => (await api.memories()).memories, staleTime: 0 })
}
export function useMcpConnections(api: ChatAPI) {
  return useQuery({ queryKey: keys.mcp, queryFn: async () => (await api.mcpConnections()).connections, staleTime: 0 })
}
export function useEngine(api: ChatAPI) {
  return useQuery({ queryKey: keys.engine, queryFn: () => api.engine(), staleTime: 0 })
}

/** useAutomations is the user's automations, read again each time the automations sheet opens. */
export function useAutomations(api: ChatAPI) {
  return useQuery({ queryKey: keys.automations, queryFn: async () => (await api.automations()).automations, staleTime: 0 })
}

/** useAutomationEvents is events/list of a connection: only the events its token may use (none for null). */
export function useAutomationEvents(api: ChatAPI, connectionId: string | null) {
  return useQuery({
    queryKey: keys.automationEvents(connectionId ?? ""),
    queryFn: async () => (await api.automationEvents(connectionId ?? "")).events,
    enabled: connectionId !== null && connectionId !== "",
    staleTime: 60_000,
  })
}

/**
 * onQueryError calls report with each failed read of the cache (and its key), as it fails; it returns the
 * unsubscribe function.
 */
export function onQueryError(qc: QueryClient, report: (err: unknown, key: readonly unknown[]) => void): () => void {
  return qc.getQueryCache().subscribe((ev) => {
    if (ev.type === "updated" && ev.action.type === "error") report(ev.action.error, ev.query.queryKey)
  })
}

/** isMissingConversation tells a conversation read answered 404 (gone, or another user's). */
export function isMissingConversation(err: unknown, key: readonly unknown[]): boolean {
  return key[0] === "conversation" && err instanceof APIError && err.status === 404
}

/** putConversation puts one conversation (read from chat or sent by Realtime) into the list. */
export function putConversation(qc: QueryClient, c: Conversation): void {
  qc.setQueryData<Conversation[]>(keys.conversations, (all) => mergeOne(all ?? [], c))
  qc.setQueryData<ConversationData>(keys.conversation(c.id), (d) => (d ? { ...d, conversation: c } : d))
}

/** removeConversation drops a deleted conversation from the cache. */
export function removeConversation(qc: QueryClient, id: string): void {
  qc.setQueryData<Conversation[]>(keys.conversations, (all) => (all ?? []).filter((c) => c.id !== id))
  qc.removeQueries({ queryKey: keys.conversation(id) })
}

/** startedTurn records what POST /api/turns answered: the conversation first in the list, its two new messages. */
export function startedTurn(qc: QueryClient, conversation: Conversation, messages: Message[]): void {
  qc.setQueryData<Conversation[]>(keys.conversations, (all) => [conversation, ...(all ?? []).filter((c) => c.id !== conversation.id)])
  qc.setQueryData<ConversationData>(keys.conversation(conversation.id), (d) => ({
    conversation,
    messages: [...(d?.messages ?? []), ...messages],
  }))
}

/**
 * refreshAfterTurn reads again what a finished turn changed: its conversation first (reading it is what makes
 * chat store the turn, its memories and refreshed MCP tokens), then the list, the memories and the connections.
 */
export async function refreshAfterTurn(qc: QueryClient, conversationId: string | null): Promise<void> {
  if (conversationId) await qc.invalidateQueries({ queryKey: keys.conversation(conversationId) })
  await Promise.all([
    qc.invalidateQueries({ queryKey: keys.conversations }),
    qc.invalidateQueries({ queryKey: keys.memories }),
    qc.invalidateQueries({ queryKey: keys.mcp }),
    qc.invalidateQueries({ queryKey: keys.automations }),
  ])
}
