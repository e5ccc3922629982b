package handler_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// consentingClient is the OAuth side of an MCP client as the official SDK drives it (auth.OAuthHandler):
// on a 401 or 403 it reads the challenge with the SDK's own parser, checks the protected-resource metadata
// with the SDK's RFC 9728 check, and "asks the user" (mints a token from the stand-in issuer) for the
// scopes it already holds plus the ones the challenge names.
type consentingClient struct {
	t        *testing.T
	st       *stack
	instance string // where the metadata is really served (the public URL is not reachable in tests)

	mu         sync.Mutex
	token      string
	scopes     []string
	challenges []oauthex.Challenge
	statuses   []int
}

func (c *consentingClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.token, TokenType: "Bearer"}), nil
}

func (c *consentingClient) Authorize(ctx context.Context, _ *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(chs) != 1 || chs[0].Scheme != "bearer" {
		c.t.Errorf("challenge %q: %v", resp.Header.Values("WWW-Authenticate"), err)
		return err
	}
	ch := chs[0]
	meta := ch.Params["resource_metadata"]
	if !strings.HasPrefix(meta, publicURL+"/.well-known/oauth-protected-resource") {
		c.t.Errorf("resource_metadata %q", meta)
	}
	if _, err := oauthex.GetProtectedResourceMetadata(ctx, c.instance+strings.TrimPrefix(meta, publicURL), publicURL+"/mcp", http.DefaultClient); err != nil {
		c.t.Errorf("the SDK's RFC 9728 check: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.challenges = append(c.challenges, ch)
	c.statuses = append(c.statuses, resp.StatusCode)
	for _, s := range strings.Fields(ch.Params["scope"]) {
		if !slices.Contains(c.scopes, s) {
			c.scopes = append(c.scopes, s)
		}
	}
	c.token = c.st.token(userID, c.scopes)
	return nil
}

// TestOfficialSDKStepsUp: the official MCP Go SDK, with an OAuth handler, meets the 401 challenge without
// an error code on its first request, gets a token for the advertised scopes minus what the user refuses
// (here: users.read), then meets the 403 insufficient_scope challenge on get_user, asks for exactly
// users.read, and its retried call succeeds.
func TestOfficialSDKStepsUp(t *testing.T) {
	st := newStack(t)
	url := st.instance(st.server(handler.Options{}))
	c := &consentingClient{t: t, st: st, instance: url}
	// The user grants everything but users.read at first (a real consent screen may drop scopes).
	c.scopes = slices.DeleteFunc(slices.Clone(allScopes), func(s string) bool { return s == "project:users.read" })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-stepup", Version: "1.0.0"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/mcp", OAuthHandler: oneScopeDropped{c}, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_user", Arguments: map[string]any{"project_id": projectID, "user_id": "ghost"}})
	if err != nil {
		t.Fatalf("get_user after step-up: %v", err)
	}
	if !res.IsError || !strings.Contains(toolText(res), "Not found: user ghost") {
		t.Fatalf("get_user: %q", toolText(res))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.challenges) != 2 || c.statuses[0] != 401 || c.statuses[1] != 403 {
		t.Fatalf("challenges %v %+v", c.statuses, c.challenges)
	}
	if _, ok := c.challenges[0].Params["error"]; ok {
		t.Fatalf("the no-credentials challenge carries an error code: %+v", c.challenges[0])
	}
	if e, s := c.challenges[1].Params["error"], c.challenges[1].Params["scope"]; e != "insufficient_scope" || s != "project:users.read" {
		t.Fatalf("step-up challenge: %+v", c.challenges[1])
	}
	if !slices.Contains(c.scopes, "project:users.read") {
		t.Fatalf("scopes after step-up: %v", c.scopes)
	}
}

// oneScopeDropped wraps the client so that the first consent (after the 401) leaves out users.read, as a
// user unticking it would; later consents grant what the challenge asks for.
type oneScopeDropped struct{ c *consentingClient }

func (o oneScopeDropped) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return o.c.TokenSource(ctx)
}

func (o oneScopeDropped) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	first := resp.StatusCode == http.StatusUnauthorized
	if err := o.c.Authorize(ctx, req, resp); err != nil {
		return err
	}
	if first {
		o.c.mu.Lock()
		o.c.scopes = slices.DeleteFunc(o.c.scopes, func(s string) bool { return s == "project:users.read" })
		o.c.token = o.c.st.token(userID, o.c.scopes)
		o.c.mu.Unlock()
	}
	return nil
}
