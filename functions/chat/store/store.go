// Package store keeps the chat's data in the project's TablesDB: conversations, messages, memories, agent
// settings and MCP connections, each row owned by one user. It creates its database, tables and columns on
// first use (Ensure), with the execution's API key. Every read checks the owner column, so a row of another
// user is reported as not found (ErrNotFound), exactly like a row that does not exist.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"appwrite-agent/functions/chat/awclient"
	"appwrite-agent/shared/appwriterest"
	"appwrite-agent/shared/seal"
	"appwrite-agent/shared/tables"
)

// Table ids in the chat database (shared/tables, which scripts/deploy creates them from too).
const (
	Conversations  = tables.Conversations
	Messages       = tables.Messages
	Memories       = tables.Memories
	Settings       = tables.Settings
	MCPConnections = tables.MCPConnections
)

// Sizes of the text columns.
const (
	// FirstMessageChars is the conversation's first message (what title reads), cut to this many characters.
	FirstMessageChars = tables.FirstMessageChars
	// ContentChars bounds a message's text.
	ContentChars = tables.ContentChars
	// TimelineChars bounds a turn's stored timeline (JSON).
	TimelineChars = tables.TimelineChars
	// AttachmentsChars bounds a message's attachments (JSON, thumbnails included).
	AttachmentsChars = tables.AttachmentsChars
	// UsageChars bounds a turn's usage (JSON).
	UsageChars = tables.UsageChars
)

// ErrNotFound is a row that does not exist or belongs to another user.
var ErrNotFound = errors.New("not found")

// Store is the chat's data in one database, reached with one API key.
type Store struct {
	aw       *awclient.Client
	key      string
	database string
	// secrets seals the users' secrets (secrets.go); nil: chat stores and opens none.
	secrets *seal.Keyring
}

// New returns the store of database, called through aw with key; secrets (CHAT_SEAL_KEYS) seals the users'
// secrets, nil when chat has none (a secret to store is then ErrNoSealKeys).
func New(aw *awclient.Client, key, database string, secrets *seal.Keyring) *Store {
	return &Store{aw: aw, key: key, database: database, secrets: secrets}
}

// Ensure creates what is missing of the database, its tables and their columns; what exists is kept.
func (s *Store) Ensure(ctx context.Context) error {
	if err := s.aw.CreateDatabase(ctx, s.key, s.database, "Chat"); err != nil && appwriterest.TypeOf(err) != "database_already_exists" {
		return fmt.Errorf("create database %q: %w", s.database, err)
	}
	schema := tables.Chat()
	for _, t := range schema {
		if err := s.aw.CreateTable(ctx, s.key, s.database, t.ID, t.Name); err != nil && appwriterest.TypeOf(err) != "table_already_exists" {
			return fmt.Errorf("create table %q: %w", t.ID, err)
		}
		for _, c := range t.Columns {
			if err := s.aw.CreateColumn(ctx, s.key, s.database, t.ID, awclient.Column(c)); err != nil && appwriterest.TypeOf(err) != "column_already_exists" {
				return fmt.Errorf("create column %s.%s: %w", t.ID, c.Key, err)
			}
		}
	}
	// Appwrite creates columns in its database worker ("processing", then "available"): rows that use them
	// can be written once they are available.
	for _, t := range schema {
		if err := s.waitColumns(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// columnPoll is how often Ensure looks whether new columns are available.
const columnPoll = 200 * time.Millisecond

func (s *Store) waitColumns(ctx context.Context, t tables.Table) error {
	for {
		cols, err := s.aw.TableColumns(ctx, s.key, s.database, t.ID)
		if err != nil {
			return fmt.Errorf("read table %q: %w", t.ID, err)
		}
		pending := ""
		for _, c := range t.Columns {
			if st := cols[c.Key]; st != "available" {
				if st == "failed" || st == "stuck" {
					return fmt.Errorf("column %s.%s is %s in Appwrite: delete it and retry", t.ID, c.Key, st)
				}
				pending = c.Key
			}
		}
		if pending == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("column %s.%s is not available yet: %w", t.ID, pending, ctx.Err())
		case <-time.After(columnPoll):
		}
	}
}

// missingSchema reports whether err says the database, a table or a column is missing. A missing column is
// a structure refusal for an unknown attribute (utopia-php/database Validator/Structure.php: "Unknown
// attribute"); other structure refusals (a value too long, a wrong type) are not the schema's.
func missingSchema(err error) bool {
	var e *appwriterest.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Type {
	case "database_not_found", "table_not_found", "collection_not_found":
		return true
	case "row_invalid_structure", "document_invalid_structure":
		return strings.Contains(e.Message, "Unknown attribute")
	}
	return false
}

// do runs f, and when it fails because the schema is missing, creates the schema and runs f once more.
func (s *Store) do(ctx context.Context, f func() error) error {
	err := f()
	if err != nil && missingSchema(err) {
		if serr := s.Ensure(ctx); serr != nil {
			return serr
		}
		err = f()
	}
	return err
}

// owner is the row permissions of a user's row: read, update and delete by that user only.
func owner(userID string) []string {
	r := "\"user:" + userID + "\""
	return []string{"read(" + r + ")", "update(" + r + ")", "delete(" + r + ")"}
}

// readOnly lets the user read the row; only chat writes it.
func readOnly(userID string) []string {
	return []string{"read(\"user:" + userID + "\")"}
}

// derivedID is a row id made of the user and a key of theirs: at most 33 characters of [a-z0-9].
func derivedID(prefix, userID, key string) string {
	sum := sha256.Sum256([]byte(userID + "\x00" + key))
	return prefix + hex.EncodeToString(sum[:16])
}

// get reads a row of table that must belong to userID.
func (s *Store) get(ctx context.Context, tableID, id, userID string) (awclient.Row, error) {
	var r awclient.Row
	err := s.do(ctx, func() error {
		var err error
		r, err = s.aw.GetRow(ctx, s.key, s.database, tableID, id)
		return err
	})
	if appwriterest.TypeOf(err) == "row_not_found" || appwriterest.TypeOf(err) == "document_not_found" {
		return r, ErrNotFound
	}
	if err != nil {
		return r, err
	}
	if r.Str("user_id") != userID {
		return r, ErrNotFound
	}
	return r, nil
}

// list lists the rows of table owned by userID matching the queries.
func (s *Store) list(ctx context.Context, tableID, userID string, queries ...awclient.Query) ([]awclient.Row, error) {
	var rows []awclient.Row
	q := append([]awclient.Query{awclient.Equal("user_id", userID)}, queries...)
	err := s.do(ctx, func() error {
		var err error
		rows, err = s.aw.ListRows(ctx, s.key, s.database, tableID, q...)
		return err
	})
	return rows, err
}

func (s *Store) create(ctx context.Context, tableID, id string, data map[string]any, perms []string) (awclient.Row, error) {
	var r awclient.Row
	err := s.do(ctx, func() error {
		var err error
		r, err = s.aw.CreateRow(ctx, s.key, s.database, tableID, id, data, perms)
		return err
	})
	return r, err
}

func (s *Store) update(ctx context.Context, tableID, id string, data map[string]any) (awclient.Row, error) {
	var r awclient.Row
	err := s.do(ctx, func() error {
		var err error
		r, err = s.aw.UpdateRow(ctx, s.key, s.database, tableID, id, data)
		return err
	})
	return r, err
}

func (s *Store) delete(ctx context.Context, tableID, id string) error {
	err := s.aw.DeleteRow(ctx, s.key, s.database, tableID, id)
	if appwriterest.TypeOf(err) == "row_not_found" {
		return nil
	}
	return err
}
