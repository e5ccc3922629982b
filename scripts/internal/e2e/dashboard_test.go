package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/webhookreceiver"
)

// dashboardFile is the Grafana dashboard shipped in docs/.
const dashboardFile = "../../../docs/grafana/mcp-events.json"

// emitted maps each counter seen in the functions' logs to the label keys its lines carried.
type emitted map[string]map[string]bool

// counterLines collects the counter lines (one JSON object per line with "metric" and "inc") of every
// execution log in the functions' output: the runtime reads each execution's log file and hands it over, as
// the executor does ("[<function>] <log id> log: <line>"), then deletes the file.
func counterLines(t *testing.T, output string) emitted {
	t.Helper()
	out := emitted{}
	for _, text := range strings.Split(output, "\n") {
		_, logLine, ok := strings.Cut(text, " log: ")
		if !ok {
			continue
		}
		var line map[string]any
		if json.Unmarshal([]byte(logLine), &line) != nil {
			continue
		}
		name, ok := line["metric"].(string)
		if !ok || line["inc"] != float64(1) {
			continue
		}
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for k := range line {
			if k != "metric" && k != "inc" {
				out[name][k] = true
			}
		}
	}
	return out
}

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			Type string `json:"type"`
		} `json:"datasource"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

var (
	metricRe = regexp.MustCompile(`\| metric="([^"]+)"`)
	byRe     = regexp.MustCompile(`\bby \(([^)]*)\)`)
	filterRe = regexp.MustCompile(`\| ([A-Za-z_][A-Za-z0-9_]*) ?(?:=|!=|=~|!~) ?"`)
	legendRe = regexp.MustCompile(`\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}`)
)

// TestDashboardQueriesNameEmittedCounters drives the stack so that mcp-events and webhook-ingress write
// each of their counters (subscribe, refusal, delivery, rejected webhook, abandoned delivery, tool call),
// then parses the shipped Grafana dashboard: every query must name a counter the functions really wrote,
// group and filter only by labels those lines really carry, and every counter must be charted.
func TestDashboardQueriesNameEmittedCounters(t *testing.T) {
	w := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if _, err := w.mcp.Subscribe(ctx, "tablesdb.row.created", w.args(), w.rcv.URL(), w.sec, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.mcp.Subscribe(ctx, "row.exploded", w.args(), w.rcv.URL(), w.sec, 0); err == nil {
		t.Fatal("an unknown event was subscribed")
	}
	w.row(w.st.Demo.TicketsTableID) // delivered
	w.settle()
	w.rcv.SetBehaviour(func(int, webhookreceiver.Delivery) (int, time.Duration) { return http.StatusGone, 0 })
	w.row(w.st.Demo.TicketsTableID) // abandoned: status_gone
	w.settle()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.st.URLs["webhook-ingress"]+"/appwrite/webhooks/mcpev_forged", strings.NewReader(`{}`))
	req.Header.Set("X-Appwrite-Webhook-Id", "mcpev_forged")
	req.Header.Set("X-Appwrite-Webhook-Signature", "AAAA")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged webhook: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	var tool struct {
		IsError bool `json:"isError"`
	}
	if err := w.mcp.Call(ctx, "tools/call", map[string]any{"name": "get_user", "arguments": map[string]any{"project_id": w.st.Demo.ProjectID, "user_id": "ghost"}}, &tool); err != nil || !tool.IsError {
		t.Fatalf("tools/call: %+v %v", tool, err)
	}

	w.st.Stop() // every function's output is in (Stop waits for it); Cleanup's Stop then finds nothing to do
	seen := counterLines(t, w.out.String())
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s is not JSON: %v", dashboardFile, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: not a dashboard", dashboardFile)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	charted := map[string]bool{}
	queries := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.Type != "loki" || len(p.Targets) == 0 {
			t.Errorf("panel %q: no Loki query", p.Title)
			continue
		}
		for _, tg := range p.Targets {
			queries++
			names := metricRe.FindAllStringSubmatch(tg.Expr, -1)
			if len(names) != 1 {
				t.Errorf("panel %q: the query names %d counters, want 1: %s", p.Title, len(names), tg.Expr)
				continue
			}
			metric := names[0][1]
			labels, ok := seen[metric]
			if !ok {
				t.Errorf("panel %q: counter %s was never written by the functions (they wrote %v)", p.Title, metric, keys(seen))
				continue
			}
			charted[metric] = true
			if !strings.Contains(tg.Expr, `|= "`+metric+`"`) || !strings.Contains(tg.Expr, "| json") || !strings.Contains(tg.Expr, "unwrap inc") {
				t.Errorf("panel %q: the query must filter the line, parse it as JSON and sum inc: %s", p.Title, tg.Expr)
			}
			for _, v := range regexp.MustCompile(`\$([a-z_]+)`).FindAllStringSubmatch(tg.Expr, -1) {
				if !strings.HasPrefix(v[1], "__") && !vars[v[1]] { // $__interval, $__range: Grafana's own
					t.Errorf("panel %q: the query uses $%s, which the dashboard does not define", p.Title, v[1])
				}
			}
			var used []string
			for _, m := range byRe.FindAllStringSubmatch(tg.Expr, -1) {
				for _, l := range strings.Split(m[1], ",") {
					used = append(used, strings.TrimSpace(l))
				}
			}
			for _, m := range filterRe.FindAllStringSubmatch(tg.Expr, -1) {
				if m[1] != "metric" {
					used = append(used, m[1])
				}
			}
			grouped := map[string]bool{}
			for _, l := range used {
				grouped[l] = true
				if !labels[l] {
					t.Errorf("panel %q: label %q is not on any %s line the functions wrote (labels %v)", p.Title, l, metric, keys(labels))
				}
			}
			for _, m := range legendRe.FindAllStringSubmatch(tg.LegendFormat, -1) {
				if !grouped[m[1]] {
					t.Errorf("panel %q: the legend shows {{%s}}, which the query does not group by", p.Title, m[1])
				}
			}
		}
	}
	for _, want := range []string{"mcp_events_subscriptions_total", "mcp_events_deliveries_total", "mcp_events_ingress_total", "mcp_events_tool_calls_total"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("the functions never wrote %s during the test", want)
		}
		if !charted[want] {
			t.Errorf("the dashboard has no panel for %s", want)
		}
	}
	if queries == 0 {
		t.Fatal("no queries")
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
