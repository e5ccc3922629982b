import type { ReactNode } from "react"

// Console hrefs are paths of the Appwrite Console; only absolute http(s) links become links here.
export function Href({ href, children }: { href?: string; children: ReactNode }) {
  if (href && /^https?:\/\//i.test(href)) {
    return (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    )
  }
  return <>{children}</>
}
