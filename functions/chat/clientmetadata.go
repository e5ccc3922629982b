package handler

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

// ClientMetadataPath is where chat serves its OAuth client metadata document, relative to its root. The page
// names the document's URL as its client_id to an MCP server's authorization server that supports Client ID
// Metadata Documents (client_id_metadata_document_supported; the MCP authorization spec 2025-11-25,
// draft-ietf-oauth-client-id-metadata-document), instead of registering a client per connection.
const ClientMetadataPath = "/client-metadata.json"

// clientMetadata answers the document for the URL it was asked at, which is its client_id: the page's
// origin and root as the request reached the function (the runtime's URL: the scheme from
// X-Forwarded-Proto, the Host), so one deployment serves a document for each of its domains. The
// authorization server sends codes only to the redirect URI it lists, the page's callback; the page is a
// public client (no secret, PKCE).
func clientMetadata(rt openruntimes.Context) openruntimes.Response {
	id := rt.Req.Url
	if i := strings.IndexAny(id, "?#"); i >= 0 {
		id = id[:i]
	}
	root := strings.TrimSuffix(id, ClientMetadataPath) + "/"
	doc, _ := json.Marshal(map[string]any{
		"client_id":                  id,
		"client_name":                "Appwrite agent chat",
		"client_uri":                 root,
		"redirect_uris":              []string{root + "oauth/mcp/callback"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"application_type":           "web",
	})
	if rt.Req.Method == http.MethodHead {
		doc = nil
	}
	return openruntimes.Response{Body: doc, StatusCode: http.StatusOK, Headers: map[string]string{
		"content-type": "application/json", "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff",
	}}
}
