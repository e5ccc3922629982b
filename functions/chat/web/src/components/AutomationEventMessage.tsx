import type { Message } from "../lib/api"
import type { EventMessage } from "../lib/automations"

/**
 * AutomationEventMessage is the message an automation's turn starts with (chat writes it from the event): the
 * event, when it happened and its ids, in a card; the instruction the agent was given under it.
 */
export function AutomationEventMessage({ message: m, event: ev }: { message: Message; event: EventMessage }) {
  const at = Date.parse(ev.at)
  return (
    <div className="msg msg-event" data-message-id={m.id}>
      <div className="event-card" aria-label={`Automation event ${ev.name}`}>
        <div className="event-head">
          <span aria-hidden="true">⚡</span> <strong className="event-name">{ev.name}</strong>
          {!Number.isNaN(at) && <time dateTime={ev.at}> {new Date(at).toLocaleString()}</time>}
        </div>
        <dl className="event-fields">
          {ev.fields
            .filter(([k]) => k !== "created_at" && k !== "updated_at")
            .map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>
                  <code>{v}</code>
                </dd>
              </div>
            ))}
        </dl>
        {ev.instruction && <p className="event-instruction muted small">{ev.instruction}</p>}
      </div>
    </div>
  )
}
