import { describe, expect, it } from "vitest"
import { base64Length, checkAttachments, DEFAULT_LIMITS, encodeFile } from "./attachments"

describe("checkAttachments", () => {
  it("accepts files within the limits", () => {
    expect(checkAttachments([{ name: "a.txt", size: 10, type: "text/plain" }], DEFAULT_LIMITS)).toBeNull()
    expect(checkAttachments([{ name: "big.bin", size: 7_500_000, type: "" }], DEFAULT_LIMITS)).toBeNull()
  })
  it("refuses a file over the engine's limit with the engine's message", () => {
    expect(checkAttachments([{ name: "big.bin", size: 7_500_001, type: "" }], DEFAULT_LIMITS)).toBe(
      "Attachment 'big.bin' exceeds max size (7500000 bytes)",
    )
  })
  it("refuses more files than the engine takes", () => {
    const files = Array.from({ length: 9 }, (_, i) => ({ name: `f${i}`, size: 1, type: "" }))
    expect(checkAttachments(files, DEFAULT_LIMITS)).toBe("Too many attachments (max 8)")
    expect(checkAttachments(files.slice(0, 8), DEFAULT_LIMITS)).toBeNull()
  })
  it("refuses an empty file and files too large together", () => {
    expect(checkAttachments([{ name: "e", size: 0, type: "" }], DEFAULT_LIMITS)).toBe("Attachment 'e' is empty")
    const two = [
      { name: "a", size: 4_000_000, type: "" },
      { name: "b", size: 4_000_000, type: "" },
    ]
    expect(checkAttachments(two, DEFAULT_LIMITS)).toMatch(/too large together/)
  })
})

describe("encodeFile", () => {
  it("reads a file as base64", async () => {
    const f = new File([new Uint8Array([0, 1, 2, 250, 255])], "b.bin", { type: "application/octet-stream" })
    const enc = await encodeFile(f)
    expect(enc).toEqual({ name: "b.bin", mime: "application/octet-stream", size: 5, content_base64: "AAEC+v8=" })
    expect(enc.content_base64.length).toBe(base64Length(5))
  })
})
