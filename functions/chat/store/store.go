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

	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/seal"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/query"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// Table ids in the chat database.
const (
	Conversations  = "conversations"
	Messages       = "messages"
	Memories       = "memories"
	Settings       = "settings"
	MCPConnections = "mcp_connections"
)

// Sizes of the text columns.
const (
	// FirstMessageChars is the conversation's first message (what title reads), cut to this many characters.
	FirstMessageChars = 4000
	// ContentChars bounds a message's text.
	ContentChars = 1_000_000
	// TimelineChars bounds a turn's stored timeline (JSON).
	TimelineChars = 5_000_000
	// AttachmentsChars bounds a message's attachments (JSON, thumbnails included).
	AttachmentsChars = 100_000
	// UsageChars bounds a turn's usage (JSON).
	UsageChars = 65_536
)

// ErrNotFound is a row that does not exist or belongs to another user.
var ErrNotFound = errors.New("not found")

// table is one table of the schema.
type table struct {
	id, name string
	columns  []column
}

// column is a column of the schema: its type is one of string, integer, boolean and datetime.
type column struct {
	Key      string
	Type     string
	Size     int
	Required bool
}

func str(key string, size int) column {
	return column{Key: key, Type: "string", Size: size}
}

// schema is the chat database. Every table has row security on and no table permission.
var schema = []table{
	{Conversations, "Conversations", []column{
		{Key: "user_id", Type: "string", Size: 36, Required: true}, str("title", 256), str("message", FirstMessageChars),
		{Key: "active_at", Type: "datetime"},
	}},
	{Messages, "Messages", []column{
		{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "conversation_id", Type: "string", Size: 36, Required: true},
		{Key: "role", Type: "string", Size: 16, Required: true}, str("content", ContentChars), str("status", 16),
		str("turn_id", 36), str("execution_id", 36), str("attachments", AttachmentsChars), str("timeline", TimelineChars),
		str("error", 10_000), str("usage", UsageChars),
	}},
	{Memories, "Memories", []column{
		{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "key", Type: "string", Size: 128, Required: true},
		str("content", 8192), str("category", 16), {Key: "priority", Type: "integer"}, {Key: "active", Type: "boolean"},
	}},
	{Settings, "Agent settings", []column{
		{Key: "user_id", Type: "string", Size: 36, Required: true}, str("model", 256), str("base_url", 2048), str("api_key", 4096),
	}},
	{MCPConnections, "MCP connections", []column{
		{Key: "user_id", Type: "string", Size: 36, Required: true}, {Key: "connection_id", Type: "string", Size: 36, Required: true},
		str("name", 256), str("url", 2048), str("description", 2048), str("tokens", 65_536), str("client_info", 65_536),
	}},
}

// Store is the chat's data in one database, reached with one API key.
type Store struct {
	aw       *awclient.Client
	key      string
	database string
	// secrets seals the users' secrets (secrets.go); nil: chat stores and opens none.
	secrets *seal.Keyring
}

// New returns the store of database, called through aw with key (the execution's); secrets (CHAT_SEAL_KEYS) seals the users'
// secrets, nil when chat has none (a secret to store is then ErrNoSealKeys).
func New(aw *awclient.Client, key, database string, secrets *seal.Keyring) *Store {
	return &Store{aw: aw, key: key, database: database, secrets: secrets}
}

// Ensure creates what is missing of the database, its tables and their columns; what exists is kept.
func (s *Store) Ensure(ctx context.Context) error {
	if err := s.tables(ctx, func(db *tablesdb.TablesDB) error {
		_, err := db.Create(s.database, "Chat")
		return err
	}); err != nil && awclient.TypeOf(err) != "database_already_exists" {
		return fmt.Errorf("create database %q: %w", s.database, err)
	}
	for _, t := range schema {
		if err := s.tables(ctx, func(db *tablesdb.TablesDB) error {
			// Row security on, no table-level permission.
			_, err := db.CreateTable(s.database, t.id, t.name, db.WithCreateTablePermissions([]string{}), db.WithCreateTableRowSecurity(true))
			return err
		}); err != nil && awclient.TypeOf(err) != "table_already_exists" {
			return fmt.Errorf("create table %q: %w", t.id, err)
		}
		for _, c := range t.columns {
			if err := s.tables(ctx, func(db *tablesdb.TablesDB) error { return s.createColumn(db, t.id, c) }); err != nil && awclient.TypeOf(err) != "column_already_exists" {
				return fmt.Errorf("create column %s.%s: %w", t.id, c.Key, err)
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

// tables runs one TablesDB call with the store's key whose answer is not read.
func (s *Store) tables(ctx context.Context, call func(db *tablesdb.TablesDB) error) error {
	_, err := awclient.Do(ctx, s.aw, awclient.Key(s.key), func(sdk client.Client) (struct{}, error) {
		return struct{}{}, call(tablesdb.New(sdk))
	})
	return err
}

// createColumn creates column c of table (POST /v1/tablesdb/{db}/tables/{t}/columns/{type}).
func (s *Store) createColumn(db *tablesdb.TablesDB, table string, c column) error {
	var err error
	switch c.Type {
	case "string":
		//lint:ignore SA1019 the sized string column chat's schema has always had (POST .../columns/string, which Appwrite 1.9 still serves)
		_, err = db.CreateStringColumn(s.database, table, c.Key, c.Size, c.Required)
	case "integer":
		_, err = db.CreateIntegerColumn(s.database, table, c.Key, c.Required)
	case "boolean":
		_, err = db.CreateBooleanColumn(s.database, table, c.Key, c.Required)
	case "datetime":
		_, err = db.CreateDatetimeColumn(s.database, table, c.Key, c.Required)
	default:
		err = fmt.Errorf("column %s.%s: no column type %q", table, c.Key, c.Type)
	}
	return err
}

// tableColumns reads a table's columns: key and status ("available" once Appwrite's database worker made
// it; "processing" before).
func (s *Store) tableColumns(ctx context.Context, table string) (map[string]string, error) {
	t, err := awclient.Do(ctx, s.aw, awclient.Key(s.key), func(sdk client.Client) (*models.Table, error) {
		return tablesdb.New(sdk).GetTable(s.database, table)
	})
	var cols struct {
		Columns []struct {
			Key    string `json:"key"`
			Status string `json:"status"`
		} `json:"columns"`
	}
	if err == nil {
		err = t.Decode(&cols)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(cols.Columns))
	for _, c := range cols.Columns {
		out[c.Key] = c.Status
	}
	return out, nil
}

// columnPoll is how often Ensure looks whether new columns are available.
const columnPoll = 200 * time.Millisecond

func (s *Store) waitColumns(ctx context.Context, t table) error {
	for {
		cols, err := s.tableColumns(ctx, t.id)
		if err != nil {
			return fmt.Errorf("read table %q: %w", t.id, err)
		}
		pending := ""
		for _, c := range t.columns {
			if st := cols[c.Key]; st != "available" {
				if st == "failed" || st == "stuck" {
					return fmt.Errorf("column %s.%s is %s in Appwrite: delete it and retry", t.id, c.Key, st)
				}
				pending = c.Key
			}
		}
		if pending == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("column %s.%s is not available yet: %w", t.id, pending, ctx.Err())
		case <-time.After(columnPoll):
		}
	}
}

// missingSchema reports whether err says the database, a table or a column is missing. A missing column is
// a structure refusal for an unknown attribute (utopia-php/database Validator/Structure.php: "Unknown
// attribute"); other structure refusals (a value too long, a wrong type) are not the schema's.
func missingSchema(err error) bool {
	var e *awclient.Error
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

// get reads a row of table that must belong to userID. An id that is no Appwrite id names no row.
func (s *Store) get(ctx context.Context, tableID, id, userID string) (Row, error) {
	if !awclient.ValidID(id) {
		return Row{}, ErrNotFound
	}
	var r Row
	err := s.do(ctx, func() error {
		var err error
		r, err = rowCall(ctx, s.aw, s.key, func(db *tablesdb.TablesDB) (*models.Row, error) { return db.GetRow(s.database, tableID, id) })
		return err
	})
	if awclient.TypeOf(err) == "row_not_found" || awclient.TypeOf(err) == "document_not_found" {
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
func (s *Store) list(ctx context.Context, tableID, userID string, queries ...string) ([]Row, error) {
	var rows []Row
	q := append([]string{query.Equal("user_id", userID)}, queries...)
	err := s.do(ctx, func() error {
		var err error
		rows, err = ListRows(ctx, s.aw, s.key, s.database, tableID, q...)
		return err
	})
	return rows, err
}

// create creates a row with id (an id of chat's, or "unique()"), data and permissions.
func (s *Store) create(ctx context.Context, tableID, id string, data map[string]any, perms []string) (Row, error) {
	var r Row
	err := s.do(ctx, func() error {
		var err error
		r, err = rowCall(ctx, s.aw, s.key, func(db *tablesdb.TablesDB) (*models.Row, error) {
			if perms == nil {
				return db.CreateRow(s.database, tableID, id, data)
			}
			return db.CreateRow(s.database, tableID, id, data, db.WithCreateRowPermissions(perms))
		})
		return err
	})
	return r, err
}

// update updates some columns of a row.
func (s *Store) update(ctx context.Context, tableID, id string, data map[string]any) (Row, error) {
	if !awclient.ValidID(id) {
		return Row{}, ErrNotFound
	}
	var r Row
	err := s.do(ctx, func() error {
		var err error
		r, err = rowCall(ctx, s.aw, s.key, func(db *tablesdb.TablesDB) (*models.Row, error) {
			return db.UpdateRow(s.database, tableID, id, db.WithUpdateRowData(data))
		})
		return err
	})
	return r, err
}

// delete deletes a row; one that is not there is deleted already.
func (s *Store) delete(ctx context.Context, tableID, id string) error {
	if !awclient.ValidID(id) {
		return nil
	}
	err := s.tables(ctx, func(db *tablesdb.TablesDB) error {
		_, err := db.DeleteRow(s.database, tableID, id)
		return err
	})
	if awclient.TypeOf(err) == "row_not_found" {
		return nil
	}
	return err
}
