package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// Memory is a saved memory of a user (the memory protocol's set).
type Memory struct {
	Key       string `json:"key"`
	Content   string `json:"content"`
	Category  string `json:"category"`
	Priority  int64  `json:"priority"`
	Active    bool   `json:"active"`
	UpdatedAt string `json:"updated_at"`
}

// Memories lists the user's memories, highest priority first.
func (s *Store) Memories(ctx context.Context, userID string) ([]Memory, error) {
	rows, err := s.list(ctx, Memories, userID)
	if err != nil {
		return nil, err
	}
	out := make([]Memory, 0, len(rows))
	for _, r := range rows {
		out = append(out, Memory{Key: r.Str("key"), Content: r.Str("content"), Category: r.Str("category"),
			Priority: r.Int("priority"), Active: r.Bool("active"), UpdatedAt: r.UpdatedAt})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority > out[j].Priority })
	return out, nil
}

// SetMemory writes the user's memory of m.Key.
func (s *Store) SetMemory(ctx context.Context, userID string, m Memory) error {
	id := derivedID("m", userID, m.Key)
	data := map[string]any{"user_id": userID, "key": m.Key, "content": m.Content, "category": m.Category,
		"priority": m.Priority, "active": true}
	if _, err := s.get(ctx, Memories, id, userID); err == nil {
		_, err = s.update(ctx, Memories, id, data)
		return err
	}
	_, err := s.create(ctx, Memories, id, data, []string{"read(\"user:" + userID + "\")", "delete(\"user:" + userID + "\")"})
	return err
}

// ForgetMemory deletes the user's memory of key (nothing when there is none). It reports whether one was
// deleted.
func (s *Store) ForgetMemory(ctx context.Context, userID, key string) (bool, error) {
	id := derivedID("m", userID, key)
	if _, err := s.get(ctx, Memories, id, userID); err != nil {
		if err == ErrNotFound {
			return false, nil
		}
		return false, err
	}
	return true, s.delete(ctx, Memories, id)
}

// AgentSettings are a user's model settings. The API key never leaves the server: Settings reports whether
// one is stored, APIKey opens it for a turn.
type AgentSettings struct {
	Model   string
	BaseURL string
	// HasAPIKey reports a stored key.
	HasAPIKey bool
	// NewAPIKey, for PutSettings, replaces the stored key; with ClearAPIKey the key is removed; with
	// neither the stored key is kept.
	NewAPIKey   string
	ClearAPIKey bool
	// stored is the api_key column as read (sealed).
	stored string
}

// Settings reads the user's agent settings (zero when none were saved), the key left sealed.
func (s *Store) Settings(ctx context.Context, userID string) (AgentSettings, error) {
	r, err := s.get(ctx, Settings, userID, userID)
	if err == ErrNotFound {
		return AgentSettings{}, nil
	}
	if err != nil {
		return AgentSettings{}, err
	}
	key := r.Str("api_key")
	return AgentSettings{Model: r.Str("model"), BaseURL: r.Str("base_url"), HasAPIKey: key != "", stored: key}, nil
}

// APIKey opens the user's stored API key of a (as Settings read it), to send a turn; "" when none.
func (s *Store) APIKey(userID string, a AgentSettings) (string, error) {
	return s.openSecret(a.stored, purposeAPIKey, userID)
}

// PutSettings saves the user's agent settings, the key sealed (a key written before keys were sealed is
// sealed now). The row has no permission: only the server reads it.
func (s *Store) PutSettings(ctx context.Context, userID string, a AgentSettings) error {
	key, err := s.APIKey(userID, a)
	if err != nil && !a.ClearAPIKey && a.NewAPIKey == "" {
		return err
	}
	switch {
	case a.NewAPIKey != "":
		key = a.NewAPIKey
	case a.ClearAPIKey:
		key = ""
	}
	sealed, err := s.sealSecret(key, purposeAPIKey, userID)
	if err != nil {
		return err
	}
	data := map[string]any{"user_id": userID, "model": a.Model, "base_url": a.BaseURL, "api_key": sealed}
	if _, err := s.get(ctx, Settings, userID, userID); err == nil {
		_, err = s.update(ctx, Settings, userID, data)
		return err
	}
	_, err = s.create(ctx, Settings, userID, data, []string{})
	return err
}

// MCPConnection is one of a user's MCP servers with its OAuth tokens. MCPConnections reads the tokens and
// client registration sealed (Connected reports tokens); OpenMCP opens them for a turn.
type MCPConnection struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	Description string `json:"description"`
	// Tokens and ClientInfo are JSON objects, for PutMCPConnection and from OpenMCP.
	Tokens     json.RawMessage `json:"tokens,omitempty"`
	ClientInfo json.RawMessage `json:"client_info,omitempty"`
	// Connected reports stored tokens.
	Connected bool   `json:"-"`
	UpdatedAt string `json:"-"`
	// tokens and clientInfo are the columns as read (sealed).
	tokens, clientInfo string
}

func connectionOf(r Row) MCPConnection {
	return MCPConnection{ID: r.Str("connection_id"), Name: r.Str("name"), URL: r.Str("url"), Description: r.Str("description"),
		UpdatedAt: r.UpdatedAt, tokens: r.Str("tokens"), clientInfo: r.Str("client_info"), Connected: r.Str("tokens") != ""}
}

// OpenMCP opens the tokens and client registration of the user's connection c (as MCPConnections read it),
// to send a turn.
func (s *Store) OpenMCP(userID string, c MCPConnection) (tokens, clientInfo json.RawMessage, err error) {
	t, err := s.openSecret(c.tokens, purposeTokens, userID, c.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP connection '%s': %w", c.ID, err)
	}
	ci, err := s.openSecret(c.clientInfo, purposeClientInfo, userID, c.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP connection '%s': %w", c.ID, err)
	}
	if t != "" {
		tokens = json.RawMessage(t)
	}
	if ci != "" {
		clientInfo = json.RawMessage(ci)
	}
	return tokens, clientInfo, nil
}

// MCPConnections lists the user's MCP connections, their secrets sealed.
func (s *Store) MCPConnections(ctx context.Context, userID string) ([]MCPConnection, error) {
	rows, err := s.list(ctx, MCPConnections, userID)
	if err != nil {
		return nil, err
	}
	out := make([]MCPConnection, 0, len(rows))
	for _, r := range rows {
		out = append(out, connectionOf(r))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// PutMCPConnection creates or replaces the user's connection c.ID. The row has no permission: it holds
// tokens, only the server reads it.
func (s *Store) PutMCPConnection(ctx context.Context, userID string, c MCPConnection) (MCPConnection, error) {
	id := derivedID("c", userID, c.ID)
	tokens, err := s.sealSecret(string(c.Tokens), purposeTokens, userID, c.ID)
	if err != nil {
		return MCPConnection{}, err
	}
	clientInfo, err := s.sealSecret(string(c.ClientInfo), purposeClientInfo, userID, c.ID)
	if err != nil {
		return MCPConnection{}, err
	}
	data := map[string]any{"user_id": userID, "connection_id": c.ID, "name": c.Name, "url": c.URL,
		"description": c.Description, "tokens": tokens, "client_info": clientInfo}
	var r Row
	if _, gerr := s.get(ctx, MCPConnections, id, userID); gerr == nil {
		r, err = s.update(ctx, MCPConnections, id, data)
	} else {
		r, err = s.create(ctx, MCPConnections, id, data, []string{})
	}
	if err != nil {
		return MCPConnection{}, err
	}
	return connectionOf(r), nil
}

// UpdateMCPTokens stores refreshed tokens (and client info, when given) of the user's connection id; a
// connection that no longer exists is left alone.
func (s *Store) UpdateMCPTokens(ctx context.Context, userID, id string, tokens, clientInfo json.RawMessage) error {
	rid := derivedID("c", userID, id)
	if _, err := s.get(ctx, MCPConnections, rid, userID); err != nil {
		if err == ErrNotFound {
			return nil
		}
		return err
	}
	data := map[string]any{}
	if len(tokens) > 0 && string(tokens) != "null" {
		sealed, err := s.sealSecret(string(tokens), purposeTokens, userID, id)
		if err != nil {
			return err
		}
		data["tokens"] = sealed
	}
	if len(clientInfo) > 0 && string(clientInfo) != "null" {
		sealed, err := s.sealSecret(string(clientInfo), purposeClientInfo, userID, id)
		if err != nil {
			return err
		}
		data["client_info"] = sealed
	}
	if len(data) == 0 {
		return nil
	}
	_, err := s.update(ctx, MCPConnections, rid, data)
	return err
}

// DeleteMCPConnection deletes the user's connection id.
func (s *Store) DeleteMCPConnection(ctx context.Context, userID, id string) error {
	rid := derivedID("c", userID, id)
	if _, err := s.get(ctx, MCPConnections, rid, userID); err != nil {
		return err
	}
	return s.delete(ctx, MCPConnections, rid)
}
