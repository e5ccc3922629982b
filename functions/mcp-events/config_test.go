package handler_test

import (
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/mcp-events"
	"appwrite-agent/functions/mcp-events/internal/eventstest"
	"appwrite-agent/functions/mcp-events/mcperr"
)

// TestURLBudgetIsConfigurable: MCP_EVENTS_SEAL_URL_BUDGET=0 keeps webhook URLs bare (and the maximum
// shrinks accordingly); a budget beyond what Appwrite's url column leaves refuses to start; a malformed one
// too.
func TestURLBudgetIsConfigurable(t *testing.T) {
	st := eventstest.NewStack(t)
	st.Env["MCP_EVENTS_SEAL_URL_BUDGET"] = "0"
	url := st.Instance(st.Server(handler.Options{}))
	tok := st.Token(eventstest.UserID, eventstest.AllScopes)
	secret := eventstest.NewSecret()
	st.Recv.Accept(secret)
	r := eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), eventstest.URLOf(st, 700), secret, nil))
	most := int(r.Error.Data["maxLength"].(float64))
	if r = eventstest.RPC(t, url, tok, "events/subscribe", eventstest.SubParams("tablesdb.row.created", eventstest.RowArgs(), eventstest.URLOf(st, most), secret, nil)); r.Error != nil {
		t.Fatalf("%s", r.Raw)
	}
	wh := st.Webhooks(eventstest.ProjectID)[0]
	if wh["url"] != st.Ingress.Srv.URL+"/appwrite/webhooks/"+wh["$id"].(string) {
		t.Fatalf("URL budget 0, yet the url carries sealed data: %v", wh["url"])
	}
	if most > 270 {
		t.Fatalf("without the URL the maximum is %d bytes", most)
	}
	for _, v := range []string{"200", "-1", "x"} {
		st.Env["MCP_EVENTS_SEAL_URL_BUDGET"] = v
		if _, err := eventstest.NewServer(st.Getenv, handler.Options{}); err == nil || !strings.Contains(err.Error(), "URL") && !strings.Contains(err.Error(), "MCP_EVENTS_SEAL_URL_BUDGET") {
			t.Errorf("budget %s: %v", v, err)
		}
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func base() map[string]string {
	return map[string]string{
		handler.EnvPublicURL: "https://mcp.test/", handler.EnvIssuer: "https://iss.test/v1/oauth2/console",
	}
}

func TestDefaults(t *testing.T) {
	c, err := handler.ReadConfig(env(base()))
	if err != nil {
		t.Fatal(err)
	}
	if c.Enabled || c.PublicURL != "https://mcp.test" || c.JWKSURL != "https://iss.test/v1/oauth2/console/jwks" {
		t.Fatalf("%+v", c)
	}
	if strings.Join(c.Audiences, " ") != "https://mcp.test https://mcp.test/ https://mcp.test/mcp" {
		t.Fatalf("audiences %v", c.Audiences)
	}
	if c.TTLDefault != time.Hour || c.TTLMin != 5*time.Minute || c.TTLMax != 24*time.Hour || c.Codes != mcperr.Sketch {
		t.Fatalf("%+v", c)
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{handler.EnvPublicURL: ""}, "MCP_EVENTS_PUBLIC_URL: required"},
		{map[string]string{handler.EnvEnabled: "yes please"}, "not a boolean"},
		{map[string]string{handler.EnvEnabled: "true"}, "MCP_EVENTS_APPWRITE_ENDPOINT: required"},
		{map[string]string{handler.EnvTTLMin: "2h"}, "min <= default <= max"},
		{map[string]string{handler.EnvTTLDefault: "soon"}, "not a positive Go duration"},
		{map[string]string{handler.EnvErrorCodes: "v3"}, "unknown error numbering"},
		{map[string]string{handler.EnvIssuer: "ftp://x"}, "not an http(s) URL"},
		{map[string]string{handler.EnvAllowedOrigins: "https://chat.example.com/app"}, `MCP_EVENTS_ALLOWED_ORIGINS: "https://chat.example.com/app" is not an origin`},
		{map[string]string{handler.EnvAllowedOrigins: "*"}, "is not an origin"},
		{map[string]string{handler.EnvIngressURL: "https://ingress.example.com/a%20b"}, "MCP_EVENTS_INGRESS_URL: \"https://ingress.example.com/a%20b\" holds a %"},
	} {
		m := base()
		for k, v := range c.set {
			m[k] = v
		}
		if _, err := handler.ReadConfig(env(m)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.set, err, c.want)
		}
	}
}
