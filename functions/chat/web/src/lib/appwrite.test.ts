import { AppwriteException } from "appwrite"
import { describe, expect, it } from "vitest"
import { SignedOutError } from "./api"
import { makeJWTSource } from "./appwrite"

describe("makeJWTSource", () => {
  it("caches the JWT and renews it once for callers refused the same one", async () => {
    let n = 0
    const source = makeJWTSource(async () => `jwt${++n}`)
    expect(await Promise.all([source(), source(), source()])).toEqual(["jwt1", "jwt1", "jwt1"])
    expect(await Promise.all([source("jwt1"), source("jwt1"), source("jwt1")])).toEqual(["jwt2", "jwt2", "jwt2"])
    expect(await source("jwt1")).toBe("jwt2") // a late caller refused the old one gets the renewed one
    expect(n).toBe(2)
  })

  it("says the user is signed out when Appwrite refuses a new JWT", async () => {
    const source = makeJWTSource(async () => {
      throw new AppwriteException("User (role: guests) missing scopes", 401, "general_unauthorized_scope")
    })
    await expect(source()).rejects.toBeInstanceOf(SignedOutError)
  })
})
