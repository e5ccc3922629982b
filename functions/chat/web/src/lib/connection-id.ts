/**
 * connectionId is the MCP connection id for a connection called name: ^[a-z][a-z0-9_-]{1,35}$, what chat
 * stores and turn accepts (docs/chat.md, "MCP connections").
 */
export function connectionId(name: string): string {
  const s = name.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^[-_]+|[-]+$/g, "").slice(0, 36)
  return /^[a-z][a-z0-9_-]+$/.test(s) ? s : `mcp-${s}`.replace(/-+$/, "").slice(0, 36)
}
