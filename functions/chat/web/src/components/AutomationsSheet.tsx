import type { Offer } from "../lib/automations"
import { useAutomations, useMcpConnections } from "../lib/queries"
import { useSession } from "../lib/session"
import { AutomationForm } from "./AutomationForm"
import { AutomationItem } from "./AutomationItem"

/**
 * AutomationsSheet holds the user's automations (docs/chat.md "Automations"): the list, and the form that makes
 * a new one. Opened from a message that read like "when … do …" (offer), it says so and keeps the way to send
 * that message as it is instead; the agent never makes an automation itself.
 */
export function AutomationsSheet({
  offer,
  project,
  onClose,
  onOpenConversation,
  onSendInstead,
}: {
  offer: (Offer & { text: string }) | null
  project: string
  onClose: () => void
  onOpenConversation: (id: string) => void
  onSendInstead: (text: string) => void
}) {
  const { api } = useSession()
  const automations = useAutomations(api)
  const connections = useMcpConnections(api).data ?? []
  const list = automations.data ?? []
  // An offer puts the form first; otherwise the list comes first and the form after it.
  const form = (
    <section aria-labelledby="new-automation-heading">
      <h3 id="new-automation-heading">New automation</h3>
      <AutomationForm key={offer?.text ?? ""} offer={offer} project={project} onCreated={(a) => onOpenConversation(a.conversation_id)} />
    </section>
  )
  const listSection = (
    <section aria-labelledby="automations-heading">
      <h3 id="automations-heading">Your automations</h3>
      <ul className="list" id="automation-list">
        {list.map((a) => (
          <AutomationItem
            key={a.id}
            automation={a}
            connection={connections.find((c) => c.id === a.connection_id)}
            onOpen={() => onOpenConversation(a.conversation_id)}
          />
        ))}
        {list.length === 0 && <li className="muted">{automations.isPending ? "Loading…" : "No automation yet."}</li>}
      </ul>
    </section>
  )
  return (
    <aside className="sheet" id="automations" aria-label="Automations">
      <header>
        <h2>Automations</h2>
        <button type="button" className="icon" aria-label="Close automations" onClick={onClose}>
          <span aria-hidden="true">×</span>
        </button>
      </header>
      <p className="muted small">When an event happens in your project, the agent acts on it in the automation's own conversation, at most a few times an hour.</p>
      {offer && (
        <div className="offer" id="automation-offer" role="status">
          <p>
            “{offer.text}” reads like an automation. Set it up below, or send it as a message.
          </p>
          <button type="button" id="send-instead" onClick={() => onSendInstead(offer.text)}>
            Send as a message
          </button>
        </div>
      )}
      {offer ? (
        <>
          {form}
          {listSection}
        </>
      ) : (
        <>
          {listSection}
          {form}
        </>
      )}
    </aside>
  )
}
