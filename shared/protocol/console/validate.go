package console

import (
	"math"
	"strconv"
	"strings"

	"appwrite-agent/shared/protocol/internal/toolarg"
	"appwrite-agent/shared/pyjson"
)

// ValidationError is a rejected tool argument; Error returns the message that follows ErrorPrefix, word for word
// as the Python engine words it. It is the same type in every protocol package.
type ValidationError = toolarg.Error

func fail(msg string) error { return toolarg.Fail(msg) }

// actionList is the tool's argument: 1 to MaxActions actions.
var actionList = toolarg.List[Action]{Name: "actions", Noun: "console actions", Max: MaxActions, Item: validateAction}

// Validate checks the tool argument (a JSON string holding one action object
// or an array of them) and returns the normalized envelope, or a
// *ValidationError carrying the engine's exact message.
func Validate(actions string) (Envelope, error) {
	list, err := actionList.Parse(actions)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Protocol: Protocol, Actions: list}, nil
}

// Result returns what the console tool returns: the canonical envelope
// (compact JSON, keys in wire order, UTF-8 not escaped), or ErrorPrefix
// followed by the validation message.
func Result(actions string) string {
	env, err := Validate(actions)
	return toolarg.Result(ErrorPrefix, env, err)
}

// Normalize validates typed actions exactly as if the model had sent them as
// JSON, and returns the normalized envelope (lower-cased enums, stripped
// strings, defaults) or a *ValidationError.
func Normalize(actions ...Action) (Envelope, error) {
	return Validate(string(pyjson.AppendArray(nil, actions)))
}

const typeList = "['chart', 'navigate', 'open_create', 'open_dialog', 'refresh', 'resource', 'resource_list', 'scroll_to_card', 'set_theme', 'show_pane', 'toast', 'toggle_terminal']"

// prefix is repr(action.get('type')).
func prefix(raw *pyjson.Value) string {
	return raw.Lookup("type").Repr()
}

func requireStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.RequiredString(raw, key, prefix)
}

// optionalStr returns "" for absent (None, or empty after strip).
func optionalStr(raw *pyjson.Value, key string) (string, error) {
	return toolarg.OptionalString(raw, key, prefix)
}

func optionalBool(raw *pyjson.Value, key string) (*bool, error) {
	return toolarg.OptionalBool(raw, key, prefix)
}

func optionalNonNegInt(raw *pyjson.Value, key string) (*int64, error) {
	v := raw.Lookup(key)
	if v.Kind() == pyjson.Null {
		return nil, nil
	}
	if v.Kind() != pyjson.Int {
		return nil, fail(prefix(raw) + ": " + key + " must be an integer")
	}
	if strings.HasPrefix(v.Text(), "-") {
		return nil, fail(prefix(raw) + ": " + key + " must be >= 0")
	}
	n, err := strconv.ParseInt(v.Text(), 10, 64)
	if err != nil {
		// Python has no upper bound; totals beyond int64 are refused here.
		return nil, fail(prefix(raw) + ": " + key + " must be an integer")
	}
	return &n, nil
}

func oneOf[T ~string](raw *pyjson.Value, key string, allowed []T, msg string) (T, error) {
	s, err := requireStr(raw, key)
	if err != nil {
		return "", err
	}
	s = strings.ToLower(s)
	for _, a := range allowed {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fail(msg)
}

func optionalOneOf[T ~string](raw *pyjson.Value, key string, allowed []T, msg string) (T, error) {
	s, err := optionalStr(raw, key)
	if err != nil || s == "" {
		return "", err
	}
	s = strings.ToLower(s)
	for _, a := range allowed {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fail(msg)
}

var (
	themes          = []Theme{ThemeLight, ThemeDark, ThemeSystem}
	createResources = []CreateResource{CreateDatabase, CreateBucket, CreateUser, CreateTeam, CreateFunction, CreateSite}
	dialogs         = []Dialog{DialogInviteMember, DialogCreateProject, DialogConnectMCP, DialogShortcuts, DialogDocsSearch, DialogFeedback, DialogSupport}
	levels          = []ToastLevel{LevelSuccess, LevelError, LevelInfo, LevelWarning}
	panes           = []PaneContent{PaneAgent, PaneDocs, PaneNone}
	mutations       = []Mutation{MutationCreate, MutationUpdate, MutationDelete}
	chartTypes      = []ChartType{ChartArea, ChartBar}
	chartKinds      = []ChartKind{KindEvents, KindGauges}
	axisFormats     = []AxisFormat{AxisCount, AxisBytes, AxisGBHours}
)

func validateAction(raw *pyjson.Value) (Action, error) {
	if raw.Kind() != pyjson.Object {
		return nil, fail("each action must be a JSON object")
	}
	tv := raw.Lookup("type")
	t := ""
	if tv.Kind() == pyjson.String {
		t = strings.TrimSpace(tv.Text())
	}
	switch t {
	case "set_theme":
		theme, err := oneOf(raw, "theme", themes, "set_theme.theme must be one of ['dark', 'light', 'system']")
		if err != nil {
			return nil, err
		}
		return SetTheme{Theme: theme}, nil

	case "navigate":
		path, err := requireStr(raw, "path")
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(path, "/") {
			return nil, fail("navigate.path must start with '/'")
		}
		out := Navigate{Path: path}
		h, err := optionalStr(raw, "hash")
		if err != nil {
			return nil, err
		}
		if h != "" {
			h = strings.TrimLeft(h, "#")
			out.Hash = &h
		}
		if out.Replace, err = optionalBool(raw, "replace"); err != nil {
			return nil, err
		}
		return out, nil

	case "open_create":
		res, err := oneOf(raw, "resource", createResources, "open_create.resource must be one of ['bucket', 'database', 'function', 'site', 'team', 'user']")
		if err != nil {
			return nil, err
		}
		out := OpenCreate{Resource: res}
		if out.ProjectID, err = optionalStr(raw, "projectId"); err != nil {
			return nil, err
		}
		return out, nil

	case "open_dialog":
		d, err := oneOf(raw, "dialog", dialogs, "open_dialog.dialog must be one of ['connect_mcp', 'create_project', 'docs_search', 'feedback', 'invite_member', 'shortcuts', 'support']")
		if err != nil {
			return nil, err
		}
		out := OpenDialog{Dialog: d}
		if out.ProjectID, err = optionalStr(raw, "projectId"); err != nil {
			return nil, err
		}
		return out, nil

	case "toast":
		level, err := oneOf(raw, "level", levels, "toast.level must be one of ['error', 'info', 'success', 'warning']")
		if err != nil {
			return nil, err
		}
		out := Toast{Level: level}
		if out.Message, err = requireStr(raw, "message"); err != nil {
			return nil, err
		}
		if out.Description, err = optionalStr(raw, "description"); err != nil {
			return nil, err
		}
		return out, nil

	case "show_pane":
		c, err := oneOf(raw, "content", panes, "show_pane.content must be one of ['agent', 'docs', 'none']")
		if err != nil {
			return nil, err
		}
		return ShowPane{Content: c}, nil

	case "toggle_terminal":
		return ToggleTerminal{}, nil

	case "scroll_to_card":
		id, err := requireStr(raw, "cardId")
		if err != nil {
			return nil, err
		}
		return ScrollToCard{CardID: strings.TrimPrefix(id, "card-")}, nil

	case "resource":
		m, err := oneOf(raw, "mutation", mutations, "resource.mutation must be one of ['create', 'delete', 'update']")
		if err != nil {
			return nil, err
		}
		item, err := validateItem(raw, func() string { return "resource" })
		if err != nil {
			return nil, err
		}
		rt, err := requireStr(raw, "resourceType")
		if err != nil {
			return nil, err
		}
		return Resource{Mutation: m, ResourceType: strings.ToLower(rt), ResourceItem: item}, nil

	case "resource_list":
		return validateResourceList(raw)

	case "chart":
		return validateChart(raw)

	case "refresh":
		sv := raw.Lookup("scopes")
		if sv.Kind() != pyjson.Array || sv.Len() == 0 {
			return nil, fail("refresh.scopes must be a non-empty array of strings")
		}
		scopes := make([]string, 0, sv.Len())
		for _, s := range sv.Elems() {
			if s.Kind() != pyjson.String {
				return nil, fail("refresh.scopes entries must be non-empty strings")
			}
			t := strings.TrimSpace(s.Text())
			if t == "" {
				return nil, fail("refresh.scopes entries must be non-empty strings")
			}
			scopes = append(scopes, strings.ToLower(t))
		}
		return Refresh{Scopes: scopes}, nil
	}
	return nil, fail("unknown or missing type " + tv.Repr() + "; expected one of " + typeList)
}

func validateResourceList(raw *pyjson.Value) (Action, error) {
	iv := raw.Lookup("items")
	if iv.Kind() != pyjson.Array {
		return nil, fail("resource_list.items must be an array")
	}
	items := iv.Elems()
	if len(items) > MaxListItems {
		return nil, fail("resource_list.items: at most 50 items per list")
	}
	out := ResourceList{Items: make([]ResourceItem, 0, len(items))}
	for i := range items {
		idx := i
		item, err := validateItem(&items[i], func() string { return "resource_list.items[" + strconv.Itoa(idx) + "]" })
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, item)
	}
	rt, err := requireStr(raw, "resourceType")
	if err != nil {
		return nil, err
	}
	out.ResourceType = strings.ToLower(rt)
	for _, f := range []struct {
		key string
		dst *string
	}{{"title", &out.Title}, {"description", &out.Description}, {"listHref", &out.ListHref}, {"emptyMessage", &out.EmptyMessage}} {
		if *f.dst, err = optionalStr(raw, f.key); err != nil {
			return nil, err
		}
	}
	if out.Total, err = optionalNonNegInt(raw, "total"); err != nil {
		return nil, err
	}
	if out.Total == nil && len(out.Items) > 0 {
		n := int64(len(out.Items))
		out.Total = &n
	}
	if out.ProjectID, err = optionalStr(raw, "projectId"); err != nil {
		return nil, err
	}
	if out.Columns, err = validateColumns(raw.Lookup("columns")); err != nil {
		return nil, err
	}
	return out, nil
}

func validateColumns(v pyjson.Value) ([]Column, error) {
	const ctx = "resource_list"
	switch {
	case v.Kind() == pyjson.Null:
		return nil, nil
	case v.Kind() != pyjson.Array:
		return nil, fail(ctx + ": columns must be an array")
	case v.Len() == 0:
		return nil, fail(ctx + ": columns must not be empty when set")
	case v.Len() > MaxColumns:
		return nil, fail(ctx + ": at most 12 columns")
	}
	elems := v.Elems()
	cols := make([]Column, 0, len(elems))
	for i := range elems {
		c := &elems[i]
		if c.Kind() != pyjson.Object {
			return nil, fail(ctx + ": columns items must be objects")
		}
		k, l := c.Lookup("key"), c.Lookup("label")
		if k.Kind() != pyjson.String || strings.TrimSpace(k.Text()) == "" {
			return nil, fail(ctx + ": columns[].key must be a non-empty string")
		}
		if l.Kind() != pyjson.String || strings.TrimSpace(l.Text()) == "" {
			return nil, fail(ctx + ": columns[].label must be a non-empty string")
		}
		cols = append(cols, Column{Key: strings.TrimSpace(k.Text()), Label: strings.TrimSpace(l.Text())})
	}
	return cols, nil
}

// validateItem mirrors _validate_resource_item; ctx is computed only on
// error.
func validateItem(raw *pyjson.Value, ctx func() string) (ResourceItem, error) {
	if raw.Kind() != pyjson.Object {
		return ResourceItem{}, fail(ctx() + ": item must be an object")
	}
	// One pass over the members instead of one lookup per key (the
	// decoded keys are distinct); the checks run in the engine's order.
	var id, title, subtitle, href, status, metadata, fields pyjson.Value
	members := raw.Members()
	for i := range members {
		m := &members[i]
		switch m.Key {
		case "resourceId":
			id = m.Value
		case "title":
			title = m.Value
		case "subtitle":
			subtitle = m.Value
		case "href":
			href = m.Value
		case "status":
			status = m.Value
		case "metadata":
			metadata = m.Value
		case "fields":
			fields = m.Value
		}
	}
	var it ResourceItem
	var err error
	if it.ResourceID, err = toolarg.RequiredStringValue(raw, "resourceId", id, prefix); err != nil {
		return it, err
	}
	if it.Title, err = toolarg.RequiredStringValue(raw, "title", title, prefix); err != nil {
		return it, err
	}
	if it.Subtitle, err = toolarg.OptionalStringValue(raw, "subtitle", subtitle, prefix); err != nil {
		return it, err
	}
	if it.Href, err = toolarg.OptionalStringValue(raw, "href", href, prefix); err != nil {
		return it, err
	}
	if it.Status, err = toolarg.OptionalStringValue(raw, "status", status, prefix); err != nil {
		return it, err
	}
	if it.Metadata, err = validateMetadata(metadata, ctx); err != nil {
		return it, err
	}
	if it.Fields, err = validateFields(fields, ctx); err != nil {
		return it, err
	}
	return it, nil
}

func validateMetadata(v pyjson.Value, ctx func() string) ([]MetadataEntry, error) {
	switch {
	case v.Kind() == pyjson.Null:
		return nil, nil
	case v.Kind() != pyjson.Array:
		return nil, fail(ctx() + ": metadata must be an array")
	case v.Len() > MaxMetadata:
		return nil, fail(ctx() + ": at most 20 metadata entries")
	}
	elems := v.Elems()
	out := make([]MetadataEntry, 0, len(elems))
	for i := range elems {
		m := &elems[i]
		if m.Kind() != pyjson.Object {
			return nil, fail(ctx() + ": metadata items must be objects")
		}
		label, value := m.Lookup("label"), m.Lookup("value")
		if label.Kind() != pyjson.String || strings.TrimSpace(label.Text()) == "" {
			return nil, fail(ctx() + ": metadata[].label must be a non-empty string")
		}
		if value.Kind() == pyjson.Null {
			return nil, fail(ctx() + ": metadata[].value is required")
		}
		out = append(out, MetadataEntry{Label: strings.TrimSpace(label.Text()), Value: value.PyStr()})
	}
	return out, nil
}

func validateFields(v pyjson.Value, ctx func() string) (Fields, error) {
	switch {
	case v.Kind() == pyjson.Null:
		return nil, nil
	case v.Kind() != pyjson.Object:
		return nil, fail(ctx() + ": fields must be an object")
	case v.Len() > MaxFields:
		return nil, fail(ctx() + ": at most 40 field entries")
	}
	out := make(Fields, 0, v.Len())
	members := v.Members()
	// The decoded keys are distinct: two entries can meet only once
	// stripping has changed a key.
	changed := false
	for j := range members {
		m := &members[j]
		k := strings.TrimSpace(m.Key)
		if len(k) != len(m.Key) {
			changed = true
		}
		if k == "" {
			return nil, fail(ctx() + ": fields keys must be non-empty strings")
		}
		var fv FieldValue
		switch m.Value.Kind() {
		case pyjson.Null:
			fv = NullField()
		case pyjson.Bool:
			fv = BoolField(m.Value.Bool())
		case pyjson.String:
			fv = StringField(m.Value.Text())
		case pyjson.Int:
			fv = FieldValue{kind: FieldInt, s: m.Value.Text()}
		case pyjson.Float:
			if f := m.Value.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				// Python would emit NaN/Infinity, which JSON.parse rejects.
				return nil, fail(ctx() + ": fields." + m.Key + " must be string, number, boolean, or null")
			}
			fv = FloatField(m.Value.Float())
		default:
			return nil, fail(ctx() + ": fields." + m.Key + " must be string, number, boolean, or null")
		}
		replaced := false
		for i := 0; changed && i < len(out); i++ {
			if out[i].Key == k {
				out[i].Value = fv
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, Field{Key: k, Value: fv})
		}
	}
	return out, nil
}

// number mirrors `isinstance(v, bool) or not isinstance(v, (int, float))`
// then float(v). Non-finite results are refused (Python would emit NaN or
// Infinity, or raise OverflowError for huge ints).
func number(v pyjson.Value) (float64, bool) {
	switch v.Kind() {
	case pyjson.Float:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	case pyjson.Int:
		f, err := strconv.ParseFloat(v.Text(), 64)
		if err != nil || math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

func validateChart(raw *pyjson.Value) (Action, error) {
	mv := raw.Lookup("metrics")
	metrics := mv.Elems()
	if mv.Kind() != pyjson.Array || len(metrics) == 0 {
		return nil, fail("chart.metrics must be a non-empty array")
	}
	if len(metrics) > MaxChartMetrics {
		return nil, fail("chart.metrics: at most 10 series")
	}
	out := Chart{Metrics: make([]ChartMetric, 0, len(metrics))}
	for i := range metrics {
		m := &metrics[i]
		ctx := "chart.metrics[" + strconv.Itoa(i) + "]"
		if m.Kind() != pyjson.Object {
			return nil, fail(ctx + " must be an object")
		}
		name := m.Lookup("metric")
		if name.Kind() != pyjson.String || strings.TrimSpace(name.Text()) == "" {
			return nil, fail(ctx + ".metric must be a non-empty string")
		}
		pv := m.Lookup("points")
		if pv.Kind() != pyjson.Array {
			return nil, fail(ctx + ".points must be an array")
		}
		pts := pv.Elems()
		if len(pts) > MaxChartPoints {
			return nil, fail(ctx + ".points: at most 5000 points")
		}
		points := make([]ChartPoint, 0, len(pts))
		for j := range pts {
			p := &pts[j]
			if p.Kind() != pyjson.Object {
				return nil, fail(ctx + ".points[" + strconv.Itoa(j) + "] must be an object")
			}
			tm := p.Lookup("time")
			if tm.Kind() != pyjson.String || strings.TrimSpace(tm.Text()) == "" {
				return nil, fail(ctx + ".points[" + strconv.Itoa(j) + "].time must be a non-empty string")
			}
			val, ok := number(p.Lookup("value"))
			if !ok {
				return nil, fail(ctx + ".points[" + strconv.Itoa(j) + "].value must be a number")
			}
			pt := ChartPoint{Time: strings.TrimSpace(tm.Text()), Value: val}
			if lv := p.Lookup("label"); lv.Kind() != pyjson.Null {
				if lv.Kind() != pyjson.String {
					return nil, fail(ctx + ".points[" + strconv.Itoa(j) + "].label must be a string")
				}
				pt.Label = strings.TrimSpace(lv.Text())
			}
			points = append(points, pt)
		}
		out.Metrics = append(out.Metrics, ChartMetric{Metric: strings.TrimSpace(name.Text()), Points: points})
	}
	var err error
	if out.Title, err = requireStr(raw, "title"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"description", &out.Description}, {"unitLabel", &out.UnitLabel}, {"interval", &out.Interval},
		{"startAt", &out.StartAt}, {"endAt", &out.EndAt}, {"href", &out.Href}, {"projectId", &out.ProjectID}} {
		if *f.dst, err = optionalStr(raw, f.key); err != nil {
			return nil, err
		}
	}
	if out.ChartType, err = optionalOneOf(raw, "chartType", chartTypes, "chart.chartType must be one of ['area', 'bar']"); err != nil {
		return nil, err
	}
	if out.Kind, err = optionalOneOf(raw, "kind", chartKinds, "chart.kind must be one of ['events', 'gauges']"); err != nil {
		return nil, err
	}
	if out.AxisFormat, err = optionalOneOf(raw, "axisFormat", axisFormats, "chart.axisFormat must be one of ['bytes', 'count', 'gbhours']"); err != nil {
		return nil, err
	}
	if cv := raw.Lookup("changePercent"); cv.Kind() != pyjson.Null {
		f, ok := number(cv)
		if !ok {
			return nil, fail("chart.changePercent must be a number")
		}
		out.ChangePercent = &f
	}
	return out, nil
}
