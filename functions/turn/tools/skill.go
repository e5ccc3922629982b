package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"appwrite-agent/shared/pyjson"
)

// appwrite_skill limits and messages, as in the reference.
const (
	SkillMaxChars = 5000
	// SkillTruncatedNote ends a skill cut at SkillMaxChars.
	SkillTruncatedNote = "…[skill truncated for context size; do not reload — use MCP for live project work, or browser_fetch a docs URL for a missing section]"
	// MsgNoSkills is the answer when no skill is installed.
	MsgNoSkills = "No Appwrite skills are installed in this deployment. Use browser_fetch or http_get on the " +
		"Appwrite docs (https://appwrite.io/docs) instead, and MCP for live project work."
)

// Skill is one installed skill.
type Skill struct {
	// Name is the skill key (the folder name, e.g. appwrite-go).
	Name string
	// Description is the front matter's description (or "Appwrite skill: <name>").
	Description string
	// Body is the Markdown after the front matter, stripped.
	Body string
}

var frontMatter = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^---\s*\n(.*?)\n---\s*\n`) })

// LoadSkills reads every <dir>/SKILL.md at the root of fsys, sorted by name. A skill's key is its folder
// name (the front matter's name when it differs only in case); an unreadable file is skipped.
func LoadSkills(fsys fs.FS) []Skill {
	if fsys == nil {
		return nil
	}
	paths, _ := fs.Glob(fsys, "*/SKILL.md")
	var out []Skill
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			continue
		}
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		name := path.Dir(p)
		desc := ""
		body := text
		if m := frontMatter().FindStringSubmatchIndex(text); m != nil {
			for _, line := range strings.Split(text[m[2]:m[3]], "\n") {
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				v = strings.Trim(strings.TrimSpace(v), `"'`)
				switch strings.TrimSpace(k) {
				case "description":
					desc = v
				case "name":
					if strings.EqualFold(v, name) {
						name = strings.ToLower(v)
					}
				}
			}
			body = text[m[1]:]
		}
		if desc == "" {
			desc = "Appwrite skill: " + name
		}
		out = append(out, Skill{Name: strings.ToLower(name), Description: desc, Body: strings.TrimSpace(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SkillIndex is the index text: "Installed Appwrite skills:" and one "- name: description" line each
// (MsgNoSkills when there are none).
func SkillIndex(skills []Skill) string {
	if len(skills) == 0 {
		return MsgNoSkills
	}
	var b strings.Builder
	b.WriteString("Installed Appwrite skills:")
	for _, s := range skills {
		b.WriteString("\n- " + s.Name + ": " + s.Description)
	}
	return b.String()
}

// SkillKey resolves what the model asked for: lower-cased and stripped; "", list, all and skills mean
// the index (ok false); otherwise "appwrite-" is prefixed when missing, and the Flutter names map to
// appwrite-dart.
func SkillKey(name string) (key string, ok bool) {
	k := strings.ToLower(strings.TrimSpace(name))
	switch k {
	case "", "list", "all", "skills":
		return "", false
	}
	if !strings.HasPrefix(k, "appwrite-") {
		k = "appwrite-" + k
	}
	if k == "appwrite-flutter" || k == "appwrite-flutter-sdk" {
		k = "appwrite-dart"
	}
	return k, true
}

// TruncateSkill cuts a skill body to SkillMaxChars characters, backing up to the last heading (#, ##,
// ###) when that is past a third of the limit, and appends SkillTruncatedNote.
func TruncateSkill(body string) string {
	cut, was := cutRunes(body, SkillMaxChars)
	if !was {
		return body
	}
	best := -1
	for _, h := range []string{"\n## ", "\n### ", "\n# "} {
		if i := strings.LastIndex(cut, h); i > best {
			best = i
		}
	}
	if best >= 0 && utf8.RuneCountInString(cut[:best]) > SkillMaxChars/3 {
		cut = cut[:best]
	}
	return strings.TrimRight(cut, " \n\t") + "\n\n" + SkillTruncatedNote
}

// SkillTool is the appwrite_skill tool for one turn: it serves the installed skills and remembers which
// keys were asked for in this turn (a second load is refused; the key is marked even when unknown).
type SkillTool struct {
	skills []Skill
	mu     sync.Mutex
	loaded map[string]bool
}

// NewSkillTool returns the tool for one turn over the skills in fsys (skills.FS in the function).
func NewSkillTool(fsys fs.FS) *SkillTool {
	return &SkillTool{skills: LoadSkills(fsys), loaded: map[string]bool{}}
}

// NewSkillToolFrom returns the tool for one turn over already loaded skills.
func NewSkillToolFrom(skills []Skill) *SkillTool {
	return &SkillTool{skills: skills, loaded: map[string]bool{}}
}

// Name implements toolapi.Tool.
func (*SkillTool) Name() string { return "appwrite_skill" }

// Description implements toolapi.Tool.
func (t *SkillTool) Description() string {
	d := "Load an Appwrite SDK/CLI skill: a reference of how to install, set up the client and call the APIs in one " +
		"language (code samples). Load at most one skill per turn and only for code samples; never load the same " +
		"skill twice. It is documentation, not access: use MCP tools for live project work. " +
		"Pass name='list' to see the index."
	if len(t.skills) == 0 {
		return d + " No skills are installed in this deployment."
	}
	names := make([]string, len(t.skills))
	for i, s := range t.skills {
		names[i] = s.Name
	}
	return d + " Installed: " + strings.Join(names, ", ") + "."
}

// Parameters implements toolapi.Tool.
func (*SkillTool) Parameters() json.RawMessage {
	return schema([][2]string{{"name", prop("string",
		"The skill, e.g. appwrite-go or go (the appwrite- prefix is optional; flutter means dart), or 'list' for the index.", "")}}, "name")
}

// Run implements toolapi.Tool.
func (t *SkillTool) Run(_ context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	if len(t.skills) == 0 {
		return MsgNoSkills, nil
	}
	key, ok := SkillKey(a.Name)
	if !ok {
		return SkillIndex(t.skills), nil
	}
	t.mu.Lock()
	again := t.loaded[key]
	t.loaded[key] = true
	t.mu.Unlock()
	if again {
		return fmt.Sprintf("Skill %s was already loaded earlier this turn. Reuse that content — do not load it again; "+
			"use MCP for live project work, or browser_fetch a docs URL for a missing section.", pyjson.ReprString(key)), nil
	}
	for _, s := range t.skills {
		if s.Name == key {
			return "# Skill: " + key + "\n\n" + TruncateSkill(s.Body), nil
		}
	}
	names := make([]string, len(t.skills))
	for i, s := range t.skills {
		names[i] = s.Name
	}
	return fmt.Sprintf("Unknown skill %s. Available: %s", pyjson.ReprString(key), strings.Join(names, ", ")), nil
}
