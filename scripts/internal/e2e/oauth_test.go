package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/localappwrite"
	"appwrite-agent/shared/devkit/localappwrite/oauthserver"
	"appwrite-agent/shared/devkit/testclock"
	"appwrite-agent/shared/eventsclient"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// sdkUser is the person behind the official Go SDK's OAuth client: the SDK opens the authorization URL
// (AuthorizationCodeFetcher), and the user signs in at the stand-in's pages and answers the consent as the
// test says for each round.
type sdkUser struct {
	t        *testing.T
	user     *oauthserver.User
	mu       sync.Mutex
	consents []oauthserver.Consent // one per authorization, in order
	seen     []*oauthserver.AuthorizeResult
}

func (u *sdkUser) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u.mu.Lock()
	i := len(u.seen)
	if i >= len(u.consents) {
		u.mu.Unlock()
		return nil, errors.New("the test expected no further authorization")
	}
	c := u.consents[i]
	u.mu.Unlock()
	res, err := u.user.Authorize(ctx, args.URL, c)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.seen = append(u.seen, res)
	u.mu.Unlock()
	q := res.Redirect.Query()
	if e := q.Get("error"); e != "" {
		return nil, errors.New("authorization refused: " + e + ": " + q.Get("error_description"))
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// clockedSource is the token source the SDK's handler uses (AuthorizationCodeHandlerConfig.NewTokenSource):
// it hands out the current token until the client's clock, which the test moves, passes its expiry, and
// then has the oauth2 library (the SDK's own oauth2.Config) refresh it at the token endpoint.
type clockedSource struct {
	ctx context.Context
	cfg *oauth2.Config
	now func() time.Time

	mu        sync.Mutex
	tok       *oauth2.Token
	refreshes int
}

func (c *clockedSource) Token() (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok.Expiry.IsZero() || c.now().Before(c.tok.Expiry.Add(-10*time.Second)) {
		return c.tok, nil
	}
	// Expired for this client: the refresh_token grant through x/oauth2 (a token with a past expiry forces it).
	nt, err := c.cfg.TokenSource(c.ctx, &oauth2.Token{RefreshToken: c.tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		return nil, err
	}
	c.tok = nt
	c.refreshes++
	return nt, nil
}

// oauthTransport calls MCP with the SDK handler's tokens following auth.OAuthHandler's contract, as the SDK's
// own StreamableClientTransport does: the Authorization header from TokenSource; on a 401 or 403, Authorize
// with the failed request and answer, then one retry.
type oauthTransport struct{ h auth.OAuthHandler }

func (o oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	send := func() (*http.Response, error) {
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = b
		}
		if ts, err := o.h.TokenSource(req.Context()); err != nil {
			return nil, err
		} else if ts != nil {
			tok, err := ts.Token()
			if err != nil {
				return nil, err
			}
			tok.SetAuthHeader(r)
		}
		return http.DefaultTransport.RoundTrip(r)
	}
	resp, err := send()
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if err := o.h.Authorize(req.Context(), req, resp); err != nil {
		return nil, err
	}
	return send()
}

// accessClaims verifies an access token of the stand-in's authorization server for the resource aud,
// independently (the stand-in's public key, golang-jwt), and returns its claims.
func (w *world) accessClaims(tok, aud string) jwt.MapClaims {
	w.t.Helper()
	c := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(tok, c, func(*jwt.Token) (any, error) { return w.st.Appwrite.Server.PublicKey(), nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(w.st.Demo.Issuer), jwt.WithAudience(aud)); err != nil {
		w.t.Fatalf("access token: %v", err)
	}
	return c
}

// TestGoSDKOAuthFlow: the official MCP Go SDK's OAuth client (auth.AuthorizationCodeHandler) against the
// staged mcp-events and the stand-in's authorization server, from a bare 401 to a subscription and a
// verified delivery; then the access token expires and is refreshed (rotating the refresh token) and the
// client goes on; and a second client whose user consents read-only is stepped up (403 insufficient_scope)
// and asks the user again.
func TestGoSDKOAuthFlow(t *testing.T) {
	w := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := w.st.Demo
	mcpURL := w.st.URLs["mcp-events"] + "/mcp"
	clientClock := testclock.Wall() // the client's clock, moved by the test

	newClient := func(u *sdkUser) (*auth.AuthorizationCodeHandler, *clockedSource, *sync.Mutex) {
		var mu sync.Mutex
		var src *clockedSource
		h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "Go SDK client", RedirectURIs: []string{"http://127.0.0.1:33418/callback"},
				TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			}},
			AuthorizationCodeFetcher: u.fetch,
			NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
				mu.Lock()
				defer mu.Unlock()
				src = &clockedSource{ctx: ctx, cfg: cfg, now: clientClock.Now, tok: tok}
				return src, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return h, src, &mu
	}
	claims := func(tok string) jwt.MapClaims { return w.accessClaims(tok, mcpURL) }

	// 1. The SDK connects: a bare 401, metadata, registration, the user's sign-in and consent, the code
	// exchanged with PKCE, then initialize with the token.
	u1 := &sdkUser{t: t, user: oauthserver.NewUser(localappwrite.DemoUserEmail, localappwrite.DemoUserPassword), consents: []oauthserver.Consent{{}}}
	h1, _, _ := newClient(u1)
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-oauth", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: mcpURL, OAuthHandler: h1, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		for _, r := range u1.seen {
			t.Logf("authorization redirected to %s", r.Redirect)
		}
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if len(u1.seen) != 1 || !u1.seen[0].LoggedIn || u1.seen[0].Account != localappwrite.DemoUserEmail {
		t.Fatalf("sign-in: %+v", u1.seen)
	}
	ts, _ := h1.TokenSource(ctx)
	tok1, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	c1 := claims(tok1.AccessToken)
	scopes := strings.Fields(c1["scope"].(string))
	if len(scopes) == 0 || slices.ContainsFunc(scopes, func(s string) bool {
		return !strings.Contains(s, ":") && s != "openid" && s != "profile" && s != "email"
	}) ||
		c1["sub"] != d.UserID {
		t.Fatalf("token claims %v: want Cloud's scope names", c1)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}

	// 2. events/subscribe with the SDK's token; the callback is verified and a row is delivered, signed.
	mcp := &eventsclient.Client{Endpoint: mcpURL, HTTP: &http.Client{Transport: oauthTransport{h1}}}
	sub, err := mcp.Subscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL(), w.sec, 0)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	rowID := w.row(w.st.Demo.TicketsTableID)
	w.settle()
	if evs := w.events(); len(evs) != 1 || !evs[0].Verified || evs[0].Header.Get("X-MCP-Subscription-Id") != sub.ID {
		t.Fatalf("delivery: %+v", evs)
	} else if occ, err := evs[0].Event(); err != nil || occ.Data["row_id"] != rowID {
		t.Fatalf("event %+v %v", occ, err)
	}

	// 3. An hour and more later the access token has expired: the client refreshes it and goes on.
	clientClock.Advance(2 * time.Hour)
	if _, err := mcp.Subscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL(), w.sec, 0); err != nil {
		t.Fatalf("subscribe after the refresh: %v", err)
	}
	tok2, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok2.AccessToken == tok1.AccessToken || tok2.RefreshToken == tok1.RefreshToken || tok2.RefreshToken == "" {
		t.Fatal("the token was not refreshed, or the refresh token did not rotate")
	}
	if c2 := claims(tok2.AccessToken); c2["scope"] != c1["scope"] || c2["jti"] == c1["jti"] {
		t.Fatalf("refreshed claims %v", c2)
	}
	if len(u1.seen) != 1 {
		t.Fatalf("the refresh asked the user again (%d authorizations)", len(u1.seen))
	}

	// 4. Another client whose user grants read-only: subscribing is stepped up (403 insufficient_scope), the
	// SDK asks the user again for what is missing, and the call goes through.
	u2 := &sdkUser{t: t, user: oauthserver.NewUser(localappwrite.DemoUserEmail, localappwrite.DemoUserPassword),
		consents: []oauthserver.Consent{{ReadOnly: true}, {}}}
	h2, _, _ := newClient(u2)
	mcp2 := &eventsclient.Client{Endpoint: mcpURL, HTTP: &http.Client{Transport: oauthTransport{h2}}}
	// The first call meets the 401, the user grants read-only, and the retried call meets the step-up: no
	// event can be subscribed to without the webhook write scope (the transport retries once per call).
	var stepUp *eventsclient.Error
	if _, err := mcp2.List(ctx); !errors.As(err, &stepUp) || stepUp.HTTPStatus != http.StatusForbidden ||
		!strings.Contains(fmt.Sprint(stepUp.Data["missingScopes"]), "webhooks.write") {
		t.Fatalf("events/list read-only: %v", err)
	}
	ts2, _ := h2.TokenSource(ctx)
	ro, _ := ts2.Token()
	for _, s := range strings.Fields(claims(ro.AccessToken)["scope"].(string)) {
		if strings.HasSuffix(s, ".write") || strings.HasSuffix(s, ":all") {
			t.Fatalf("read-only consent granted %s", s)
		}
	}
	// The next call meets the 403 again: the SDK asks the user for what the challenge names, and goes on.
	if _, err := mcp2.Subscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL(), w.sec, 0); err != nil {
		t.Fatalf("subscribe after the step-up: %v", err)
	}
	if len(u2.seen) != 2 {
		t.Fatalf("authorizations %d, want 2 (read-only, then the step-up)", len(u2.seen))
	}
	if !slices.ContainsFunc(u2.seen[1].Offered, func(s string) bool { return strings.HasSuffix(s, "webhooks.write") }) {
		t.Fatalf("the second consent does not ask for the webhook write scope: %v", u2.seen[1].Offered)
	}
	ts2, _ = h2.TokenSource(ctx) // the step-up's new grant
	full, _ := ts2.Token()
	if !strings.Contains(claims(full.AccessToken)["scope"].(string), "webhooks.write") {
		t.Fatalf("after the step-up: %v", claims(full.AccessToken))
	}
}
