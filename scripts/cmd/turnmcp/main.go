// Command turnmcp runs turn's own MCP connection code (functions/turn/mcptools: the official MCP Go SDK's
// client, turn's bearer handling, token refresh and tool calls) against one MCP server, the way the official
// MCP conformance suite runs a client command:
//
//	conformance client --command "turnmcp" --scenario <name>
//
// The suite appends the scenario's server URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO (pre-registered client credentials, when the scenario has them, come in
// MCP_CONFORMANCE_CONTEXT). scripts/internal/nodepeers's TestTurnClientConformance drives it.
//
// turn never authorizes: its caller (chat) hands it each connection's tokens and client registration. So the
// command hands turn what a caller would: an access token, and for the auth/* scenarios an access token that
// expired an hour ago together with a refresh token and the client registration, so that turn discovers the
// authorization server and refreshes as it does when a stored token has expired. It then loads the
// connection as a turn does (connect, refresh once on 401, list the tools) and calls every tool the server
// lists, with arguments built from each tool's input schema (the model's part in a turn).
//
// What happens is printed on stdout, one line per step; the exit status is 0 when the connection loaded and
// every call succeeded, 1 otherwise. The SSRF policy is turn's: SAFEHTTP_ALLOW and SAFEHTTP_ALLOW_HTTP must
// allow the suite's loopback servers, as they do in tests and scripts/dev.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"appwrite-agent/functions/turn/mcptools"
	"appwrite-agent/functions/turn/request"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/turnrequest"
)

// Budget bounds the whole run, as a turn's budget bounds its MCP exchanges (the suite gives a client 30 s
// per scenario; its servers are on this machine).
const Budget = 10 * time.Second

// Defaults for the auth/* scenarios: the client registration turn is handed when the scenario names none
// (the suite's authorization servers accept any client id at their token endpoint).
const (
	// expiredToken is the access token the command starts with in auth/* scenarios, with an expires_at an
	// hour in the past (the suite's servers accept only the tokens their authorization server issued).
	expiredToken = "expired-access-token"
	// refreshToken is what turn sends to the token endpoint.
	refreshToken = "conformance-refresh-token"
	// defaultClientID is the client_id of a registration made before (by chat's page, in the product).
	defaultClientID = "conformance-client"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: turnmcp <server URL> (MCP_CONFORMANCE_SCENARIO names the scenario)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	cfg := config{
		url:      os.Args[len(os.Args)-1],
		scenario: os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		context:  os.Getenv("MCP_CONFORMANCE_CONTEXT"),
	}
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stdout, "FAILED:", err)
		os.Exit(1)
	}
}

// config is what the suite hands the command.
type config struct {
	url, scenario, context string
}

// connection is the MCP connection a caller would hand turn for the scenario.
func connection(cfg config) (turnrequest.MCPConnection, error) {
	c := turnrequest.MCPConnection{ID: "conformance", Name: "Conformance server", URL: cfg.url}
	if !strings.HasPrefix(cfg.scenario, "auth/") {
		// The suite's other servers ask for no authorization; turn still needs a token to connect at all.
		c.Tokens = json.RawMessage(`{"access_token":"conformance-access-token","token_type":"Bearer"}`)
		return c, nil
	}
	ci := map[string]string{"client_id": defaultClientID}
	if cfg.context != "" {
		var ctx struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(cfg.context), &ctx); err != nil {
			return c, fmt.Errorf("MCP_CONFORMANCE_CONTEXT is not JSON: %v", err)
		}
		if ctx.ClientID != "" {
			// Pre-registered credentials, stored without a token_endpoint_auth_method, as a user would enter them.
			ci = map[string]string{"client_id": ctx.ClientID}
			if ctx.ClientSecret != "" {
				ci["client_secret"] = ctx.ClientSecret
			}
		}
	}
	tokens, _ := json.Marshal(map[string]any{"access_token": expiredToken, "token_type": "Bearer", "refresh_token": refreshToken,
		"expires_at": time.Now().Add(-time.Hour).Unix()})
	info, _ := json.Marshal(ci)
	c.Tokens, c.ClientInfo = tokens, info
	return c, nil
}

// run loads the connection as a turn does and calls each of its tools.
func run(ctx context.Context, cfg config, out io.Writer) error {
	conn, err := connection(cfg)
	if err != nil {
		return err
	}
	policy, err := safehttp.FromEnv(os.Getenv, safehttp.LazyCAFromEnv(os.Getenv, safehttp.Options{}))
	src := &mcptools.Source{
		HTTP:    policy,
		HTTPErr: err,
		Budget:  Budget,
		Log:     func(s string) { fmt.Fprintln(out, "log:", s) },
		Info:    func(s string) { fmt.Fprintln(out, "info:", s) },
	}
	loaded := src.Load(ctx, &request.Turn{Message: "conformance", MCPConnections: []turnrequest.MCPConnection{conn}}, map[string]bool{})
	if loaded.Close != nil {
		defer loaded.Close()
	}
	for _, c := range loaded.Credentials {
		fmt.Fprintf(out, "credentials: %s %s\n", c.ID, c.Tokens)
	}
	for _, n := range loaded.Notices {
		fmt.Fprintln(out, "notice:", n)
	}
	if len(loaded.Notices) > 0 {
		return errors.New("the connection was skipped")
	}
	var failed []string
	for _, t := range loaded.Tools {
		args := arguments(t.Parameters())
		text, err := t.Run(ctx, args)
		if err != nil {
			fmt.Fprintf(out, "call %s %s: error: %v\n", t.Name(), args, err)
			failed = append(failed, t.Name())
			continue
		}
		fmt.Fprintf(out, "call %s %s: %s\n", t.Name(), args, text)
	}
	if len(failed) > 0 {
		return fmt.Errorf("calls failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// arguments builds a call's arguments from a tool's input schema: each required property gets a value of
// its type (numbers count up from 2, so that a sum shows which was which).
func arguments(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	req := append([]string(nil), s.Required...)
	sort.Strings(req)
	args := map[string]any{}
	n := 2
	for _, name := range req {
		typ, _ := s.Properties[name].Type.(string)
		switch typ {
		case "number", "integer":
			args[name] = n
			n++
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "conformance"
		}
	}
	b, _ := json.Marshal(args)
	return b
}
