// Package convtitle holds what a conversation title is made of: the prompt given to the model and the
// sanitiser applied to its answer. The turn function (first-turn conversation_title event) and the title
// function use the same pieces, so a title looks the same whichever produced it.
package convtitle

import (
	"context"
	"strings"
	"unicode"

	"appwrite-agent/shared/llm"
)

// SystemPrompt is the system message of a title request.
const SystemPrompt = `You give chat conversations short names.
Answer with a title of 2 to 6 words that says what the conversation is about, and nothing else.
Use Title Case when it reads naturally. No quotes, no emoji, no punctuation at the end.
Write a hyphen where a dash would go; never an em dash or an en dash.
Prefer the user's goal or the resource they are working on over generic words.
If nothing specific stands out, use a plain label such as "Appwrite Help".`

// MaxTokens is the completion budget of a title request.
const MaxTokens = 24

// MaxChars is the longest title Sanitize returns, in characters.
const MaxChars = 60

// Limits on how much of each message goes into the prompt, in characters.
const (
	MaxUserChars      = 1200
	MaxAssistantChars = 800
)

// UserPrompt is the user message of a title request: the user's message and, when known, the start of the
// agent's reply as context.
func UserPrompt(user, assistant string) string {
	var b strings.Builder
	b.WriteString("User message:\n")
	b.WriteString(cut(user, MaxUserChars))
	b.WriteString("\n")
	if assistant != "" {
		b.WriteString("\nAgent reply (context only):\n")
		b.WriteString(cut(assistant, MaxAssistantChars))
		b.WriteString("\n")
	}
	b.WriteString("\nConversation title:")
	return b.String()
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// Sanitize turns a model's answer into a title: surrounding whitespace, quotes and backticks removed; the
// first line only; runs of whitespace collapsed to one space; a leading "title:" dropped (any case);
// surrounding quotes, backticks and . , ; : ! ? removed; longer than MaxChars cut at MaxChars and then back
// to the last space. The result may be empty: the caller then has no title.
func Sanitize(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("\"'`", r) })
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) >= 6 && strings.EqualFold(s[:6], "title:") {
		s = strings.TrimSpace(s[6:])
	}
	s = strings.Trim(s, "\"'`.,;:!? ")
	if r := []rune(s); len(r) > MaxChars {
		s = string(r[:MaxChars])
		if i := strings.LastIndex(s, " "); i > 0 {
			s = s[:i]
		}
		s = strings.TrimRight(s, " ")
	}
	return s
}

// Generate asks model for the title of a conversation that starts with user (and, when known, the agent's
// reply) and returns it sanitised, with the call's tokens; "" means the model gave nothing usable.
func Generate(ctx context.Context, model llm.Model, user, assistant string) (string, llm.Usage, error) {
	res, err := model.Complete(ctx, llm.Request{MaxTokens: MaxTokens, Messages: []llm.Message{
		{Role: "system", Content: SystemPrompt},
		{Role: "user", Content: UserPrompt(user, assistant)},
	}})
	if err != nil {
		return "", llm.Usage{}, err
	}
	return Sanitize(res.Content), res.Usage, nil
}
