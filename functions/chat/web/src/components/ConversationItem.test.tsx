import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { act } from "react"
import { createRoot, type Root } from "react-dom/client"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { ChatAPI, Conversation } from "../lib/api"
import { SessionContext } from "../lib/session"
import { ConversationItem } from "./ConversationItem"

// React's act() wants to know it runs in a test.
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true

const conv: Conversation = { id: "c1", title: "Old title", created_at: "", updated_at: "" }

describe("renaming a conversation in place", () => {
  let host: HTMLElement
  let root: Root
  let renames: string[]

  beforeEach(() => {
    vi.useFakeTimers()
    renames = []
    host = document.createElement("ul")
    document.body.append(host)
    root = createRoot(host)
    const api = {
      renameConversation: (_id: string, title: string) => {
        renames.push(title)
        return Promise.resolve({ conversation: { ...conv, title } })
      },
    } as unknown as ChatAPI
    act(() =>
      root.render(
        <QueryClientProvider client={new QueryClient()}>
          <SessionContext.Provider value={{ api, toast: () => {}, fail: () => {} }}>
            <ConversationItem conversation={conv} active onOpen={() => {}} onDelete={() => {}} />
          </SessionContext.Provider>
        </QueryClientProvider>,
      ),
    )
  })
  afterEach(() => {
    act(() => root.unmount())
    host.remove()
    vi.useRealTimers()
  })

  const field = () => host.querySelector<HTMLInputElement>("input.rename")
  const renameButton = () => host.querySelector<HTMLButtonElement>("button.rename-button")!
  const key = (type: "keydown" | "keyup", k: string) =>
    act(() => {
      field()?.dispatchEvent(new KeyboardEvent(type, { key: k, bubbles: true, cancelable: true }))
    })
  const type = (text: string) =>
    act(() => {
      const input = field()!
      // React reads the value through the element's own setter, as a user's typing sets it.
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!.call(input, text)
      input.dispatchEvent(new Event("input", { bubbles: true }))
    })

  it("saves on Enter once and keeps the field until Enter is released, so its keypress cannot reopen it", () => {
    act(() => renameButton().click())
    act(() => field()!.focus()) // a browser focuses the field as select() selects its text
    expect(field()?.value).toBe("Old title")
    type("New title")
    key("keydown", "Enter")
    // Between Enter's keydown and its keypress the browser may run other tasks (timers included): the field
    // must still hold the focus then, or Enter's keypress would click the rename button and open it again.
    act(() => vi.runAllTimers())
    expect(field()).not.toBeNull()
    expect(document.activeElement).not.toBe(renameButton())
    expect(renames).toEqual(["New title"])
    key("keyup", "Enter")
    expect(field()).toBeNull()
    expect(document.activeElement).toBe(renameButton())
    expect(renames).toEqual(["New title"]) // the blur that closed the field saved nothing more
  })

  it("cancels on Esc and saves when the user goes elsewhere, leaving the focus where they put it", () => {
    act(() => renameButton().click())
    act(() => field()!.focus()) // a browser focuses the field as select() selects its text
    type("Never saved")
    key("keydown", "Escape")
    key("keyup", "Escape")
    expect(field()).toBeNull()
    expect(renames).toEqual([])

    const elsewhere = document.createElement("textarea")
    document.body.append(elsewhere)
    act(() => renameButton().click())
    act(() => field()!.focus()) // a browser focuses the field as select() selects its text
    type("Saved on blur")
    act(() => elsewhere.focus())
    act(() => vi.runAllTimers())
    expect(field()).toBeNull()
    expect(renames).toEqual(["Saved on blur"])
    expect(document.activeElement).toBe(elsewhere)
    elsewhere.remove()
  })
})
