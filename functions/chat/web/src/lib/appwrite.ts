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

export async function signOut(aw: Appwrite): Promise<void> {
  await aw.account.deleteSession({ sessionId: "current" }).catch(() => undefined)
}

/**
 * jwtSource caches the JWT of account.createJWT() and makes a new one when asked (after chat answered 401).
 * When Appwrite refuses a new one, the session is gone: SignedOutError.
 */
export function jwtSource(aw: Appwrite): JWTSource {
  let jwt: Promise<string> | null = null
  return async (fresh: boolean) => {
    if (fresh || !jwt) {
      jwt = aw.account.createJWT().then((j) => j.jwt)
      jwt.catch(() => {
        jwt = null
      })
    }
    try {
      return await jwt
    } catch (err) {
      if (err instanceof AppwriteException && err.code === 401) throw new SignedOutError(err.message)
      throw err
    }
  }
}
