// The page theme: light, dark or the system's; the console protocol's set_theme switches it.
export type Theme = "light" | "dark" | "system"

const KEY = "chat_theme"

export function storedTheme(): Theme {
  const t = localStorage.getItem(KEY)
  return t === "light" || t === "dark" || t === "system" ? t : "system"
}

/** applyTheme sets data-theme on the root element (the CSS reads it) and remembers the choice. */
export function applyTheme(theme: Theme): void {
  localStorage.setItem(KEY, theme)
  const dark = theme === "dark" || (theme === "system" && window.matchMedia?.("(prefers-color-scheme: dark)").matches)
  document.documentElement.dataset.theme = dark ? "dark" : "light"
  document.documentElement.dataset.themeChoice = theme
}
