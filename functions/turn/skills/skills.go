// Package skills embeds the Appwrite agent skills installed in this folder at build time: each
// <name>/SKILL.md (YAML front matter with name and description, then Markdown). scripts/update-skills
// fills the folder from the current appwrite/agent-skills release before a deploy; with none installed
// the appwrite_skill tool says so.
package skills

import "embed"

// FS holds this folder: README.md and every <name>/SKILL.md. The pattern is "*" so the build still works
// when no skill is installed (README.md always matches); only */SKILL.md files are read as skills.
//
//go:embed *
var FS embed.FS
