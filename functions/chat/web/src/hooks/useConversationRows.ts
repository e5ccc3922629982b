// useConversationRows keeps the cached conversations in step with the user's conversation rows through
// Realtime: a title the title function wrote, a rename from another tab, a deletion.
import type { QueryClient } from "@tanstack/react-query"
import type { RealtimeSubscription } from "appwrite"
import { useEffect } from "react"
import type { ChatConfig, Conversation } from "../lib/api"
import type { Appwrite } from "../lib/appwrite"
import { keys, putConversation, removeConversation } from "../lib/queries"

type ConversationRow = { $id?: string; title?: string; $updatedAt?: string; $createdAt?: string }

export function useConversationRows(aw: Appwrite, config: ChatConfig, qc: QueryClient): void {
  useEffect(() => {
    let closed = false
    let sub: RealtimeSubscription | null = null
    const channel = `tablesdb.${config.database}.tables.${config.tables.conversations}.rows`
    aw.realtime
      .subscribe(channel, (msg) => {
        const row = msg.payload as ConversationRow
        const id = row.$id
        if (!id) return
        if (msg.events.some((e) => e.endsWith(".delete"))) {
          removeConversation(qc, id)
          return
        }
        const known = qc.getQueryData<Conversation[]>(keys.conversations)?.find((c) => c.id === id)
        putConversation(qc, {
          id,
          title: row.title ?? known?.title ?? "",
          created_at: row.$createdAt ?? known?.created_at ?? "",
          updated_at: row.$updatedAt ?? known?.updated_at ?? "",
        })
      })
      .then((s) => {
        if (closed) void s.unsubscribe()
        else sub = s
      })
      .catch(() => undefined) // the list is read from chat as well; a socket that fails only loses live titles
    return () => {
      closed = true
      void sub?.unsubscribe()
    }
  }, [aw, config, qc])
}
