/** The first screen's suggestions: what the agent does well, one click away. */
export const SUGGESTIONS = [
  { title: "Tour my project", prompt: "What is in my Appwrite project? List my databases and buckets." },
  { title: "Write code", prompt: "Show a TypeScript example that creates a row with the Appwrite Web SDK." },
  { title: "Usage", prompt: "Chart my project's requests over the last day." },
  { title: "Learn", prompt: "Explain Appwrite Realtime channels in a few lines." },
]

/** EmptyState is a new chat's first screen: what the agent is, and suggested prompts (a click sends one). */
export function EmptyState({ onPick, disabled }: { onPick: (prompt: string) => void; disabled: boolean }) {
  return (
    <div className="empty-state">
      <h2>Ask the Appwrite agent</h2>
      <p className="muted">It answers questions, searches the web, writes code, and acts on your project through connected MCP servers.</p>
      <ul className="suggestions" aria-label="Suggested prompts">
        {SUGGESTIONS.map((s) => (
          <li key={s.title}>
            <button type="button" className="suggestion" disabled={disabled} onClick={() => onPick(s.prompt)}>
              <strong>{s.title}</strong>
              <span className="muted">{s.prompt}</span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  )
}
