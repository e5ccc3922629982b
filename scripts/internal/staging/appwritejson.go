package staging

import (
	"appwrite-agent/shared/awclient"
	"bytes"
	"encoding/json"
	"fmt"
)

// ConversationsTable is the chat function's conversations table (functions/chat/store), whose new rows
// start the title function.
const ConversationsTable = "conversations"

// DefaultChatDatabase is chat's CHAT_DATABASE_ID default.
const DefaultChatDatabase = "chat"

// TitleEvent is the one event title is registered for: a new row of the deployment's conversations table.
func TitleEvent(chatDatabase string) string {
	return "databases." + chatDatabase + ".tables." + ConversationsTable + ".rows.*.create"
}

// StagedAppwriteJSON turns the repository's appwrite.json (raw) into the one written beside the staged
// functions (build/appwrite.json): each function's path is its staged folder relative to build/
// (functions/<id>), and title is registered for the concrete create event of the conversations table of
// chatDatabase only, so that no other row of the project (turn's progress rows, the user's own tables)
// starts an execution. Every other key is kept as it is.
func StagedAppwriteJSON(raw []byte, chatDatabase string) ([]byte, error) {
	if !awclient.ValidID(chatDatabase) {
		return nil, fmt.Errorf("chat database id %q is not an Appwrite id (at most 36 of a-z, A-Z, 0-9, '.', '-', '_', not starting with a special character)", chatDatabase)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("appwrite.json: %w", err)
	}
	fns, _ := doc["functions"].([]any)
	found := false
	for _, f := range fns {
		fn, ok := f.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("appwrite.json: a function entry is not an object")
		}
		id, _ := fn["$id"].(string)
		fn["path"] = "functions/" + id
		if id == "title" {
			fn["events"] = []string{TitleEvent(chatDatabase)}
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("appwrite.json has no title function")
	}
	out, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// AppwriteFunction is one function's entry in appwrite.json (the CLI's format): the settings Appwrite keeps
// for it. scripts/deploy gives them to each function; the local stack reads the schedules.
type AppwriteFunction struct {
	ID            string   `json:"$id"`
	Name          string   `json:"name"`
	Runtime       string   `json:"runtime"`
	Specification string   `json:"specification"`
	Execute       []string `json:"execute"`
	Events        []string `json:"events"`
	Scopes        []string `json:"scopes"`
	Schedule      string   `json:"schedule"`
	Timeout       int      `json:"timeout"`
	Enabled       bool     `json:"enabled"`
	Logging       bool     `json:"logging"`
	Entrypoint    string   `json:"entrypoint"`
	Commands      string   `json:"commands"`
}

// ReadFunctions reads the function entries of an appwrite.json (raw).
func ReadFunctions(raw []byte) ([]AppwriteFunction, error) {
	var doc struct {
		Functions []AppwriteFunction `json:"functions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("appwrite.json: %w", err)
	}
	return doc.Functions, nil
}

// Schedules reads the functions' cron schedules from the repository's appwrite.json (raw): id to schedule,
// for the functions that have one. The local stack gives them to the stand-in, which runs them.
func Schedules(raw []byte) (map[string]string, error) {
	fns, err := ReadFunctions(raw)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range fns {
		if f.Schedule != "" {
			out[f.ID] = f.Schedule
		}
	}
	return out, nil
}
