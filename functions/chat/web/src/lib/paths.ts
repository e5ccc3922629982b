// The page's root URL, read once at start from the document's base (chat inserts <base href>, so it is the
// function's root at any client route: docs/chat.md, "Relative URLs"), and the client routes: a conversation
// is the hash #c=<id>; the one other route is the MCP OAuth callback, oauth/mcp/callback. chat also serves its
// OAuth client metadata document at client-metadata.json.

/** ROOT is the function's root URL (ends with /). */
export const ROOT = new URL("./", document.baseURI).href

/** at resolves a path relative to the function's root: at("api/turns"). */
export function at(path: string): string {
  return new URL(path, ROOT).href
}

/** The MCP OAuth redirect URI: {origin}{root}oauth/mcp/callback. */
export function callbackURL(): string {
  return at("oauth/mcp/callback")
}

/**
 * The URL of chat's OAuth client metadata document: {origin}{root}client-metadata.json, which chat serves
 * (docs/chat.md "MCP connections"). The page names it as its client_id to authorization servers that support
 * Client ID Metadata Documents.
 */
export function clientMetadataURL(): string {
  return at("client-metadata.json")
}

/** isCallback tells whether the page was opened on the OAuth callback route. */
export function isCallback(): boolean {
  return window.location.href.split(/[?#]/)[0] === callbackURL()
}

/** conversationFromHash reads the conversation id of #c=<id>. */
export function conversationFromHash(hash: string): string | null {
  const m = /^#c=([A-Za-z0-9_.-]{1,64})$/.exec(hash)
  return m ? (m[1] ?? null) : null
}

/** conversationURL is the page's URL for a conversation (or the new-chat page for null). */
export function conversationURL(id: string | null): string {
  return id ? `${ROOT}#c=${id}` : ROOT
}

/**
 * dropsConversation tells whether a conversation in the URL is dropped when user signs in: a new account has
 * none, and the conversation of the user signed in before (a session that ended) is not another user's.
 */
export function dropsConversation(previousUser: string | null, user: string, newAccount: boolean): boolean {
  return newAccount || (previousUser !== null && previousUser !== user)
}
