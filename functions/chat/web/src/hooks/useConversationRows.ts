// useConversationRows keeps the cached conversations in step with the user's conversation rows through
// Realtime: a title the title function wrote, a rename from another tab, a deletion, an automation that acted
// (its unread mark). onChange hears every changed row (the shown automation conversation is read again: its
// new turn is then followed live).
import type { QueryClient } from "@tanstack/react-query"
import type { RealtimeSubscription } from "appwrite"
import { useEffect } from "react"
import type { ChatConfig, Conversation } from "../lib/api"
import type { Appwrite } from "../lib/appwrite"
import { keys, putConversation, removeConversation } from "../lib/queries"

type ConversationRow = {
  $id?: string
  title?: string
  $updatedAt?: string
  $createdAt?: string
  automation_id?: string | null
  active_at?: string | null
  read_at?: string | null
}

/** unread is chat's rule (docs/chat.md "Automations"): an automation's conversation whose last turn started after it was read. */
export function unread(row: ConversationRow): boolean {
  if (!row.automation_id || !row.active_at) return false
  const active = Date.parse(row.active_at)
  const read = row.read_at ? Date.parse(row.read_at) : NaN
  return Number.isNaN(read) || active > read
}

export function useConversationRows(aw: Appwrite, config: ChatConfig, qc: QueryClient, onChange: (id: string) => void): void {
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
        const automation = row.automation_id ?? known?.automation_id ?? ""
        putConversation(qc, {
          id,
          title: row.title ?? known?.title ?? "",
          created_at: row.$createdAt ?? known?.created_at ?? "",
          updated_at: row.$updatedAt ?? known?.updated_at ?? "",
          ...(automation ? { automation_id: automation, unread: unread(row) } : {}),
        })
        onChange(id)
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
  }, [aw, config, qc, onChange])
}
