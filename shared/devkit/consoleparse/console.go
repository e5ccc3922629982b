package consoleparse

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"appwrite-agent/shared/protocol/console"
)

// ConsoleEnvelope is a parsed appwrite.console/v1 tool result.
type ConsoleEnvelope struct {
	// Envelope holds the actions to apply, in order.
	console.Envelope
	// Skipped lists the actions left out (unknown type or malformed).
	Skipped []Skipped
}

// ParseConsoleEnvelope is the Console's parseConsoleEnvelope plus typed
// decoding: it returns nil for an "Error:" output, for JSON that does not
// parse, for another protocol, and when actions is not an array. Unknown
// action types, and known ones whose fields do not match the protocol, are
// skipped and listed in Skipped.
func ParseConsoleEnvelope(output string) *ConsoleEnvelope {
	_, actions, skipped, ok := parseEntries(output, console.Protocol, "actions", parseAction)
	if !ok {
		return nil
	}
	return &ConsoleEnvelope{Envelope: console.Envelope{Protocol: console.Protocol, Actions: actions}, Skipped: skipped}
}

func parseAction(raw json.RawMessage) (console.Action, string, string) {
	o, ok := decodeObject(raw)
	if !ok {
		return nil, "", "not an object"
	}
	typ, _ := o.str("type")
	bad := func(field string) (console.Action, string, string) {
		return nil, typ, "invalid " + field
	}
	switch typ {
	case "set_theme":
		t, ok := o.reqStr("theme")
		if !ok || !oneOf(t, "light", "dark", "system") {
			return bad("theme")
		}
		return console.SetTheme{Theme: console.Theme(t)}, typ, ""
	case "navigate":
		p, ok := o.reqStr("path")
		if !ok || !strings.HasPrefix(p, "/") {
			return bad("path")
		}
		a := console.Navigate{Path: p}
		if o.has("hash") {
			h, ok := o.str("hash")
			if !ok {
				return bad("hash")
			}
			a.Hash = &h
		}
		if a.Replace, ok = o.optBool("replace"); !ok {
			return bad("replace")
		}
		return a, typ, ""
	case "open_create":
		r, ok := o.reqStr("resource")
		if !ok || !oneOf(r, "database", "bucket", "user", "team", "function", "site") {
			return bad("resource")
		}
		pid, ok := o.str("projectId")
		if !ok {
			return bad("projectId")
		}
		return console.OpenCreate{Resource: console.CreateResource(r), ProjectID: pid}, typ, ""
	case "open_dialog":
		d, ok := o.reqStr("dialog")
		if !ok || !oneOf(d, "invite_member", "create_project", "connect_mcp", "shortcuts", "docs_search", "feedback", "support") {
			return bad("dialog")
		}
		pid, ok := o.str("projectId")
		if !ok {
			return bad("projectId")
		}
		return console.OpenDialog{Dialog: console.Dialog(d), ProjectID: pid}, typ, ""
	case "toast":
		l, ok := o.reqStr("level")
		if !ok || !oneOf(l, "success", "error", "info", "warning") {
			return bad("level")
		}
		m, ok := o.reqStr("message")
		if !ok {
			return bad("message")
		}
		d, ok := o.str("description")
		if !ok {
			return bad("description")
		}
		return console.Toast{Level: console.ToastLevel(l), Message: m, Description: d}, typ, ""
	case "show_pane":
		c, ok := o.reqStr("content")
		if !ok || !oneOf(c, "agent", "docs", "none") {
			return bad("content")
		}
		return console.ShowPane{Content: console.PaneContent(c)}, typ, ""
	case "toggle_terminal":
		return console.ToggleTerminal{}, typ, ""
	case "scroll_to_card":
		c, ok := o.reqStr("cardId")
		if !ok {
			return bad("cardId")
		}
		return console.ScrollToCard{CardID: c}, typ, ""
	case "resource":
		m, ok := o.reqStr("mutation")
		if !ok || !oneOf(m, "create", "update", "delete") {
			return bad("mutation")
		}
		rt, ok := o.reqStr("resourceType")
		if !ok {
			return bad("resourceType")
		}
		it, field := parseItem(o)
		if field != "" {
			return bad(field)
		}
		return console.Resource{Mutation: console.Mutation(m), ResourceType: rt, ResourceItem: it}, typ, ""
	case "resource_list":
		return parseResourceList(o)
	case "chart":
		return parseChart(o)
	case "refresh":
		l, ok := o.list("scopes")
		if !ok || len(l) == 0 {
			return bad("scopes")
		}
		a := console.Refresh{Scopes: make([]string, 0, len(l))}
		for _, r := range l {
			var s string
			if json.Unmarshal(r, &s) != nil || s == "" {
				return bad("scopes")
			}
			a.Scopes = append(a.Scopes, s)
		}
		return a, typ, ""
	}
	return nil, typ, "unknown type"
}

func parseItem(o object) (console.ResourceItem, string) {
	var it console.ResourceItem
	var ok bool
	if it.ResourceID, ok = o.reqStr("resourceId"); !ok {
		return it, "resourceId"
	}
	if it.Title, ok = o.reqStr("title"); !ok {
		return it, "title"
	}
	for _, f := range []struct {
		k string
		p *string
	}{{"subtitle", &it.Subtitle}, {"href", &it.Href}, {"status", &it.Status}} {
		if *f.p, ok = o.str(f.k); !ok {
			return it, f.k
		}
	}
	if o.has("metadata") {
		l, ok := o.list("metadata")
		if !ok {
			return it, "metadata"
		}
		it.Metadata = make([]console.MetadataEntry, 0, len(l))
		for _, r := range l {
			m, ok := decodeObject(r)
			if !ok {
				return it, "metadata"
			}
			label, ok1 := m.reqStr("label")
			value, ok2 := m.str("value")
			if !ok1 || !ok2 || !m.has("value") {
				return it, "metadata"
			}
			it.Metadata = append(it.Metadata, console.MetadataEntry{Label: label, Value: value})
		}
	}
	if o.has("fields") {
		f, ok := parseFields(o["fields"])
		if !ok {
			return it, "fields"
		}
		it.Fields = f
	}
	return it, ""
}

// parseFields decodes a fields object in member order.
func parseFields(raw json.RawMessage) (console.Fields, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	out := console.Fields{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		t, err = d.Token()
		if err != nil {
			return nil, false
		}
		var v console.FieldValue
		switch x := t.(type) {
		case nil:
			v = console.NullField()
		case bool:
			v = console.BoolField(x)
		case string:
			v = console.StringField(x)
		case json.Number:
			lit := string(x)
			if strings.ContainsAny(lit, ".eE") {
				f, err := strconv.ParseFloat(lit, 64)
				if err != nil {
					return nil, false
				}
				v = console.FloatField(f)
			} else {
				iv, ok := console.IntLiteralField(lit)
				if !ok {
					return nil, false
				}
				v = iv
			}
		default:
			return nil, false // an array or object value
		}
		replaced := false
		for i := range out {
			if out[i].Key == key {
				out[i].Value, replaced = v, true
			}
		}
		if !replaced {
			out = append(out, console.Field{Key: key, Value: v})
		}
	}
	return out, true
}

func parseResourceList(o object) (console.Action, string, string) {
	const typ = "resource_list"
	bad := func(f string) (console.Action, string, string) { return nil, typ, "invalid " + f }
	var a console.ResourceList
	var ok bool
	if a.ResourceType, ok = o.reqStr("resourceType"); !ok {
		return bad("resourceType")
	}
	l, ok := o.list("items")
	if !ok {
		return bad("items")
	}
	a.Items = make([]console.ResourceItem, 0, len(l))
	for _, r := range l {
		io, ok := decodeObject(r)
		if !ok {
			return bad("items")
		}
		it, f := parseItem(io)
		if f != "" {
			return bad("items[]." + f)
		}
		a.Items = append(a.Items, it)
	}
	for _, f := range []struct {
		k string
		p *string
	}{{"title", &a.Title}, {"description", &a.Description}, {"listHref", &a.ListHref}, {"emptyMessage", &a.EmptyMessage}, {"projectId", &a.ProjectID}} {
		if *f.p, ok = o.str(f.k); !ok {
			return bad(f.k)
		}
	}
	if o.has("total") {
		n, ok := o.num("total")
		if !ok {
			return bad("total")
		}
		t, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || t < 0 {
			return bad("total")
		}
		a.Total = &t
	}
	if o.has("columns") {
		l, ok := o.list("columns")
		if !ok {
			return bad("columns")
		}
		a.Columns = make([]console.Column, 0, len(l))
		for _, r := range l {
			c, ok := decodeObject(r)
			if !ok {
				return bad("columns")
			}
			k, ok1 := c.reqStr("key")
			lb, ok2 := c.reqStr("label")
			if !ok1 || !ok2 {
				return bad("columns")
			}
			a.Columns = append(a.Columns, console.Column{Key: k, Label: lb})
		}
	}
	return a, typ, ""
}

func parseChart(o object) (console.Action, string, string) {
	const typ = "chart"
	bad := func(f string) (console.Action, string, string) { return nil, typ, "invalid " + f }
	var a console.Chart
	var ok bool
	if a.Title, ok = o.reqStr("title"); !ok {
		return bad("title")
	}
	l, ok := o.list("metrics")
	if !ok || len(l) == 0 {
		return bad("metrics")
	}
	for _, r := range l {
		m, ok := decodeObject(r)
		if !ok {
			return bad("metrics")
		}
		name, ok := m.reqStr("metric")
		if !ok {
			return bad("metrics[].metric")
		}
		pl, ok := m.list("points")
		if !ok {
			return bad("metrics[].points")
		}
		cm := console.ChartMetric{Metric: name, Points: make([]console.ChartPoint, 0, len(pl))}
		for _, pr := range pl {
			p, ok := decodeObject(pr)
			if !ok {
				return bad("metrics[].points")
			}
			tm, ok := p.reqStr("time")
			if !ok {
				return bad("metrics[].points[].time")
			}
			n, ok := p.num("value")
			if !ok {
				return bad("metrics[].points[].value")
			}
			f, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return bad("metrics[].points[].value")
			}
			label, ok := p.str("label")
			if !ok {
				return bad("metrics[].points[].label")
			}
			cm.Points = append(cm.Points, console.ChartPoint{Time: tm, Value: f, Label: label})
		}
		a.Metrics = append(a.Metrics, cm)
	}
	for _, f := range []struct {
		k string
		p *string
	}{{"description", &a.Description}, {"unitLabel", &a.UnitLabel}, {"interval", &a.Interval}, {"startAt", &a.StartAt},
		{"endAt", &a.EndAt}, {"href", &a.Href}, {"projectId", &a.ProjectID}} {
		if *f.p, ok = o.str(f.k); !ok {
			return bad(f.k)
		}
	}
	s, ok := o.str("chartType")
	if !ok || !oneOf(s, "", "area", "bar") {
		return bad("chartType")
	}
	a.ChartType = console.ChartType(s)
	if s, ok = o.str("kind"); !ok || !oneOf(s, "", "events", "gauges") {
		return bad("kind")
	}
	a.Kind = console.ChartKind(s)
	if s, ok = o.str("axisFormat"); !ok || !oneOf(s, "", "count", "bytes", "gbhours") {
		return bad("axisFormat")
	}
	a.AxisFormat = console.AxisFormat(s)
	if o.has("changePercent") {
		n, ok := o.num("changePercent")
		if !ok {
			return bad("changePercent")
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return bad("changePercent")
		}
		a.ChangePercent = &f
	}
	return a, typ, ""
}
