package tools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"appwrite-agent/functions/turn/skills"
)

// testSkills are small skills written for the tests (the real ones are fetched at deploy time).
func testSkills(extra string) fstest.MapFS {
	return fstest.MapFS{
		"README.md": {Data: []byte("# not a skill\n")},
		"appwrite-go/SKILL.md": {Data: []byte("---\nname: appwrite-go\ndescription: Appwrite Go SDK skill. Use when writing Go.\n---\n\n" +
			"# Appwrite Go SDK\n\n## Installation\n\ngo get github.com/appwrite/sdk-for-go\n")},
		"appwrite-dart/SKILL.md": {Data: []byte("---\r\nname: appwrite-dart\r\ndescription: \"Dart and Flutter SDK\"\r\n---\r\nDart body\r\n")},
		"appwrite-cli/SKILL.md":  {Data: []byte("No front matter here.\n")},
		"appwrite-long/SKILL.md": {Data: []byte("---\nname: appwrite-long\ndescription: long\n---\n" + extra)},
		"notes.txt":              {Data: []byte("ignored")},
	}
}

func call(t *testing.T, tool *SkillTool, name string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"name": name})
	out, err := tool.Run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSkillIndexAndResolution(t *testing.T) {
	tool := NewSkillTool(testSkills("short"))
	index := "Installed Appwrite skills:\n- appwrite-cli: Appwrite skill: appwrite-cli\n- appwrite-dart: Dart and Flutter SDK\n" +
		"- appwrite-go: Appwrite Go SDK skill. Use when writing Go.\n- appwrite-long: long"
	for _, name := range []string{"", "list", " ALL ", "skills"} {
		if got := call(t, tool, name); got != index {
			t.Fatalf("index for %q:\n%s", name, got)
		}
	}
	if got := call(t, tool, " Go "); got != "# Skill: appwrite-go\n\n# Appwrite Go SDK\n\n## Installation\n\ngo get github.com/appwrite/sdk-for-go" {
		t.Fatalf("go: %q", got)
	}
	if got := call(t, tool, "flutter"); got != "# Skill: appwrite-dart\n\nDart body" {
		t.Fatalf("flutter: %q", got)
	}
	if got := call(t, tool, "appwrite-flutter-sdk"); !strings.HasPrefix(got, "Skill 'appwrite-dart' was already loaded earlier this turn. Reuse that content") {
		t.Fatalf("dedupe across aliases: %q", got)
	}
	if got := call(t, tool, "cli"); got != "# Skill: appwrite-cli\n\nNo front matter here." {
		t.Fatalf("cli: %q", got)
	}
	if got := call(t, tool, "cobol"); got != "Unknown skill 'appwrite-cobol'. Available: appwrite-cli, appwrite-dart, appwrite-go, appwrite-long" {
		t.Fatalf("unknown: %q", got)
	}
	if got := call(t, tool, "appwrite-cobol"); !strings.HasPrefix(got, "Skill 'appwrite-cobol' was already loaded") {
		t.Fatalf("an unknown key is marked as loaded too: %q", got)
	}
	if !strings.Contains(tool.Description(), "Installed: appwrite-cli, appwrite-dart, appwrite-go, appwrite-long.") {
		t.Fatalf("description %q", tool.Description())
	}
	// A new turn starts with a fresh dedupe set.
	if got := call(t, NewSkillTool(testSkills("")), "go"); !strings.HasPrefix(got, "# Skill: appwrite-go") {
		t.Fatalf("fresh turn: %q", got)
	}
}

func TestSkillTruncation(t *testing.T) {
	intro := strings.Repeat("intro line é\n", 200)   // 2600 characters, past a third of the limit
	section := strings.Repeat("section text\n", 400) // 5200 characters
	body := intro + "\n## Later section\n" + section
	got := call(t, NewSkillTool(testSkills(body)), "long")
	want := "# Skill: appwrite-long\n\n" + strings.TrimRight(intro, "\n") + "\n\n" + SkillTruncatedNote
	if got != want {
		t.Fatalf("cut at the heading:\n%q", got[max(0, len(got)-300):])
	}
	// A heading within the first third does not count: cut at the limit.
	body = "## Top\n" + strings.Repeat("x", 6000)
	got = TruncateSkill(body)
	if !strings.HasSuffix(got, "\n\n"+SkillTruncatedNote) || utf8.RuneCountInString(strings.TrimSuffix(got, "\n\n"+SkillTruncatedNote)) != SkillMaxChars {
		t.Fatalf("cut at the limit: %d characters", utf8.RuneCountInString(got))
	}
	if TruncateSkill("short") != "short" {
		t.Fatal("short bodies are whole")
	}
}

func TestSkillToolWithoutSkills(t *testing.T) {
	tool := NewSkillTool(fstest.MapFS{"README.md": {Data: []byte("x")}})
	for _, name := range []string{"list", "go"} {
		if got := call(t, tool, name); got != MsgNoSkills {
			t.Fatalf("%s: %q", name, got)
		}
	}
	if !strings.HasSuffix(tool.Description(), "No skills are installed in this deployment.") {
		t.Fatal(tool.Description())
	}
}

func TestEmbeddedSkillsLoad(t *testing.T) {
	// Whatever scripts/update-skills installed (possibly nothing) must parse: every skill has a name and
	// a description, and README.md is not a skill.
	for _, s := range LoadSkills(skills.FS) {
		if s.Name == "" || s.Description == "" || s.Body == "" || s.Name == "readme.md" {
			t.Errorf("skill %+v", s.Name)
		}
	}
	if _, err := skills.FS.ReadFile("README.md"); err != nil {
		t.Fatal("README.md is embedded so the folder always exists:", err)
	}
}

func TestSkillToolConcurrentCalls(t *testing.T) {
	tool := NewSkillTool(testSkills(""))
	var wg sync.WaitGroup
	full := 0
	var mu sync.Mutex
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _ := tool.Run(context.Background(), json.RawMessage(`{"name":"go"}`))
			if strings.HasPrefix(out, "# Skill:") {
				mu.Lock()
				full++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if full != 1 {
		t.Fatalf("%d full loads, want 1", full)
	}
}
