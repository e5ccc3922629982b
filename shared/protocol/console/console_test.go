package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"appwrite-agent/shared/devkit/consoleparse"
	"appwrite-agent/shared/devkit/snapshot"
	"appwrite-agent/shared/protocol/console"
	"appwrite-agent/shared/protocol/internal/prototest"
)

func points(n int) string {
	var b strings.Builder
	b.WriteString(`[{"type":"chart","title":"t","metrics":[{"metric":"m","points":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"time":"t","value":1}`)
	}
	b.WriteString(`]}]}]`)
	return b.String()
}

// TestChartPointLimit covers MaxChartPoints at and over the bound (kept out
// of the golden file for size).
func TestChartPointLimit(t *testing.T) {
	out := console.Result(points(console.MaxChartPoints))
	want := `{"protocol":"appwrite.console/v1","actions":[{"type":"chart","title":"t","metrics":[{"metric":"m","points":[` +
		strings.TrimSuffix(strings.Repeat(`{"time":"t","value":1.0},`, console.MaxChartPoints), ",") + `]}]}]}`
	if out != want {
		t.Errorf("5000 points: got %.200q", out)
	}
	if got, want := console.Result(points(console.MaxChartPoints+1)), "Error: invalid console actions — chart.metrics[0].points: at most 5000 points"; got != want {
		t.Errorf("5001 points: got %q, want %q", got, want)
	}
}

// TestGolden checks the tool result for every line of the golden files.
func TestGolden(t *testing.T) {
	prototest.Golden(t, func(in, _ string) string { return console.Result(in) })
}

// TestMessageCoverage checks that every error message of the reference
// (the reference engine's app/graph/console.py, docs/turn.md "Source") appears in the golden outputs, so each one is
// pinned word for word by a golden line.
func TestMessageCoverage(t *testing.T) {
	outs := prototest.Outputs(t, "testdata/golden.jsonl", "testdata/examples.jsonl")
	outs = append(outs, console.Result(points(5001)), console.Call(json.RawMessage(`{"actions":5}`)))
	messages := []string{
		// parse_actions_arg: top level
		"— actions is empty",
		// the parser's messages are ours (pyjson.Decode): one of each kind
		"— actions must be valid JSON: unexpected end of JSON input at byte 1",
		"— actions must be valid JSON: invalid character ']' looking for beginning of value at byte ",
		" looking for beginning of object key string at byte ",
		" after object key at byte ",
		" after object key:value pair at byte ",
		" after array element at byte ",
		"— actions must be valid JSON: unexpected text after the JSON value at byte ",
		" in string literal at byte ",
		" in string escape code at byte ",
		" in \\u hexadecimal character escape at byte ",
		"— actions must be valid JSON: invalid character 'ï' looking for beginning of value at byte 0",
		"— actions JSON must be an object or an array of objects",
		"— actions must be a JSON string, object, or array",
		"— actions array is empty",
		"— at most 20 console actions per call",
		"— each action must be a JSON object",
		"— unknown or missing type 'nope'; expected one of ['chart', 'navigate', 'open_create', 'open_dialog', 'refresh', 'resource', 'resource_list', 'scroll_to_card', 'set_theme', 'show_pane', 'toast', 'toggle_terminal']",
		"— unknown or missing type None; expected",
		"— unknown or missing type 5; expected",
		"— unknown or missing type True; expected",
		"— unknown or missing type ['a']; expected",
		"— unknown or missing type {'a': [1, None, True, \"it's\"]}; expected",
		// string helpers
		"— 'set_theme': theme must be a string",
		"— 'set_theme': theme is required",
		"— 'navigate': replace must be a boolean",
		"— 'resource_list': total must be an integer",
		"— 'resource_list': total must be >= 0",
		"— None: title is required",
		"— None: resourceId must be a string",
		"— 'z': title is required",
		"— ' resource ': resourceType must be a string",
		// per action
		"— set_theme.theme must be one of ['dark', 'light', 'system']",
		"— navigate.path must start with '/'",
		"— open_create.resource must be one of ['bucket', 'database', 'function', 'site', 'team', 'user']",
		"— open_dialog.dialog must be one of ['connect_mcp', 'create_project', 'docs_search', 'feedback', 'invite_member', 'shortcuts', 'support']",
		"— toast.level must be one of ['error', 'info', 'success', 'warning']",
		"— 'toast': message must be a string",
		"— show_pane.content must be one of ['agent', 'docs', 'none']",
		"— 'scroll_to_card': cardId is required",
		"— resource.mutation must be one of ['create', 'delete', 'update']",
		"— resource_list.items must be an array",
		"— resource_list.items: at most 50 items per list",
		"— resource_list: columns must not be empty when set",
		"— resource_list: at most 12 columns",
		"— resource_list: columns must be an array",
		"— resource_list: columns items must be objects",
		"— resource_list: columns[].key must be a non-empty string",
		"— resource_list: columns[].label must be a non-empty string",
		"— chart.metrics must be a non-empty array",
		"— chart.metrics: at most 10 series",
		"— chart.metrics[0] must be an object",
		"— chart.metrics[0].metric must be a non-empty string",
		"— chart.metrics[0].points must be an array",
		"— chart.metrics[0].points: at most 5000 points",
		"— chart.metrics[0].points[0] must be an object",
		"— chart.metrics[0].points[0].time must be a non-empty string",
		"— chart.metrics[0].points[0].value must be a number",
		"— chart.metrics[0].points[0].label must be a string",
		"— 'chart': title must be a string",
		"— 'chart': chartType must be a string",
		"— chart.chartType must be one of ['area', 'bar']",
		"— chart.kind must be one of ['events', 'gauges']",
		"— chart.axisFormat must be one of ['bytes', 'count', 'gbhours']",
		"— chart.changePercent must be a number",
		"— refresh.scopes must be a non-empty array of strings",
		"— refresh.scopes entries must be non-empty strings",
		// resource items
		"— resource_list.items[0]: item must be an object",
		"— resource: metadata must be an array",
		"— resource: at most 20 metadata entries",
		"— resource: metadata items must be objects",
		"— resource: metadata[].label must be a non-empty string",
		"— resource: metadata[].value is required",
		"— resource: fields must be an object",
		"— resource: at most 40 field entries",
		"— resource: fields keys must be non-empty strings",
		"— resource: fields.k  must be string, number, boolean, or null",
	}
	prototest.Covers(t, outs, messages...)
}

// TestKeyOrder pins the output key order of every action type, with every
// optional key given (in reverse order) and extra keys dropped.
func TestKeyOrder(t *testing.T) {
	in := `[
	{"extra":1,"replace":false,"hash":"#h","path":"/p","type":"navigate"},
	{"projectId":"p","resource":"SITE","type":"open_create"},
	{"description":"d","message":"m","level":"INFO","type":"toast"},
	{"fields":{"b":true,"a":null},"metadata":[{"value":2,"label":"l","x":1}],"status":"s","href":"/h","subtitle":"sub","title":"T","resourceId":"r","resourceType":"Table","mutation":"Update","type":"resource"},
	{"columns":[{"label":"L","key":"k"}],"projectId":"p","total":7,"emptyMessage":"e","listHref":"/l","description":"d","title":"t","items":[{"resourceType":"dropped","title":"T","resourceId":"r"}],"resourceType":"Row","type":"resource_list"},
	{"changePercent":-3,"axisFormat":"bytes","kind":"gauges","chartType":"bar","projectId":"p","href":"/h","endAt":"e","startAt":"s","interval":"1d","unitLabel":"u","description":"d","metrics":[{"points":[{"label":"x","value":2.5,"time":"t"}],"metric":"storage"}],"title":"T","type":"chart"}
	]`
	want := `{"protocol":"appwrite.console/v1","actions":[` +
		`{"type":"navigate","path":"/p","hash":"h","replace":false},` +
		`{"type":"open_create","resource":"site","projectId":"p"},` +
		`{"type":"toast","level":"info","message":"m","description":"d"},` +
		`{"type":"resource","mutation":"update","resourceType":"table","resourceId":"r","title":"T","subtitle":"sub","href":"/h","status":"s","metadata":[{"label":"l","value":"2"}],"fields":{"b":true,"a":null}},` +
		`{"type":"resource_list","resourceType":"row","items":[{"resourceId":"r","title":"T"}],"title":"t","description":"d","listHref":"/l","emptyMessage":"e","total":7,"projectId":"p","columns":[{"key":"k","label":"L"}]},` +
		`{"type":"chart","title":"T","metrics":[{"metric":"storage","points":[{"time":"t","value":2.5,"label":"x"}]}],"description":"d","unitLabel":"u","interval":"1d","startAt":"s","endAt":"e","href":"/h","projectId":"p","chartType":"bar","kind":"gauges","axisFormat":"bytes","changePercent":-3.0}]}`
	if got := console.Result(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestNormalize checks that typed actions go through the same rules.
func TestNormalize(t *testing.T) {
	hash := "##card-x"
	total := int64(3)
	env, err := console.Normalize(
		console.SetTheme{Theme: "DARK"},
		console.Navigate{Path: "/p", Hash: &hash},
		console.ScrollToCard{CardID: "card-api"},
		console.Resource{Mutation: console.MutationCreate, ResourceType: "Database", ResourceItem: console.ResourceItem{
			ResourceID: " main ", Title: "Main",
			Fields: console.Fields{{Key: "n", Value: console.IntField(1)}, {Key: "f", Value: console.FloatField(1)}, {Key: "s", Value: console.StringField(" x ")}},
		}},
		console.ResourceList{ResourceType: "user", Items: []console.ResourceItem{{ResourceID: "u", Title: "U"}}},
		console.ResourceList{ResourceType: "user", Total: &total},
		console.Chart{Title: "c", Metrics: []console.ChartMetric{{Metric: "network.requests", Points: []console.ChartPoint{{Time: "t", Value: 49}}}}},
		console.Refresh{Scopes: []string{" Databases "}},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":"appwrite.console/v1","actions":[{"type":"set_theme","theme":"dark"},{"type":"navigate","path":"/p","hash":"card-x"},{"type":"scroll_to_card","cardId":"api"},` +
		`{"type":"resource","mutation":"create","resourceType":"database","resourceId":"main","title":"Main","fields":{"n":1,"f":1.0,"s":" x "}},` +
		`{"type":"resource_list","resourceType":"user","items":[{"resourceId":"u","title":"U"}],"total":1},{"type":"resource_list","resourceType":"user","items":[],"total":3},` +
		`{"type":"chart","title":"c","metrics":[{"metric":"network.requests","points":[{"time":"t","value":49.0}]}]},{"type":"refresh","scopes":["databases"]}]}`
	if got := env.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := console.Normalize(console.Toast{Level: "loud", Message: "m"}); err == nil || err.Error() != "toast.level must be one of ['error', 'info', 'success', 'warning']" {
		t.Errorf("bad level: %v", err)
	}
	if _, err := console.Normalize(); err == nil || err.Error() != "actions array is empty" {
		t.Errorf("no actions: %v", err)
	}
}

// TestCall covers the forms the model's arguments can take.
func TestCall(t *testing.T) {
	const dark = `{"protocol":"appwrite.console/v1","actions":[{"type":"set_theme","theme":"dark"}]}`
	for _, c := range []struct{ args, want string }{
		{`{"actions":"[{\"type\":\"set_theme\",\"theme\":\"dark\"}]"}`, dark},
		{`{"actions":"{\"type\":\"set_theme\",\"theme\":\"dark\"}"}`, dark},
		{`{"actions":[{"type":"set_theme","theme":"dark"}]}`, dark},
		{`{"actions":{"type":"set_theme","theme":"dark"}}`, dark},
		{`{"actions":[]}`, console.ErrorPrefix + "actions array is empty"},
		{`{"actions":""}`, console.ErrorPrefix + "actions is empty"},
		{`{"actions":5}`, console.ErrorPrefix + "actions must be a JSON string, object, or array"},
		{`{}`, console.ErrorPrefix + "actions must be a JSON string, object, or array"},
		{`not json`, console.ErrorPrefix + "actions must be a JSON string, object, or array"},
	} {
		if got := console.Call(json.RawMessage(c.args)); got != c.want {
			t.Errorf("Call(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestToolSchemaSnapshot pins what turn gives the model for this tool.
// UPDATE_SNAPSHOTS=1 rewrites it after a deliberate change.
func TestToolSchemaSnapshot(t *testing.T) {
	snapshot.CheckTool(t, "testdata/tool_schema.json", snapshot.Tool{Name: console.ToolName, Description: console.ToolDescription, Parameters: console.ToolSchema()})
}

// FuzzResult checks that the validator never panics, that every error
// carries the prefix, and that every envelope is read back by the
// consumer-side parser with nothing skipped and re-encodes to the same bytes.
func FuzzResult(f *testing.F) {
	prototest.Fuzz{Prefix: console.ErrorPrefix, Result: func(in, _ string) string { return console.Result(in) }, Title: false, ReadBack: readBackConsole}.Run(f)
}

// readBackConsole reads an output as the Console does: nothing skipped, 1 to MaxActions actions.
func readBackConsole(out string) (string, bool) {
	env := consoleparse.ParseConsoleEnvelope(out)
	if env == nil || len(env.Skipped) > 0 || len(env.Actions) < 1 || len(env.Actions) > console.MaxActions {
		return "", false
	}
	return env.Envelope.String(), true
}
