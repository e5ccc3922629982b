package appwriteapi

import (
	"context"
	"encoding/json"
	"net/http"
)

// The reads behind the mcp-events read-only tools: one resource each, returned as Appwrite's JSON document
// (response format ResponseFormat), with the caller's token.

// GetRow reads a TablesDB row.
func (p *Project) GetRow(ctx context.Context, databaseID, tableID, rowID string) (json.RawMessage, error) {
	return p.raw(ctx, "/tablesdb/"+seg(databaseID)+"/tables/"+seg(tableID)+"/rows/"+seg(rowID))
}

// GetFile reads a Storage file's metadata (not its content).
func (p *Project) GetFile(ctx context.Context, bucketID, fileID string) (json.RawMessage, error) {
	return p.raw(ctx, "/storage/buckets/"+seg(bucketID)+"/files/"+seg(fileID))
}

// GetUser reads a project user.
func (p *Project) GetUser(ctx context.Context, userID string) (json.RawMessage, error) {
	return p.raw(ctx, "/users/"+seg(userID))
}

// GetExecution reads a function execution (status, logs, errors).
func (p *Project) GetExecution(ctx context.Context, functionID, executionID string) (json.RawMessage, error) {
	return p.raw(ctx, "/functions/"+seg(functionID)+"/executions/"+seg(executionID))
}

func (p *Project) raw(ctx context.Context, path string) (json.RawMessage, error) {
	var out json.RawMessage
	if err := p.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}
