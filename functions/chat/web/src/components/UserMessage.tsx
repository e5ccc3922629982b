import type { Message } from "../lib/api"
import { isImage } from "../lib/attachments"
import { clarifyReadable, type ClarifyAnswer, type ClarifyEnvelope } from "../lib/protocols"

/** UserMessage is one message of the user: its text (a clarify answer in words), and its attachments. */
export function UserMessage({ message: m, answers, forms }: { message: Message; answers: ClarifyAnswer[] | null; forms: ClarifyEnvelope[] }) {
  return (
    <div className="msg msg-user" data-message-id={m.id}>
      {answers ? (
        <div className="bubble clarify-answer" data-clarify-answer="true">
          <div className="small muted">{forms[0]?.title ? `Answers to “${forms[0].title}”` : "Answers"}</div>
          <dl>
            {clarifyReadable(answers, forms).map((a) => (
              <div key={a.id}>
                <dt>{a.question}</dt>
                <dd>{a.answer}</dd>
              </div>
            ))}
          </dl>
        </div>
      ) : (
        m.content && <div className="bubble">{m.content}</div>
      )}
      {m.attachments && m.attachments.length > 0 && (
        <ul className="chips attachments" aria-label="Attachments">
          {m.attachments.map((a, i) => (
            <li key={`${a.name}-${i}`} className={`chip${a.thumbnail ? " chip-image" : ""}`}>
              {a.thumbnail && isImage(a) && /^data:image\/(jpeg|png|webp);base64,/.test(a.thumbnail) && (
                <img className="thumb" src={a.thumbnail} alt={`Image ${a.name}`} width={48} height={48} />
              )}
              <span>
                {a.name} <span className="muted">{Math.ceil(a.size / 1024)} KB</span>
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
