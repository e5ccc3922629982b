import { AppwriteException } from "appwrite"
import { describe, expect, it } from "vitest"
import { SignedOutError } from "./api"
import { authErrorText, makeJWTSource } from "./appwrite"

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

describe("authErrorText", () => {
  it("says a taken email in the form's words", () => {
    const err = new AppwriteException("A user with the same id, email, or phone already exists in this project.", 409, "user_already_exists")
    expect(authErrorText(err)).toBe("An account with this email already exists. Sign in, or use another email.")
  })

  it("gives the rule a refused param broke, without the param syntax", () => {
    const err = new AppwriteException("Invalid `password` param: Password must be between 8 and 256 characters long.", 400, "general_argument_invalid")
    expect(authErrorText(err)).toBe("Password must be between 8 and 256 characters long.")
    const email = new AppwriteException("Invalid `email` param: Value must be a valid email address", 400, "general_argument_invalid")
    expect(authErrorText(email)).toBe("Email: Value must be a valid email address")
    const name = new AppwriteException("Invalid `name` param: Value must be a valid string and no longer than 128 chars", 400, "general_argument_invalid")
    expect(authErrorText(name)).toBe("Name: Value must be a valid string and no longer than 128 chars")
  })

  it("keeps any other message as Appwrite wrote it", () => {
    const creds = new AppwriteException("Invalid credentials. Please check the email and password.", 401, "user_invalid_credentials")
    expect(authErrorText(creds)).toBe("Invalid credentials. Please check the email and password.")
    expect(authErrorText(new AppwriteException("Invalid `x` param: y", 500, "general_unknown"))).toBe("Invalid `x` param: y")
    expect(authErrorText(new TypeError("Failed to fetch"))).toBe("Failed to fetch")
  })
})
