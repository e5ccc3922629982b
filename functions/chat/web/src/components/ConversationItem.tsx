import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useRef, useState } from "react"
import type { Conversation } from "../lib/api"
import { conversationURL } from "../lib/paths"
import { putConversation } from "../lib/queries"
import { useSession } from "../lib/session"

/** The longest title chat takes (docs/chat.md, PATCH /api/conversations/{id}). */
export const TITLE_MAX = 120

/**
 * ConversationItem is one conversation in the sidebar: a link to it, and its rename (in place: Enter or leaving
 * the field saves, Esc cancels; after Enter or Esc, focus returns to the rename button) and delete buttons.
 */
export function ConversationItem({
  conversation: c,
  active,
  onOpen,
  onDelete,
}: {
  conversation: Conversation
  active: boolean
  onOpen: () => void
  onDelete: () => void
}) {
  const { api, fail } = useSession()
  const qc = useQueryClient()
  const [editing, setEditing] = useState(false)
  const [draft, setDraft] = useState("")
  const input = useRef<HTMLInputElement>(null)
  const renameButton = useRef<HTMLButtonElement>(null)
  const open = useRef(false) // the field is being edited: the first of Enter, Esc or leaving it finishes it
  const keyDone = useRef(false) // Enter or Esc finished it: the field closes when that key is released
  const title = c.title || "New conversation"
  useEffect(() => {
    if (editing) input.current?.select()
  }, [editing])

  const start = () => {
    open.current = true
    keyDone.current = false
    setDraft(c.title)
    setEditing(true)
  }
  // finish saves the draft (or not) once per edit.
  const finish = (save: boolean) => {
    if (!open.current) return
    open.current = false
    const next = draft.trim()
    if (!save || next === "" || next === c.title) return
    putConversation(qc, { ...c, title: next }) // shown at once; chat's answer (and Realtime) confirm it
    api
      .renameConversation(c.id, next)
      .then((r) => putConversation(qc, r.conversation))
      .catch((err: unknown) => {
        putConversation(qc, c)
        fail(err)
      })
  }

  return (
    <li className={active ? "active" : ""} data-conversation-id={c.id}>
      {editing ? (
        <input
          ref={input}
          className="rename"
          aria-label={`New title for ${title}`}
          value={draft}
          maxLength={TITLE_MAX}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={() => {
            finish(true) // the user went elsewhere: focus stays where they put it
            setEditing(false)
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" || e.key === "Escape") {
              e.preventDefault()
              e.stopPropagation()
              finish(e.key === "Enter")
              keyDone.current = true
            }
          }}
          onKeyUp={() => {
            // The field stays until the key that finished it is released, so no part of that key press (the
            // browser may deliver Enter's keypress after other tasks have run) reaches the rename button, which
            // would open the field again; focus then goes back to that button, blurring the field.
            if (keyDone.current) renameButton.current?.focus()
          }}
        />
      ) : (
        <a
          href={conversationURL(c.id)}
          aria-current={active ? "page" : undefined}
          onClick={(e) => {
            e.preventDefault()
            onOpen()
          }}
          onDoubleClick={start}
        >
          {title}
        </a>
      )}
      <button
        type="button"
        className="icon rename-button"
        ref={renameButton}
        aria-label={`Rename ${title}`}
        onClick={start}
      >
        <span aria-hidden="true">✎</span>
      </button>
      <button type="button" className="icon delete-button" aria-label={`Delete ${title}`} onClick={onDelete}>
        <span aria-hidden="true">×</span>
      </button>
    </li>
  )
}
