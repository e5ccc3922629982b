package subscriptions_test

import (
	"fmt"

	"appwrite-agent/functions/mcp-events/subscriptions"
)

// The subscription id is a function of (principal, callback URL, event, canonical arguments) only, so every
// replica computes the same one and it is the Appwrite webhook's id.
func ExampleID() {
	id := subscriptions.ID("user-1", "https://hooks.example/cb", "tablesdb.row.created",
		map[string]string{"project_id": "p1", "database_id": "main", "table_id": "support_tickets"})
	fmt.Println(len(id), id[:len(subscriptions.IDPrefix)])
	// Output: 36 mcpev_
}
