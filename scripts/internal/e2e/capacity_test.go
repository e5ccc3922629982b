package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/stack"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/webhookreceiver"
	"appwrite-agent/shared/eventsclient"

	"github.com/appwrite/sdk-for-go/appwrite"
	"github.com/appwrite/sdk-for-go/id"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// cloudIngress is an ingress URL of a Cloud function domain's usual length: https:// + a 20-character id +
// .fra.appwrite.run (45 characters). The stand-in's webhook worker reaches the local ingress through it.
const cloudIngress = "https://6745a1b2c3d4e5f60718.fra.appwrite.run"

// cloudRoute sends what the stand-in delivers to cloudIngress to the ingress's local function domain, as
// DNS and Appwrite's router would.
type cloudRoute struct{ domain atomic.Pointer[string] }

func (c *cloudRoute) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == strings.TrimPrefix(cloudIngress, "https://") {
		d := c.domain.Load()
		if d == nil {
			return nil, errors.New("cloud route: ingress domain not known yet")
		}
		out := req.Clone(req.Context())
		u, err := out.URL.Parse(*d + req.URL.Path)
		if err != nil {
			return nil, err
		}
		out.URL, out.Host = u, u.Host
		return http.DefaultTransport.RoundTrip(out)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// capCase is one secret size of TestSubscriptionCapacity.
type capCase struct {
	secret             int
	single, rotating   int // the minimums
	secrets            [2]string
	receiver           *webhookreceiver.Receiver
	gotSingle, gotBoth int
}

func whsec(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// TestSubscriptionCapacity measures, through events/subscribe on the stand-in with the staged functions
// and an ingress URL of Cloud length, the longest callback URL a tablesdb.row.created subscription on 36-character
// database and table ids takes, for 24-, 32- and 64-byte secrets, with and without a rotation grace window;
// each maximum is subscribed and gets a real delivery that the Standard Webhooks library verifies (with
// both secrets during the grace window), and one byte more is refused or, for the grace window, answered
// with the previous secret not kept.
func TestSubscriptionCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	cases := []capCase{{secret: 24, single: 300, rotating: 256}, {secret: 32, single: 300, rotating: 256}, {secret: 64, single: 256, rotating: 200}}
	dir := t.TempDir()
	var pems []byte
	for i := range cases {
		c := &cases[i]
		c.secrets = [2]string{whsec(c.secret), whsec(c.secret)}
		c.receiver = webhookreceiver.New(c.secrets[0], c.secrets[1])
		t.Cleanup(c.receiver.Close)
		pems = append(pems, c.receiver.CertPEM()...)
	}
	ca := filepath.Join(dir, "receivers.pem")
	if err := os.WriteFile(ca, pems, 0o600); err != nil {
		t.Fatal(err)
	}
	route := &cloudRoute{}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	st, err := stack.Start(ctx, stack.Options{StateDir: dir, Env: map[string][]string{"*": {"SAFEHTTP_CA_FILE=" + ca, "MCP_EVENTS_INGRESS_URL=" + cloudIngress}},
		Appwrite: localappwrite.Options{DeliveryClient: &http.Client{Transport: route}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	d := st.Demo
	domain := d.Domains["webhook-ingress"]
	route.domain.Store(&domain)
	db := strings.Repeat("d", 36)
	table := strings.Repeat("t", 36)
	if err := st.Appwrite.Server.SeedDatabase(d.ProjectID, localappwrite.DatabaseSpec{ID: db, Tables: []localappwrite.TableSpec{{ID: table}}}); err != nil {
		t.Fatal(err)
	}
	args := map[string]string{"project_id": d.ProjectID, "database_id": db, "table_id": table}
	mcp := &eventsclient.Client{Endpoint: st.URLs["mcp-events"] + "/mcp", Token: d.OAuthToken}
	rows := appwrite.NewTablesDB(appwrite.NewClient(appwrite.WithTimeout(sdkTimeout), appwrite.WithEndpoint(d.Endpoint), appwrite.WithProject(d.ProjectID), appwrite.WithKey(d.APIKey)))

	type result struct {
		ID   string                    `json:"id"`
		Meta map[string]map[string]any `json:"_meta"`
	}
	subscribe := func(rcv *webhookreceiver.Receiver, n int, secret string) (result, error) {
		base := rcv.URL() + "/"
		cb := base + strings.Repeat("u", n-len(base))
		var out result
		err := mcp.Call(ctx, "events/subscribe", map[string]any{
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": eventsclient.ProtocolVersion},
			"name":  "tablesdb.row.created", "arguments": args, "cursor": nil,
			"delivery": map[string]any{"mode": "webhook", "url": cb, "secret": secret},
		}, &out)
		return out, err
	}
	unsubscribe := func(rcv *webhookreceiver.Receiver, n int) {
		base := rcv.URL() + "/"
		err := mcp.Call(ctx, "events/unsubscribe", map[string]any{
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": eventsclient.ProtocolVersion},
			"name":  "tablesdb.row.created", "arguments": args, "delivery": map[string]any{"url": base + strings.Repeat("u", n-len(base))},
		}, nil)
		if err != nil {
			t.Fatalf("unsubscribe: %v", err)
		}
	}
	refusal := func(err error) *eventsclient.Error {
		var e *eventsclient.Error
		if !errors.As(err, &e) || e.Code != -32602 || e.Data["field"] != "delivery.url" {
			t.Fatalf("want a -32602 refusal naming delivery.url, got %v", err)
		}
		return e
	}
	// deliver creates a row and returns the verified deliveries of subscription subID it caused.
	deliver := func(c *capCase, subID string) webhookreceiver.Delivery {
		t.Helper()
		before := len(c.receiver.Events())
		if _, err := rows.CreateRow(db, table, id.Unique(), map[string]any{}); err != nil {
			t.Fatal(err)
		}
		fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
		defer fcancel()
		if err := st.Appwrite.Server.Flush(fctx); err != nil {
			t.Fatal(err)
		}
		evs := c.receiver.Events()[before:]
		for _, e := range evs {
			if e.Header.Get("X-MCP-Subscription-Id") == subID {
				if !e.Verified {
					t.Fatalf("delivery to %s does not verify: %s", subID, e.VerifyErr)
				}
				return e
			}
		}
		t.Fatalf("no delivery for %s (%d events)", subID, len(evs))
		return webhookreceiver.Delivery{}
	}
	verifiesWith := func(e webhookreceiver.Delivery, secret string) bool {
		wh, err := standardwebhooks.NewWebhook(secret)
		return err == nil && wh.Verify(e.Body, e.Header) == nil
	}

	for i := range cases {
		c := &cases[i]
		// One secret: the refusal names the maximum; it subscribes and delivers; one byte more is refused.
		_, err := subscribe(c.receiver, 1000, c.secrets[0])
		e := refusal(err)
		most := int(e.Data["maxLength"].(float64))
		want := fmt.Sprintf("callback URL is 1000 bytes; at most %d fit with a %d-byte secret", most, c.secret)
		if !strings.Contains(e.Message, want) {
			t.Fatalf("%d-byte secret: message %q, want %q", c.secret, e.Message, want)
		}
		if _, err := subscribe(c.receiver, most+1, c.secrets[0]); !strings.Contains(refusal(err).Message, fmt.Sprintf("callback URL is %d bytes; at most %d fit", most+1, most)) {
			t.Fatalf("%d-byte secret, %d bytes: %v", c.secret, most+1, err)
		}
		sub, err := subscribe(c.receiver, most, c.secrets[0])
		if err != nil {
			t.Fatalf("%d-byte secret: the maximum %d does not subscribe: %v", c.secret, most, err)
		}
		ev := deliver(c, sub.ID)
		if !verifiesWith(ev, c.secrets[0]) {
			t.Fatalf("%d-byte secret: the delivery at %d bytes does not verify", c.secret, most)
		}
		c.gotSingle = most

		// Rotation at the same length: both secrets do not fit; the answer says the old one was not kept
		// and names the maximum with both.
		rot, err := subscribe(c.receiver, most, c.secrets[1])
		if err != nil || rot.ID != sub.ID {
			t.Fatalf("%d-byte secret: rotation: %v", c.secret, err)
		}
		r := rot.Meta["appwrite-agent/rotation"]
		reason, _ := r["reason"].(string)
		var both int
		if r["previousSecretKept"] != false || !strings.Contains(reason, "previous secret was not kept") {
			t.Fatalf("%d-byte secret: rotation at %d bytes: %v", c.secret, most, rot.Meta)
		}
		if _, err := fmt.Sscanf(reason[strings.Index(reason, "at most "):], "at most %d fit", &both); err != nil {
			t.Fatalf("%d-byte secret: no maximum in %q", c.secret, reason)
		}
		unsubscribe(c.receiver, most)

		// The maximum with both secrets: the grace window is kept and a delivery verifies with either.
		if _, err := subscribe(c.receiver, both, c.secrets[0]); err != nil {
			t.Fatal(err)
		}
		rot, err = subscribe(c.receiver, both, c.secrets[1])
		if err != nil || rot.Meta["appwrite-agent/rotation"]["previousSecretKept"] != true {
			t.Fatalf("%d-byte secret: rotation at %d bytes: %v %v", c.secret, both, rot.Meta, err)
		}
		ev = deliver(c, rot.ID)
		if !verifiesWith(ev, c.secrets[0]) || !verifiesWith(ev, c.secrets[1]) || len(strings.Fields(ev.Header.Get("webhook-signature"))) != 2 {
			t.Fatalf("%d-byte secrets: the delivery at %d bytes during the grace window does not verify with both", c.secret, both)
		}
		unsubscribe(c.receiver, both)
		// One byte more: not kept, and said.
		if _, err := subscribe(c.receiver, both+1, c.secrets[0]); err != nil {
			t.Fatal(err)
		}
		rot, err = subscribe(c.receiver, both+1, c.secrets[1])
		if err != nil || rot.Meta["appwrite-agent/rotation"]["previousSecretKept"] != false {
			t.Fatalf("%d-byte secret: rotation at %d bytes: %v %v", c.secret, both+1, rot.Meta, err)
		}
		unsubscribe(c.receiver, both+1)
		c.gotBoth = both
	}

	var report bytes.Buffer
	fmt.Fprintf(&report, "ingress %s (%d characters), tablesdb.row.created, 36-character database and table ids:\n", cloudIngress, len(cloudIngress))
	fmt.Fprintln(&report, "| secret | longest callback URL | during a rotation grace window |")
	for _, c := range cases {
		fmt.Fprintf(&report, "| %d bytes | %d bytes (>= %d) | %d bytes (>= %d) |\n", c.secret, c.gotSingle, c.single, c.gotBoth, c.rotating)
		if c.gotSingle < c.single || c.gotBoth < c.rotating {
			t.Errorf("%d-byte secret: %d / %d bytes, want at least %d / %d", c.secret, c.gotSingle, c.gotBoth, c.single, c.rotating)
		}
	}
	t.Log(report.String())
}
