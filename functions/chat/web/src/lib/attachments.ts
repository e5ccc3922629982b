// Attachments: the engine's limits checked in the page before anything is read or sent (docs/turn.md,
// "Request"; the limits come from chat's GET /api/config). chat checks them again.

export type Limits = {
  attachments_max_bytes: number
  attachments_max_per_message: number
  request_max_bytes: number
}

/** The engine's defaults (shared/attachment), used until /api/config answers. */
export const DEFAULT_LIMITS: Limits = {
  attachments_max_bytes: 7_500_000,
  attachments_max_per_message: 8,
  request_max_bytes: 10_485_760,
}

export type PendingFile = { name: string; size: number; type: string }

/** base64Length is the length of the base64 text of n bytes. */
export function base64Length(n: number): number {
  return 4 * Math.ceil(n / 3)
}

/**
 * checkAttachments returns why the files cannot be sent together (the engine's wording), or null. `files`
 * are all the attachments of the message, those already accepted first.
 */
export function checkAttachments(files: readonly PendingFile[], limits: Limits, messageChars = 0): string | null {
  if (files.length > limits.attachments_max_per_message) {
    return `Too many attachments (max ${limits.attachments_max_per_message})`
  }
  for (const f of files) {
    if (f.size > limits.attachments_max_bytes) {
      return `Attachment '${f.name}' exceeds max size (${limits.attachments_max_bytes} bytes)`
    }
    if (f.size === 0) return `Attachment '${f.name}' is empty`
  }
  // The request body carries each file as base64 plus its metadata; leave 4 KiB for the JSON around it.
  const body = files.reduce((s, f) => s + base64Length(f.size) + f.name.length + 128, 4096 + messageChars * 6)
  if (body > limits.request_max_bytes) {
    return `The attachments are too large together: the request would be about ${body} bytes (at most ${limits.request_max_bytes})`
  }
  return null
}

/** An attachment as chat's POST /api/turns takes it. */
export type EncodedAttachment = { name: string; mime: string; size: number; content_base64: string }

/** encodeFile reads a file as base64 (without the data: prefix). */
export function encodeFile(file: File): Promise<EncodedAttachment> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => {
      const url = String(reader.result ?? "")
      const comma = url.indexOf(",")
      resolve({ name: file.name, mime: file.type || "application/octet-stream", size: file.size, content_base64: url.slice(comma + 1) })
    }
    reader.onerror = () => reject(reader.error ?? new Error(`reading ${file.name} failed`))
    reader.readAsDataURL(file)
  })
}
