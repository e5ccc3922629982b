package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"appwrite-agent/scripts/internal/nodepeers"
	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localappwrite/oauthserver"

	"github.com/golang-jwt/jwt/v5"
)

// tsClient is one run of nodepeers/tsclient.mjs, an application on the official TypeScript SDK's OAuth
// client; the test is its user's browser.
type tsClient struct {
	t        *testing.T
	in       io.WriteCloser
	out      *bufio.Scanner
	user     *oauthserver.User
	consents []oauthserver.Consent
	seen     []*oauthserver.AuthorizeResult
	// exchanged, when set, gets the tokens of a code exchange (connect with pauseAfterExchange), before the
	// client goes on.
	exchanged func(tokens json.RawMessage)
}

func startTSClient(t *testing.T, ctx context.Context, mcpURL string, user *oauthserver.User, consents ...oauthserver.Consent) *tsClient {
	t.Helper()
	p, err := nodepeers.Locate()
	if err != nil {
		t.Skip(err.Error())
	}
	cmd := exec.CommandContext(ctx, p.Node, p.TSClient)
	cmd.Env = append(cmd.Environ(), "MCP_URL="+mcpURL, "MCP_NODE_MODULES="+p.Modules)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("tsclient stderr:\n%s", stderr.String())
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &tsClient{t: t, in: in, out: sc, user: user, consents: consents}
}

// do sends one command and returns its result, playing the user whenever the client asks for an
// authorization.
func (c *tsClient) do(ctx context.Context, cmd map[string]any) (json.RawMessage, error) {
	c.t.Helper()
	c.send(cmd)
	for c.out.Scan() {
		var msg struct {
			Authorize string          `json:"authorize"`
			Exchanged bool            `json:"exchanged"`
			Tokens    json.RawMessage `json:"tokens"`
			OK        bool            `json:"ok"`
			Result    json.RawMessage `json:"result"`
			Error     string          `json:"error"`
			Status    any             `json:"status"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &msg); err != nil {
			c.t.Fatalf("tsclient printed %q", c.out.Text())
		}
		if msg.Authorize != "" {
			if len(c.seen) >= len(c.consents) {
				c.t.Fatalf("an authorization the test did not expect: %s", msg.Authorize)
			}
			res, err := c.user.Authorize(ctx, msg.Authorize, c.consents[len(c.seen)])
			if err != nil {
				c.t.Fatalf("the user's authorization: %v", err)
			}
			c.seen = append(c.seen, res)
			c.send(map[string]any{"op": "redirect", "url": res.Redirect.String()})
			continue
		}
		if msg.Exchanged {
			if c.exchanged != nil {
				c.exchanged(msg.Tokens)
			}
			c.send(map[string]any{"op": "continue"})
			continue
		}
		if !msg.OK {
			return nil, fmt.Errorf("%s (status %v)", msg.Error, msg.Status)
		}
		return msg.Result, nil
	}
	c.t.Fatalf("tsclient ended: %v", c.out.Err())
	return nil, nil
}

func (c *tsClient) send(v any) {
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// TestTypeScriptSDKOAuthFlow: the official TypeScript SDK's OAuth client against the staged mcp-events and the
// stand-in's authorization server: from a bare 401 through registration, the user's sign-in and consent and
// the PKCE exchange to ping (2025-11-25), a subscription and a verified delivery; the application finds its
// token expired and the SDK refreshes it (rotation); a second application whose user grants read-only
// is refused with the step-up 403 and goes through a second consent; and a third, whose first token has
// expired by the time it calls, meets mcp-events' 401 and refreshes without asking the user.
func TestTypeScriptSDKOAuthFlow(t *testing.T) {
	w := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := w.st.Demo
	mcpURL := w.st.URLs["mcp-events"] + "/mcp"
	claims := func(tok string) jwt.MapClaims { return w.accessClaims(tok, mcpURL) }
	type tokens struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
	}
	current := func(c *tsClient) tokens {
		raw, err := c.do(ctx, map[string]any{"op": "tokens"})
		if err != nil {
			t.Fatal(err)
		}
		var tk tokens
		_ = json.Unmarshal(raw, &tk)
		return tk
	}
	subscribe := map[string]any{"op": "request", "method": "events/subscribe", "params": map[string]any{
		"name": "tablesdb.row.created", "arguments": w.args(), "delivery": map[string]any{"mode": "webhook", "url": w.rcv.URL(), "secret": w.sec}}}

	// 1. From the bare 401 to a connected client.
	c := startTSClient(t, ctx, mcpURL, oauthserver.NewUser(localappwrite.DemoUserEmail, localappwrite.DemoUserPassword), oauthserver.Consent{})
	if raw, err := c.do(ctx, map[string]any{"op": "connect"}); err != nil {
		t.Fatalf("connect: %v", err)
	} else if !strings.Contains(string(raw), "appwrite-mcp-events") {
		t.Fatalf("connect: %s", raw)
	}
	if len(c.seen) != 1 || !c.seen[0].LoggedIn || c.seen[0].Account != localappwrite.DemoUserEmail {
		t.Fatalf("sign-in: %+v", c.seen)
	}
	t1 := current(c)
	c1 := claims(t1.AccessToken)
	if c1["sub"] != d.UserID || !strings.Contains(c1["scope"].(string), "project:") || strings.Contains(" "+c1["scope"].(string)+" ", " webhooks.write ") || t1.RefreshToken == "" {
		t.Fatalf("token %+v claims %v", t1, c1)
	}
	// ping in the 2025-11-25 session: the SDK's strict schema accepts the answer.
	if _, err := c.do(ctx, map[string]any{"op": "ping"}); err != nil {
		t.Fatalf("ping: %v", err)
	}

	// 2. A subscription and a verified delivery.
	raw, err := c.do(ctx, subscribe)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	var sub struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &sub)
	rowID := w.row(w.st.Demo.TicketsTableID)
	w.settle()
	if evs := w.events(); len(evs) != 1 || !evs[0].Verified || evs[0].Header.Get("X-MCP-Subscription-Id") != sub.ID {
		t.Fatalf("delivery: %+v (subscription %s)", evs, raw)
	} else if occ, err := evs[0].Event(); err != nil || occ.Data["row_id"] != rowID {
		t.Fatalf("event %+v %v", occ, err)
	}

	// 3. The access token expired: the SDK refreshes it and the client goes on.
	if raw, err := c.do(ctx, map[string]any{"op": "refresh"}); err != nil || string(raw) != `"AUTHORIZED"` {
		t.Fatalf("refresh: %s %v", raw, err)
	}
	t2 := current(c)
	if t2.AccessToken == t1.AccessToken || t2.RefreshToken == t1.RefreshToken || claims(t2.AccessToken)["scope"] != c1["scope"] {
		t.Fatal("the token was not refreshed, or the refresh token did not rotate")
	}
	if _, err := c.do(ctx, subscribe); err != nil {
		t.Fatalf("subscribe with the refreshed token: %v", err)
	}
	if len(c.seen) != 1 {
		t.Fatalf("the refresh asked the user again (%d authorizations)", len(c.seen))
	}
	_, _ = c.do(ctx, map[string]any{"op": "close"})

	// 4. A user who grants read-only: subscribe is stepped up with 403, and the user is asked again.
	c2 := startTSClient(t, ctx, mcpURL, oauthserver.NewUser(localappwrite.DemoUserEmail, localappwrite.DemoUserPassword),
		oauthserver.Consent{ReadOnly: true}, oauthserver.Consent{})
	if _, err := c2.do(ctx, map[string]any{"op": "connect"}); err != nil {
		t.Fatalf("connect read-only: %v", err)
	}
	for _, s := range strings.Fields(claims(current(c2).AccessToken)["scope"].(string)) {
		if strings.HasSuffix(s, ".write") || strings.HasSuffix(s, ":all") {
			t.Fatalf("read-only consent granted %s", s)
		}
	}
	if _, err := c2.do(ctx, subscribe); err != nil {
		t.Fatalf("subscribe after the second consent: %v", err)
	}
	if len(c2.seen) != 2 || c2.seen[1].LoggedIn {
		t.Fatalf("authorizations %d, want the read-only one and a second consent (signed in already)", len(c2.seen))
	}
	if !strings.Contains(claims(current(c2).AccessToken)["scope"].(string), "webhooks.write") {
		t.Fatal("the second consent did not grant the webhook write scope")
	}
	_, _ = c2.do(ctx, map[string]any{"op": "close"})

	// 5. The staged mcp-events refuses an expired access token, and the SDK refreshes it on the 401: the
	// authorization server's clock is two hours back when it issues the first token (expired on arrival,
	// by mcp-events' wall clock), and right again before the client's first call.
	c3 := startTSClient(t, ctx, mcpURL, oauthserver.NewUser(localappwrite.DemoUserEmail, localappwrite.DemoUserPassword), oauthserver.Consent{})
	var first tokens
	c3.exchanged = func(raw json.RawMessage) {
		_ = json.Unmarshal(raw, &first)
		w.clock.Advance(2 * time.Hour)
	}
	w.clock.Advance(-2 * time.Hour)
	if _, err := c3.do(ctx, map[string]any{"op": "connect", "pauseAfterExchange": true}); err != nil {
		t.Fatalf("connect with a token that expired on arrival: %v", err)
	}
	fc := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(first.AccessToken, fc); err != nil {
		t.Fatalf("the first token %q: %v", first.AccessToken, err)
	}
	if exp, _ := fc.GetExpirationTime(); exp == nil || !exp.Before(time.Now().Add(-time.Minute)) {
		t.Fatalf("the first token expires at %v: not expired for mcp-events", exp)
	}
	t3 := current(c3)
	if t3.AccessToken == first.AccessToken || t3.RefreshToken == first.RefreshToken || len(c3.seen) != 1 {
		t.Fatalf("no refresh after the 401 (%d authorizations)", len(c3.seen))
	}
	if exp, _ := claims(t3.AccessToken).GetExpirationTime(); exp == nil || !exp.After(time.Now()) {
		t.Fatalf("the client goes on with a token expiring %v", exp)
	}
	_, _ = c3.do(ctx, map[string]any{"op": "close"})
}
