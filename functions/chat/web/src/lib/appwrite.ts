// The Appwrite Web SDK: sign-in, JWTs for chat, Realtime subscriptions.
import { Account, AppwriteException, Client, ID, Realtime, type Models } from "appwrite"
import { SignedOutError, type ChatConfig, type JWTSource } from "./api"

export type Appwrite = {
  client: Client
  account: Account
  realtime: Realtime
}

export function connect(cfg: ChatConfig): Appwrite {
  const client = new Client().setEndpoint(cfg.endpoint).setProject(cfg.project)
  return { client, account: new Account(client), realtime: new Realtime(client) }
}

/** currentUser is the signed-in account, or null when there is no session. */
export async function currentUser(aw: Appwrite): Promise<Models.User | null> {
  try {
    return await aw.account.get()
  } catch (err) {
    if (err instanceof AppwriteException && err.code === 401) return null
    throw err
  }
}

export async function signIn(aw: Appwrite, email: string, password: string): Promise<Models.User> {
  await aw.account.createEmailPasswordSession({ email, password })
  return aw.account.get()
}

export async function signUp(aw: Appwrite, email: string, password: string, name: string): Promise<Models.User> {
  await aw.account.create({ userId: ID.unique(), email, password, name: name || undefined })
  return signIn(aw, email, password)
}

/**
 * authErrorText is what the sign-in and sign-up form says when Appwrite refuses: a taken email (409
 * user_already_exists) in words of the form, a refused param (400 general_argument_invalid, "Invalid
 * `password` param: Password must be …") as the rule it broke (after the field's name when the rule does not
 * say it), anything else as Appwrite's message.
 */
export function authErrorText(err: unknown): string {
  if (err instanceof AppwriteException) {
    if (err.type === "user_already_exists") return "An account with this email already exists. Sign in, or use another email."
    const param = /^Invalid `([^`]+)` param: (.+)$/s.exec(err.message)
    if (err.type === "general_argument_invalid" && param?.[1] && param[2]) {
      const [, name, rule] = param
      // "Password must be …" names its field; "Value must be …" does not, so the field goes first.
      return rule.toLowerCase().startsWith(name.toLowerCase()) ? rule : `${name.charAt(0).toUpperCase()}${name.slice(1)}: ${rule}`
    }
    return err.message
  }
  return err instanceof Error ? err.message : String(err)
}

export async function signOut(aw: Appwrite): Promise<void> {
  await aw.account.deleteSession({ sessionId: "current" }).catch(() => undefined)
}

/**
 * jwtSource caches the JWT of account.createJWT() and makes a new one when chat refused the cached one.
 * Calls refused the same JWT at once share one renewal. When Appwrite refuses a new JWT, the session is gone:
 * SignedOutError.
 */
export function jwtSource(aw: Appwrite): JWTSource {
  return makeJWTSource(async () => (await aw.account.createJWT()).jwt)
}

/** makeJWTSource is jwtSource over any JWT maker (tested alone). */
export function makeJWTSource(create: () => Promise<string>): JWTSource {
  let current: Promise<string> | null = null
  let value: string | null = null // what current resolved to
  return async (stale?: string) => {
    if (!current || (stale !== undefined && value === stale)) {
      value = null
      const p: Promise<string> = create().then((t) => {
        if (current === p) value = t
        return t
      })
      p.catch(() => {
        if (current === p) current = null
      })
      current = p
    }
    try {
      return await current
    } catch (err) {
      if (err instanceof AppwriteException && err.code === 401) throw new SignedOutError(err.message)
      throw err
    }
  }
}
