// Merging what chat answers about conversations with what the page already knows. Realtime (a title set by
// the title function) and chat's reads (after each turn) race: a read that left before the title was set
// can arrive after its Realtime event. The newer row wins, by the row's $updatedAt (updated_at).

import type { Conversation } from "./api"

function time(c: Conversation): number {
  const t = Date.parse(c.updated_at)
  return Number.isNaN(t) ? 0 : t
}

/** newer returns fetched, unless known is the same row updated later. */
export function newer(known: Conversation | undefined, fetched: Conversation): Conversation {
  return known && known.id === fetched.id && time(known) > time(fetched) ? known : fetched
}

/** mergeList is the list chat answered (its rows, its order), each row kept as known when known is newer. */
export function mergeList(known: Conversation[], fetched: Conversation[]): Conversation[] {
  const byId = new Map(known.map((c) => [c.id, c]))
  return fetched.map((c) => newer(byId.get(c.id), c))
}

/** mergeOne puts one conversation read from chat into the list (first when it is new). */
export function mergeOne(known: Conversation[], fetched: Conversation): Conversation[] {
  return known.some((c) => c.id === fetched.id) ? known.map((c) => (c.id === fetched.id ? newer(c, fetched) : c)) : [fetched, ...known]
}
