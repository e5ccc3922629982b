package store

import (
	"context"
	"encoding/json"
	"slices"

	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/models"
	"github.com/appwrite/sdk-for-go/query"
	"github.com/appwrite/sdk-for-go/tablesdb"
)

// Row is a TablesDB row as chat reads it: its system fields and its columns.
type Row struct {
	ID          string   `json:"$id"`
	CreatedAt   string   `json:"$createdAt"`
	UpdatedAt   string   `json:"$updatedAt"`
	Permissions []string `json:"$permissions"`
	// Data holds every field of the row, system fields included.
	Data map[string]any `json:"-"`
}

// UnmarshalJSON reads the system fields and keeps the whole object in Data.
func (r *Row) UnmarshalJSON(b []byte) error {
	type sys Row
	var s sys
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*r = Row(s)
	return json.Unmarshal(b, &r.Data)
}

// Str returns the string column k ("" when absent or not a string).
func (r Row) Str(k string) string {
	s, _ := r.Data[k].(string)
	return s
}

// Int returns the integer column k (0 when absent; Data holds JSON numbers as float64).
func (r Row) Int(k string) int64 {
	f, _ := r.Data[k].(float64)
	return int64(f)
}

// Bool returns the boolean column k.
func (r Row) Bool(k string) bool {
	b, _ := r.Data[k].(bool)
	return b
}

// rowCall runs one TablesDB call that answers a row, as key, and reads the row.
func rowCall(ctx context.Context, aw *awclient.Client, key string, call func(db *tablesdb.TablesDB) (*models.Row, error)) (Row, error) {
	var r Row
	m, err := awclient.Do(ctx, aw, awclient.Key(key), func(sdk client.Client) (*models.Row, error) { return call(tablesdb.New(sdk)) })
	if err == nil {
		err = m.Decode(&r)
	}
	return r, err
}

// PageSize is how many rows ListRows asks for per request.
const PageSize = 500

// ListRows lists every row of a table matching the queries (built with the SDK's query package), page by
// page, in Appwrite's order (creation), as key: a table of the chat database, or turn's progress table.
func ListRows(ctx context.Context, aw *awclient.Client, key, database, table string, queries ...string) ([]Row, error) {
	var all []Row
	for offset := 0; ; {
		q := append(slices.Clip(queries), query.Limit(PageSize), query.Offset(offset))
		list, err := awclient.Do(ctx, aw, awclient.Key(key), func(sdk client.Client) (*models.RowList, error) {
			db := tablesdb.New(sdk)
			return db.ListRows(database, table, db.WithListRowsQueries(q))
		})
		var page struct {
			Total int   `json:"total"`
			Rows  []Row `json:"rows"`
		}
		if err == nil {
			err = list.Decode(&page)
		}
		if err != nil {
			return nil, err
		}
		all = append(all, page.Rows...)
		offset += len(page.Rows)
		if len(page.Rows) < PageSize || offset >= page.Total {
			return all, nil
		}
	}
}
