import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useRef, useState } from "react"
import type { Conversation } from "../lib/api"
import { removeConversation } from "../lib/queries"
import { useSession } from "../lib/session"
import type { Theme } from "../lib/theme"
import { ConfirmDialog } from "./ConfirmDialog"
import { ConversationItem } from "./ConversationItem"

/** matches tells whether a conversation's title holds the search text (case and accents aside). */
export function matches(title: string, search: string): boolean {
  const fold = (s: string) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
  return fold(title || "New conversation").includes(fold(search.trim()))
}

/**
 * Sidebar lists the user's conversations (searched by title, renamed in place, deleted after a confirmation;
 * an automation's marked), and holds the new chat, the automations, the settings, the theme and sign-out. Below 720 px it is a drawer the header's menu
 * button opens: focus goes into it, Esc or the backdrop closes it, and focus returns to the menu button.
 */
export function Sidebar({
  conversations,
  currentId,
  email,
  theme,
  onTheme,
  onNavigate,
  onSettings,
  onAutomations,
  onSignOut,
  open,
  onClose,
}: {
  conversations: Conversation[]
  currentId: string | null
  email: string
  theme: Theme
  onTheme: (t: Theme) => void
  onNavigate: (id: string | null, replace?: boolean) => void
  onSettings: () => void
  onAutomations: () => void
  onSignOut: () => void
  open: boolean
  onClose: () => void
}) {
  const { api, fail, toast } = useSession()
  const qc = useQueryClient()
  const [search, setSearch] = useState("")
  const [deleting, setDeleting] = useState<Conversation | null>(null)
  const first = useRef<HTMLButtonElement>(null)
  const wasOpen = useRef(open)
  useEffect(() => {
    if (open && !wasOpen.current) first.current?.focus()
    if (!open && wasOpen.current) document.getElementById("open-drawer")?.focus()
    wasOpen.current = open
  }, [open])

  const shown = conversations.filter((c) => matches(c.title, search))
  return (
    <nav className="sidebar" id="sidebar" aria-label="Conversations and settings" data-open={open ? "true" : "false"}>
      <div className="sidebar-head">
        <button type="button" className="primary new-chat" ref={first} onClick={() => onNavigate(null)}>
          New chat
        </button>
        <button type="button" className="icon close-drawer" aria-label="Close the menu" onClick={onClose}>
          <span aria-hidden="true">×</span>
        </button>
      </div>
      <button type="button" id="open-automations" className="automations-button" onClick={onAutomations}>
        <span aria-hidden="true">⚡</span> Automations
      </button>
      <input
        type="search"
        id="conversation-search"
        className="search"
        placeholder="Search conversations"
        aria-label="Search conversations by title"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      <ul id="conversations" aria-label="Conversations">
        {shown.map((c) => (
          <ConversationItem
            key={c.id}
            conversation={c}
            active={c.id === currentId}
            onOpen={() => onNavigate(c.id)}
            onDelete={() => setDeleting(c)}
          />
        ))}
        {shown.length === 0 && (
          <li className="muted small empty-list">{search ? `No conversation titled “${search.trim()}”.` : "No conversations yet."}</li>
        )}
      </ul>
      <div className="me">
        <div className="small" id="me">
          {email}
        </div>
        <div className="row-actions">
          <button type="button" onClick={onSettings} id="open-settings">
            Settings
          </button>
          <button type="button" onClick={() => onTheme(theme === "dark" ? "light" : "dark")} aria-label={theme === "dark" ? "Use the light theme" : "Use the dark theme"}>
            {theme === "dark" ? "Light" : "Dark"}
          </button>
          <button type="button" id="sign-out" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </div>
      {deleting && (
        <ConfirmDialog
          title="Delete this conversation?"
          message={`“${deleting.title || "New conversation"}” and its messages will be deleted. This cannot be undone.`}
          confirmLabel="Delete"
          danger
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const c = deleting
            setDeleting(null)
            api
              .deleteConversation(c.id)
              .then(() => {
                removeConversation(qc, c.id)
                toast("success", "Conversation deleted")
                if (c.id === currentId) onNavigate(null, true)
              })
              .catch(fail)
          }}
        />
      )}
    </nav>
  )
}
