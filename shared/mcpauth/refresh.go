package mcpauth

// Why discovery is ours, not the official SDK's oauthex (go-sdk v1.8.0; turn uses its ParseWWWAuthenticate).
// oauthex would take our client: it keeps a Transport that is not a bare *http.Transport as it is, calls our
// CheckRedirect and copies Timeout (oauthex/oauth2.go:105-136), and requests carry the context (:42). But:
//   - its bound is a fixed 1 MiB (resource_meta.go:130, auth_meta.go:147) cut by io.LimitReader
//     (oauth2.go:62): a longer document fails as "unexpected EOF", not as too large (ours: 256 KiB);
//   - checkHTTPSOrLoopback (oauth2.go:88-103) refuses http off loopback and private IP literals whatever
//     SAFEHTTP_ALLOW / SAFEHTTP_ALLOW_HTTP say: an allowlisted internal server would connect, never refresh;
//   - resource must equal the URL byte for byte (resource_meta.go:135), and a document without resource
//     (we use the URL) is refused. The owner's server passes for the builtin URL (appwrite/mcp ba839e8,
//     auth.py canonical_resource: "https://mcp.appwrite.io/", served with its root metadata), but a server
//     whose resource differs by a trailing slash or names a parent path would never refresh (ours: the same
//     origin and a path the URL lies under, the TypeScript SDK's checkResourceAllowed);
//   - metadata without code_challenge_methods_supported is refused (auth_meta.go:161): the MCP rule for
//     starting a PKCE authorization, not for a refresh; Azure AD and Cognito omit it (typescript-sdk#2831);
//   - a 4xx gives (nil, nil) (auth_meta.go:150-153), losing the status a user would read; Content-Type must
//     be application/json (oauth2.go:55-58; we accept any);
//   - the URL lists are unexported in package auth (shared.go:39-68, authorization_code.go:465-492), and
//     auth.GetAuthServerMetadata stops at the first non-4xx failure (shared.go:24-28); for an issuer ending
//     in "/" they ask ".../oauth-authorization-server/" and "//.well-known/openid-configuration".
// So the URLs follow the MCP spec here (2026-07-28 authorization-server-discovery.mdx; docs/turn.md "Token
// refresh"): the challenge's resource_metadata when on the server's origin (stricter than the spec), the
// well-known URL for the server's path and query, the origin's; RFC 8414 path insertion, OpenID path
// insertion, OpenID path appending; issuer must match; and, for a server with no protected-resource
// metadata, the 2025-03-26 spec's fallbacks (which oauthex does not have).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"appwrite-agent/shared/safehttp"
)

// MaxMetadataBytes bounds the OAuth metadata documents and the token response.
const MaxMetadataBytes = 256 << 10

// Refresh runs one refresh_token grant (RFC 6749 §6) for the connection at serverURL: the authorization
// server comes from the protected-resource metadata (RFC 9728; prmHint is the resource_metadata URL of a 401
// challenge, used only when it is on the server's origin), its token endpoint from its metadata (RFC 8414,
// then OpenID discovery). A server that answered 401 without naming its metadata (challenged, prmHint "")
// and serves none at the well-known URLs is a 2025-03-26 server: its origin is the authorization server,
// its metadata at the origin's RFC 8414 URL, and without metadata its token endpoint is {origin}/token (the
// 2025-03-26 spec's fallbacks). Before a challenge was seen, a server without metadata is a
// *DiscoveryError: a newer server may name its metadata only in its challenge (2025-11-25 authorization:
// the header or the well-known URL). The request names the resource (RFC 8707) and authenticates as the
// registered client, with the method it registered or else the one the metadata offers
// (client_secret_basic first, RFC 8414's default). Every request goes through hc (the SSRF-safe client).
// The POST that sends the refresh token is not cut by ctx's cancellation once sent (only by its deadline):
// the server rotates the refresh token, and the rotated one must reach the caller. The answer's expiry is
// counted from now.
func Refresh(ctx context.Context, hc *http.Client, serverURL, prmHint string, challenged bool, tok Tokens, ci ClientInfo, now time.Time) (Tokens, error) {
	rt := tok.Refreshable()
	if rt == "" {
		return tok, errors.New("there is no refresh token")
	}
	if ci.ClientID == "" {
		return tok, errors.New("client_info has no client_id to refresh with")
	}
	srv, err := url.Parse(serverURL)
	if err != nil {
		return tok, fmt.Errorf("bad server URL: %v", err)
	}
	as, resource, err := discoverTokenEndpoint(ctx, hc, srv, prmHint, challenged && prmHint == "", ci)
	if err != nil {
		return tok, err
	}
	if resource == "" {
		resource = serverURL
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {ci.ClientID}, "resource": {resource}}
	basic := ci.ClientSecret != "" && authMethod(ci, as.AuthMethods) == "client_secret_basic"
	if ci.ClientSecret != "" && !basic {
		form.Set("client_secret", ci.ClientSecret)
	}
	// The POST rotates the refresh token at the server: once it is sent, cancelling the caller's context (a
	// turn's FINISH answer cancels its MCP load) must not cut it, or the rotated token would be lost. It stays
	// bounded by the context's deadline.
	if err := ctx.Err(); err != nil {
		return tok, err
	}
	pctx := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		pctx, cancel = context.WithDeadline(pctx, dl)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return tok, fmt.Errorf("token endpoint: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(ci.ClientID), url.QueryEscape(ci.ClientSecret))
	}
	res, err := hc.Do(req)
	if err != nil {
		return tok, fmt.Errorf("token endpoint: %v", DescribeHTTPError(err))
	}
	defer res.Body.Close()
	body, err := safehttp.ReadLimited(res.Body, MaxMetadataBytes)
	if err != nil {
		return tok, fmt.Errorf("token endpoint: %v", err)
	}
	var tr struct {
		AccessToken      string   `json:"access_token"`
		ExpiresIn        *float64 `json:"expires_in"`
		Scope            *string  `json:"scope"`
		RefreshToken     *string  `json:"refresh_token"`
		Error            string   `json:"error"`
		ErrorDescription string   `json:"error_description"`
	}
	_ = json.Unmarshal(body, &tr)
	if res.StatusCode != http.StatusOK || strings.TrimSpace(tr.AccessToken) == "" {
		why := tr.Error
		if tr.ErrorDescription != "" {
			why += ": " + tr.ErrorDescription
		}
		if why == "" {
			why = "no access_token in the answer"
		}
		return tok, fmt.Errorf("the authorization server refused the refresh (HTTP %d, %s)", res.StatusCode, why)
	}
	out := tok
	out.AccessToken = strings.TrimSpace(tr.AccessToken)
	out.ExpiresIn, out.ExpiresAt = nil, nil
	if tr.ExpiresIn != nil {
		in := int64(*tr.ExpiresIn)
		at := now.Unix() + in
		out.ExpiresIn, out.ExpiresAt = &in, &at
	}
	if tr.Scope != nil {
		out.Scope = tr.Scope
	}
	if tr.RefreshToken != nil && *tr.RefreshToken != "" {
		out.RefreshToken = tr.RefreshToken
	}
	return out, nil
}

// DiscoveryError is a refresh that found no protected-resource metadata at the URLs it knew (nothing was
// sent to any authorization server): the server's 401 challenge may name another.
type DiscoveryError struct{ err error }

func (e *DiscoveryError) Error() string { return e.err.Error() }
func (e *DiscoveryError) Unwrap() error { return e.err }

// asMetadata is what a refresh reads from an authorization server's metadata.
type asMetadata struct {
	Issuer        string   `json:"issuer"`
	TokenEndpoint string   `json:"token_endpoint"`
	AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
}

// discoverTokenEndpoint finds the authorization server of the MCP server at srv and its metadata, and the
// resource the protected-resource metadata names ("" when it names none); legacy allows the 2025-03-26
// fallbacks when no protected-resource metadata exists. The issuer is checked against the one that
// registered the client (ci.Issuer) before the refresh token goes anywhere.
func discoverTokenEndpoint(ctx context.Context, hc *http.Client, srv *url.URL, prmHint string, legacy bool, ci ClientInfo) (asMetadata, string, error) {
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	var prmErr error
	absent := true // every candidate answered 404: the server has no protected-resource metadata
	for _, u := range prmCandidates(srv, prmHint) {
		if prmErr = getJSON(ctx, hc, u, &prm); prmErr == nil && len(prm.AuthorizationServers) > 0 {
			break
		}
		var se *safehttp.StatusError
		absent = absent && errors.As(prmErr, &se) && se.Code == http.StatusNotFound
		if prmErr == nil {
			prmErr = errors.New("it names no authorization server")
		}
	}
	if prmErr != nil && absent && legacy {
		as, err := legacyMetadata(ctx, hc, srv, ci)
		return as, "", err
	}
	if prmErr != nil {
		return asMetadata{}, "", &DiscoveryError{err: fmt.Errorf("protected-resource metadata: %v", prmErr)}
	}
	// RFC 8707 and the MCP spec: the metadata must speak for this server. Its resource is this server's
	// origin and a path this URL lies under (the TypeScript SDK's rule); otherwise the refresh would ask for
	// a token for another resource and send it here.
	if prm.Resource != "" && !resourceCovers(prm.Resource, srv) {
		return asMetadata{}, "", fmt.Errorf("the protected-resource metadata names resource %q, which is not %s", prm.Resource, srv.String())
	}
	issuer := strings.TrimSpace(prm.AuthorizationServers[0])
	// The MCP spec's authorization server binding (client-registration.mdx): client credentials are bound to
	// the issuer that registered them, and never reused with another one; the refresh token is not sent
	// to it either. The user connects the server again, which registers with the new one.
	if bound := strings.TrimSpace(ci.Issuer); bound != "" && !sameIssuer(bound, issuer) {
		return asMetadata{}, "", fmt.Errorf("the server's authorization server is now %q, but its client was registered with %q: connect it again", issuer, bound)
	}
	iss, err := url.Parse(issuer)
	if err != nil || iss.Host == "" {
		return asMetadata{}, "", fmt.Errorf("bad authorization server %q", issuer)
	}
	var as asMetadata
	var asErr error
	for _, u := range asCandidates(iss) {
		if asErr = getJSON(ctx, hc, u, &as); asErr == nil && as.TokenEndpoint != "" {
			break
		}
		if asErr == nil {
			asErr = errors.New("it has no token_endpoint")
		}
	}
	if asErr != nil {
		return asMetadata{}, "", fmt.Errorf("authorization server metadata: %v", asErr)
	}
	// RFC 8414 §3.3 and the MCP spec: the issuer in the document must be the one the URL was built from
	// (a trailing slash aside, as the SDK's authutil.IssuersEqual allows); a document without one is not
	// used either.
	if as.Issuer == "" {
		return asMetadata{}, "", fmt.Errorf("authorization server metadata names no issuer (want %q)", issuer)
	}
	if !sameIssuer(as.Issuer, issuer) {
		return asMetadata{}, "", fmt.Errorf("authorization server metadata names issuer %q, not %q", as.Issuer, issuer)
	}
	return as, prm.Resource, nil
}

// legacyMetadata is the 2025-03-26 spec's discovery for a server without protected-resource metadata: the
// authorization server is the server's origin, its metadata at the origin's RFC 8414 URL; a metadata document
// that is absent (404) means the default endpoints, {origin}/token for a refresh. The document's issuer must
// be on that origin (it speaks for the server that serves it), and it is the issuer the client is bound to;
// without a document, the origin is.
func legacyMetadata(ctx context.Context, hc *http.Client, srv *url.URL, ci ClientInfo) (asMetadata, error) {
	origin := srv.Scheme + "://" + srv.Host
	var as asMetadata
	err := getJSON(ctx, hc, origin+"/.well-known/oauth-authorization-server", &as)
	var se *safehttp.StatusError
	switch {
	case err == nil && as.TokenEndpoint == "":
		return as, fmt.Errorf("authorization server metadata of %s (2025-03-26 discovery) has no token_endpoint", origin)
	case err == nil:
		iss, perr := url.Parse(as.Issuer)
		if as.Issuer == "" || perr != nil || iss.Scheme+"://"+iss.Host != origin {
			return as, fmt.Errorf("authorization server metadata of %s (2025-03-26 discovery) names issuer %q, not one on that origin", origin, as.Issuer)
		}
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		as = asMetadata{Issuer: origin, TokenEndpoint: origin + "/token"}
	default:
		return as, fmt.Errorf("the server has no protected-resource metadata, and its authorization server metadata (2025-03-26 discovery): %v", err)
	}
	if bound := strings.TrimSpace(ci.Issuer); bound != "" && !sameIssuer(bound, as.Issuer) {
		return as, fmt.Errorf("the server's authorization server is now %q, but its client was registered with %q: connect it again", as.Issuer, bound)
	}
	return as, nil
}

// resourceCovers reports whether the protected-resource metadata's resource speaks for the server at srv:
// the same origin, and a path srv's path equals or lies under (segment by segment, a trailing slash aside).
func resourceCovers(resource string, srv *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || !strings.EqualFold(r.Scheme, srv.Scheme) || !strings.EqualFold(r.Host, srv.Host) {
		return false
	}
	rp, sp := strings.TrimRight(r.EscapedPath(), "/"), strings.TrimRight(srv.EscapedPath(), "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

// authMethod is how the client authenticates at the token endpoint: the method it registered, else the first
// the authorization server lists of client_secret_basic and client_secret_post, else client_secret_basic
// (RFC 8414 §2's default, which OAuth 2.1 requires every server to support for clients with a secret).
func authMethod(ci ClientInfo, supported []string) string {
	if ci.TokenEndpointAuthMethod != "" {
		return ci.TokenEndpointAuthMethod
	}
	if len(supported) == 0 || slices.Contains(supported, "client_secret_basic") {
		return "client_secret_basic"
	}
	if slices.Contains(supported, "client_secret_post") {
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// sameIssuer compares two issuer identifiers, a trailing slash aside (as the SDK's authutil.IssuersEqual).
func sameIssuer(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }

// prmCandidates lists where the protected-resource metadata may be: the challenge's URL when it is on the
// server's origin, then the RFC 9728 well-known URL for the server's path and query (§3: the well-known
// string goes between the host and the path and/or query, a terminating slash removed), then the origin's.
func prmCandidates(srv *url.URL, hint string) []string {
	origin := srv.Scheme + "://" + srv.Host
	var out []string
	if h, err := url.Parse(hint); err == nil && hint != "" && h.Scheme == srv.Scheme && h.Host == srv.Host {
		out = append(out, hint)
	}
	path := strings.TrimRight(srv.EscapedPath(), "/")
	if path != "" || srv.RawQuery != "" {
		u := origin + "/.well-known/oauth-protected-resource" + path
		if srv.RawQuery != "" {
			u += "?" + srv.RawQuery
		}
		out = appendNew(out, u)
	}
	return appendNew(out, origin+"/.well-known/oauth-protected-resource")
}

// asCandidates lists the metadata URLs of an issuer in the MCP spec's order: RFC 8414 (path insertion),
// OpenID Connect discovery with path insertion, then with path appending. An issuer without a path has
// the first two only.
func asCandidates(iss *url.URL) []string {
	origin := iss.Scheme + "://" + iss.Host
	path := strings.TrimRight(iss.EscapedPath(), "/")
	return appendNew(nil,
		origin+"/.well-known/oauth-authorization-server"+path,
		origin+"/.well-known/openid-configuration"+path,
		origin+path+"/.well-known/openid-configuration")
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		dup := false
		for _, l := range list {
			dup = dup || l == it
		}
		if !dup {
			list = append(list, it)
		}
	}
	return list
}

// getJSON GETs u and decodes a 200 JSON answer of at most MaxMetadataBytes into v.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	if err := safehttp.GetJSON(ctx, hc, u, MaxMetadataBytes, v); err != nil {
		return DescribeHTTPError(err)
	}
	return nil
}

// DescribeHTTPError shortens an HTTP client error for a message a user reads: the URL wrapper is dropped and
// an SSRF refusal says so.
func DescribeHTTPError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, safehttp.ErrBlocked) {
		return fmt.Errorf("destination refused by the SSRF policy: %v", err)
	}
	return err
}
