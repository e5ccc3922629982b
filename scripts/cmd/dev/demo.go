package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventsclient"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/id"
)

// demoReceiver is the subscriber of the demo: an HTTPS endpoint on loopback that verifies every request
// with the Standard Webhooks library. The functions trust its certificate through SAFEHTTP_CA_FILE.
type demoReceiver struct {
	*webhookreceiver.Receiver
	secret string
	caFile string
}

func newDemoReceiver(stateDir string) (*demoReceiver, error) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	r := webhookreceiver.New(secret)
	caFile := filepath.Join(stateDir, "demo-receiver.pem")
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		r.Close()
		return nil, err
	}
	if err := os.WriteFile(caFile, r.CertPEM(), 0o600); err != nil {
		r.Close()
		return nil, err
	}
	return &demoReceiver{Receiver: r, secret: secret, caFile: caFile}, nil
}

// runDemo does what ChatGPT does with mcp-events: discover, list, subscribe the receiver to tablesdb.row.created
// (answering the signed challenge), then creates a row and prints the event the receiver got.
func runDemo(ctx context.Context, out io.Writer, st *stack.Stack, rcv *demoReceiver) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	d := st.Demo
	mcp := &eventsclient.Client{Endpoint: st.URLs["mcp-events"] + "/mcp", Token: d.OAuthToken}

	step(out, "1. server/discover (MCP 2026-07-28, OAuth bearer of the demo user)")
	disc, err := mcp.Discover(ctx)
	if err != nil {
		return fmt.Errorf("server/discover: %w", err)
	}
	caps, _ := json.Marshal(disc["capabilities"])
	fmt.Fprintf(out, "   capabilities: %s\n", caps)

	step(out, "2. events/list")
	events, err := mcp.List(ctx)
	if err != nil {
		return fmt.Errorf("events/list: %w", err)
	}
	var names []string
	for _, e := range events {
		names = append(names, e.Name)
	}
	fmt.Fprintf(out, "   %s\n", strings.Join(names, ", "))

	step(out, "3. events/subscribe tablesdb.row.created → "+rcv.URL())
	args := map[string]string{"project_id": d.ProjectID, "database_id": d.DatabaseID, "table_id": d.TicketsTableID}
	sub, err := mcp.Subscribe(ctx, "tablesdb.row.created", args, rcv.URL(), rcv.secret, 0)
	if err != nil {
		return fmt.Errorf("events/subscribe: %w", err)
	}
	refresh := "never"
	if sub.RefreshBefore != nil {
		refresh = *sub.RefreshBefore
	}
	fmt.Fprintf(out, "   subscription %s, refresh before %s\n", sub.ID, refresh)
	if ds := rcv.Deliveries(); len(ds) > 0 && ds[0].Verified {
		fmt.Fprintf(out, "   the receiver answered the signed challenge (webhook-id %s)\n", ds[0].Header.Get("webhook-id"))
	}

	step(out, "4. create a row in "+d.DatabaseID+"/"+d.TicketsTableID+" (Appwrite API key)")
	db := appwrite.NewTablesDB(appwrite.NewClient(appwrite.WithEndpoint(d.Endpoint), appwrite.WithProject(d.ProjectID), appwrite.WithKey(d.APIKey)))
	row, err := db.CreateRow(d.DatabaseID, d.TicketsTableID, id.Unique(), map[string]any{"subject": "The checkout page times out", "body": "Since this morning, paying takes a minute and then fails."})
	if err != nil {
		return fmt.Errorf("create row: %w", err)
	}
	fmt.Fprintf(out, "   row %s; Appwrite's webhook worker delivers it to webhook-ingress, which delivers to the receiver\n", row.Id)

	if !rcv.Wait(ctx, func(ds []webhookreceiver.Delivery) bool { return len(rcv.Events()) > 0 }) {
		return errors.New("no event reached the receiver within 60 s (see .dev/logs)")
	}
	ev := rcv.Events()[0]
	step(out, "5. the receiver got:")
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "X-MCP-Subscription-Id"} {
		fmt.Fprintf(out, "   %s: %s\n", h, ev.Header.Get(h))
	}
	var pretty any
	_ = json.Unmarshal(ev.Body, &pretty)
	body, _ := json.MarshalIndent(pretty, "   ", "  ")
	fmt.Fprintf(out, "   %s\n", body)
	if !ev.Verified {
		return fmt.Errorf("the delivery's signature did not verify: %s", ev.VerifyErr)
	}
	fmt.Fprintln(out, "\n   signature verified with the Standard Webhooks library: yes")
	return nil
}

func step(w io.Writer, s string) { fmt.Fprintln(w, "\n"+s) }
