import { useState } from "react"
import { authErrorText } from "../lib/appwrite"

/**
 * SignIn is the email and password form (Appwrite accounts); it can also create an account. The password
 * rules are the project's (Appwrite's password policy), so Appwrite checks them and the form shows its answer.
 */
export function SignIn({
  notice,
  onSignIn,
  onSignUp,
}: {
  notice?: string
  onSignIn: (email: string, password: string) => Promise<void>
  onSignUp: (email: string, password: string, name: string) => Promise<void>
}) {
  const [mode, setMode] = useState<"in" | "up">("in")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [name, setName] = useState("")
  const [error, setError] = useState("")
  const [busy, setBusy] = useState(false)
  return (
    <div className="center">
      <form
        id="signin"
        className="card signin"
        onSubmit={(e) => {
          e.preventDefault()
          setBusy(true)
          setError("")
          const done = mode === "in" ? onSignIn(email, password) : onSignUp(email, password, name)
          done.catch((err: unknown) => setError(authErrorText(err))).finally(() => setBusy(false))
        }}
      >
        <h1>{mode === "in" ? "Sign in" : "Create an account"}</h1>
        <p className="muted">Appwrite agent chat</p>
        {notice && (
          <p className="notice" id="signin-notice">
            {notice}
          </p>
        )}
        {mode === "up" && (
          <label>
            Name
            <input name="name" value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" />
          </label>
        )}
        <label>
          Email
          <input name="email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="email" />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete={mode === "in" ? "current-password" : "new-password"}
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {mode === "in" ? "Sign in" : "Create account"}
        </button>
        <button type="button" className="link" onClick={() => setMode(mode === "in" ? "up" : "in")}>
          {mode === "in" ? "No account? Create one" : "Have an account? Sign in"}
        </button>
      </form>
    </div>
  )
}
