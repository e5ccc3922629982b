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

/** An attachment as chat's POST /api/turns takes it (`thumbnail`: see makeThumbnail). */
export type EncodedAttachment = { name: string; mime: string; size: number; content_base64: string; thumbnail?: string }

/** The longest thumbnail chat keeps (a data: URL, stored with the message's attachments). */
export const THUMBNAIL_MAX_CHARS = 12_000

/** isImage tells whether a file is an image the browser can show as a thumbnail. */
export function isImage(f: { type?: string; mime?: string }): boolean {
  return /^image\/(png|jpeg|gif|webp|bmp|avif)$/.test(f.type ?? f.mime ?? "")
}

/**
 * makeThumbnail draws an image at most `edge` pixels on its longer side as a JPEG data: URL, small enough to be
 * stored with the message (so the sent message shows it after a reload too); undefined for other files or an
 * image the browser cannot decode.
 */
export async function makeThumbnail(file: File, edge = 128): Promise<string | undefined> {
  if (!isImage(file) || typeof createImageBitmap !== "function") return undefined
  try {
    const bmp = await createImageBitmap(file)
    const scale = Math.min(1, edge / Math.max(bmp.width, bmp.height))
    const canvas = document.createElement("canvas")
    canvas.width = Math.max(1, Math.round(bmp.width * scale))
    canvas.height = Math.max(1, Math.round(bmp.height * scale))
    const ctx = canvas.getContext("2d")
    if (!ctx) return undefined
    ctx.fillStyle = "#ffffff" // a transparent PNG becomes a JPEG on white, not on black
    ctx.fillRect(0, 0, canvas.width, canvas.height)
    ctx.drawImage(bmp, 0, 0, canvas.width, canvas.height)
    bmp.close()
    for (const quality of [0.8, 0.6, 0.4]) {
      const url = canvas.toDataURL("image/jpeg", quality)
      if (url.length <= THUMBNAIL_MAX_CHARS) return url
    }
    return undefined
  } catch {
    return undefined
  }
}

/** encodeFile reads a file as base64 (without the data: prefix), with a thumbnail when it is an image. */
export async function encodeFile(file: File): Promise<EncodedAttachment> {
  const [encoded, thumbnail] = await Promise.all([readBase64(file), makeThumbnail(file)])
  return thumbnail ? { ...encoded, thumbnail } : encoded
}

/** pastedFiles are the files of a paste (a screenshot, copied files); a pasted image without a name gets one. */
export function pastedFiles(data: DataTransfer | null, now = new Date()): File[] {
  if (!data) return []
  const files = [...data.files]
  return files.map((f, i) => {
    if (f.name && f.name !== "image.png") return f
    const ext = (f.type.split("/")[1] ?? "bin").replace("jpeg", "jpg")
    const stamp = now.toISOString().slice(0, 19).replace(/[:T]/g, "-")
    return new File([f], `pasted-${stamp}${files.length > 1 ? `-${i + 1}` : ""}.${ext}`, { type: f.type })
  })
}

function readBase64(file: File): Promise<EncodedAttachment> {
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
