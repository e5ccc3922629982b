import { parseClarify, parseConsole, parseMemory, type ClarifyAnswer } from "../lib/protocols"
import { ClarifyForm } from "./ClarifyForm"
import { ConsoleActions } from "./ConsoleActions"
import { MemoryNotice } from "./MemoryNotice"

/** ProtocolView renders what a finished tool call returned in one of the agent protocols. */
export function ProtocolView({
  tool,
  output,
  onClarify,
  answered,
}: {
  tool: string
  output: string
  onClarify?: (message: string) => void
  answered?: ClarifyAnswer[]
}) {
  if (tool === "console") {
    const actions = parseConsole(output)
    return actions && actions.length ? <ConsoleActions actions={actions} /> : null
  }
  if (tool === "clarify") {
    const env = parseClarify(output)
    return env ? <ClarifyForm envelope={env} {...(onClarify ? { onSubmit: onClarify } : {})} {...(answered ? { answered } : {})} /> : null
  }
  if (tool === "memory") {
    const actions = parseMemory(output)
    return actions && actions.length ? <MemoryNotice actions={actions} /> : null
  }
  return null
}
