package console

import (
	"strconv"

	"appwrite-agent/shared/pyjson"
)

// Envelope is the tool result the Console parses: {"protocol", "actions"}.
type Envelope struct {
	// Protocol is always Protocol ("appwrite.console/v1") in what the engine emits.
	Protocol string
	// Actions holds 1 to MaxActions actions, applied in order.
	Actions []Action
}

// Action is one ConsoleAction. The concrete types are SetTheme, Navigate,
// OpenCreate, OpenDialog, Toast, ShowPane, ToggleTerminal, ScrollToCard,
// Resource, ResourceList, Chart and Refresh.
type Action interface {
	// ActionType returns the wire value of "type", e.g. "set_theme".
	ActionType() string
	// AppendJSON appends the action as compact JSON, keys in wire order.
	AppendJSON(b []byte) []byte
	isAction()
}

// Theme is the value of set_theme.theme.
type Theme string

// The themes the Console knows.
const (
	ThemeLight  Theme = "light"
	ThemeDark   Theme = "dark"
	ThemeSystem Theme = "system"
)

// CreateResource is the value of open_create.resource.
type CreateResource string

// The create dialogs the Console can open.
const (
	CreateDatabase CreateResource = "database"
	CreateBucket   CreateResource = "bucket"
	CreateUser     CreateResource = "user"
	CreateTeam     CreateResource = "team"
	CreateFunction CreateResource = "function"
	CreateSite     CreateResource = "site"
)

// Dialog is the value of open_dialog.dialog.
type Dialog string

// The named Console dialogs.
const (
	DialogInviteMember  Dialog = "invite_member"
	DialogCreateProject Dialog = "create_project"
	DialogConnectMCP    Dialog = "connect_mcp"
	DialogShortcuts     Dialog = "shortcuts"
	DialogDocsSearch    Dialog = "docs_search"
	DialogFeedback      Dialog = "feedback"
	DialogSupport       Dialog = "support"
)

// ToastLevel is the value of toast.level.
type ToastLevel string

// The toast levels.
const (
	LevelSuccess ToastLevel = "success"
	LevelError   ToastLevel = "error"
	LevelInfo    ToastLevel = "info"
	LevelWarning ToastLevel = "warning"
)

// PaneContent is the value of show_pane.content.
type PaneContent string

// What the right pane can show.
const (
	PaneAgent PaneContent = "agent"
	PaneDocs  PaneContent = "docs"
	PaneNone  PaneContent = "none"
)

// Mutation is the value of resource.mutation.
type Mutation string

// The mutations a resource card reports.
const (
	MutationCreate Mutation = "create"
	MutationUpdate Mutation = "update"
	MutationDelete Mutation = "delete"
)

// ChartType is the value of chart.chartType.
type ChartType string

// The chart visuals.
const (
	ChartArea ChartType = "area"
	ChartBar  ChartType = "bar"
)

// ChartKind is the value of chart.kind.
type ChartKind string

// The usage series kinds.
const (
	KindEvents ChartKind = "events"
	KindGauges ChartKind = "gauges"
)

// AxisFormat is the value of chart.axisFormat.
type AxisFormat string

// The axis formats.
const (
	AxisCount   AxisFormat = "count"
	AxisBytes   AxisFormat = "bytes"
	AxisGBHours AxisFormat = "gbhours"
)

// SetTheme switches the Console appearance.
type SetTheme struct {
	// Theme is light, dark or system.
	Theme Theme
}

// Navigate changes the client-side route.
type Navigate struct {
	// Path must start with "/".
	Path string
	// Hash is the optional fragment; the engine removes leading '#'. An empty
	// (non-nil) hash is emitted as "".
	Hash *string
	// Replace asks for a history replace instead of a push; nil omits it.
	Replace *bool
}

// OpenCreate opens a project create dialog or drawer.
type OpenCreate struct {
	// Resource is the kind to create.
	Resource CreateResource
	// ProjectID is optional ("" omits it).
	ProjectID string
}

// OpenDialog opens a named Console dialog.
type OpenDialog struct {
	// Dialog is the dialog to open.
	Dialog Dialog
	// ProjectID is optional ("" omits it).
	ProjectID string
}

// Toast shows a transient notification.
type Toast struct {
	// Level is success, error, info or warning.
	Level ToastLevel
	// Message is the short title (required).
	Message string
	// Description is optional supporting text ("" omits it).
	Description string
}

// ShowPane controls the Console right pane.
type ShowPane struct {
	// Content is agent, docs or none.
	Content PaneContent
}

// ToggleTerminal toggles the project terminal panel.
type ToggleTerminal struct{}

// ScrollToCard scrolls a card section into view.
type ScrollToCard struct {
	// CardID is the card id; the engine removes one leading "card-".
	CardID string
}

// MetadataEntry is one display-only {label, value} pair.
type MetadataEntry struct {
	// Label is non-empty.
	Label string
	// Value is the text shown.
	Value string
}

// ResourceItem is the shape shared by resource cards and list rows.
type ResourceItem struct {
	// ResourceID is the Appwrite $id (required).
	ResourceID string
	// Title is the primary label (required).
	Title string
	// Subtitle is an optional secondary line.
	Subtitle string
	// Href is an optional Console deep link.
	Href string
	// Status is optional badge text.
	Status string
	// Metadata is the optional card footer; nil omits it, an empty slice is emitted as [].
	Metadata []MetadataEntry
	// Fields is the optional typed map; nil omits it, an empty slice is emitted as {}.
	Fields Fields
}

// Resource renders a card for a mutation the agent already performed.
type Resource struct {
	// Mutation is create, update or delete.
	Mutation Mutation
	// ResourceType is the free-form kind (database, bucket, table, ...), lower-cased.
	ResourceType string
	ResourceItem
}

// Column is a {key, label} column hint of a resource list.
type Column struct {
	// Key should match a key of the rows' fields.
	Key string
	// Label is the column heading.
	Label string
}

// ResourceList renders a structured list of resources.
type ResourceList struct {
	// ResourceType is the kind of every row, lower-cased.
	ResourceType string
	// Items holds 0 to MaxListItems rows.
	Items []ResourceItem
	// Title is the optional heading.
	Title string
	// Description is optional context under the heading.
	Description string
	// ListHref optionally links the full Console list page.
	ListHref string
	// EmptyMessage is shown when Items is empty.
	EmptyMessage string
	// Total is the total number of matches; the engine sets len(Items) when
	// it is nil and Items is not empty.
	Total *int64
	// ProjectID is an optional scope hint.
	ProjectID string
	// Columns are optional column hints; nil omits them, an empty slice is an error.
	Columns []Column
}

// ChartPoint is one point of a usage series.
type ChartPoint struct {
	// Time is the bucket time as the usage API gave it.
	Time string
	// Value is the measurement (always written as a float, e.g. 49.0).
	Value float64
	// Label is optional ("" omits it).
	Label string
}

// ChartMetric is one usage series.
type ChartMetric struct {
	// Metric is the exact metric id, e.g. network.requests.
	Metric string
	// Points are the series points, at most MaxChartPoints.
	Points []ChartPoint
}

// Chart renders a usage chart.
type Chart struct {
	// Title is the chart heading (required).
	Title string
	// Metrics holds 1 to MaxChartMetrics series.
	Metrics []ChartMetric
	// Description, UnitLabel, Interval, StartAt, EndAt, Href and ProjectID
	// are optional strings ("" omits them).
	Description, UnitLabel, Interval, StartAt, EndAt, Href, ProjectID string
	// ChartType is area or bar ("" omits it).
	ChartType ChartType
	// Kind is events or gauges ("" omits it).
	Kind ChartKind
	// AxisFormat is count, bytes or gbhours ("" omits it).
	AxisFormat AxisFormat
	// ChangePercent is the optional change versus the previous period.
	ChangePercent *float64
}

// Refresh invalidates Console caches.
type Refresh struct {
	// Scopes are non-empty, lower-cased scope tokens.
	Scopes []string
}

// FieldKind says which JSON type a FieldValue has.
type FieldKind uint8

// The kinds of field values.
const (
	FieldNull FieldKind = iota
	FieldString
	FieldBool
	FieldInt
	FieldFloat
)

// FieldValue is a string, number, boolean or null. Integers and floats are
// kept apart because the wire keeps them apart (1 versus 1.0).
type FieldValue struct {
	kind FieldKind
	s    string // string value, or the decimal literal of an integer
	f    float64
	b    bool
}

// Field is one entry of Fields.
type Field struct {
	// Key is the field name (non-empty after strip).
	Key string
	// Value is the field value.
	Value FieldValue
}

// Fields is an ordered Record<string, string | number | boolean | null>.
type Fields []Field

// StringField returns a string field value.
func StringField(s string) FieldValue { return FieldValue{kind: FieldString, s: s} }

// IntField returns an integer field value.
func IntField(n int64) FieldValue {
	return FieldValue{kind: FieldInt, s: strconv.FormatInt(n, 10)}
}

// IntLiteralField returns an integer field value from a decimal literal of
// any size (as Python ints are). It returns false if lit is not an integer literal.
func IntLiteralField(lit string) (FieldValue, bool) {
	if !isIntLiteral(lit) {
		return FieldValue{}, false
	}
	if lit == "-0" {
		lit = "0"
	}
	return FieldValue{kind: FieldInt, s: lit}, true
}

// FloatField returns a float field value.
func FloatField(f float64) FieldValue { return FieldValue{kind: FieldFloat, f: f} }

// BoolField returns a boolean field value.
func BoolField(b bool) FieldValue { return FieldValue{kind: FieldBool, b: b} }

// NullField returns the null field value.
func NullField() FieldValue { return FieldValue{} }

// Kind returns the JSON type of the value.
func (v FieldValue) Kind() FieldKind { return v.kind }

// Str returns the text of a string value.
func (v FieldValue) Str() string {
	if v.kind == FieldString {
		return v.s
	}
	return ""
}

// IntLiteral returns the decimal literal of an integer value.
func (v FieldValue) IntLiteral() string {
	if v.kind == FieldInt {
		return v.s
	}
	return ""
}

// Float returns the number held by an integer or float value (an integer
// too large for float64 gives ±Inf).
func (v FieldValue) Float() float64 {
	switch v.kind {
	case FieldFloat:
		return v.f
	case FieldInt:
		f, _ := strconv.ParseFloat(v.s, 64)
		return f
	}
	return 0
}

// Bool returns the value of a boolean.
func (v FieldValue) Bool() bool { return v.kind == FieldBool && v.b }

// AppendJSON appends the value as JSON. A non-finite float (which Validate
// rejects) is written as json.dumps writes it: NaN, Infinity, -Infinity.
func (v FieldValue) AppendJSON(b []byte) []byte {
	switch v.kind {
	case FieldString:
		return pyjson.AppendString(b, v.s)
	case FieldBool:
		if v.b {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case FieldInt:
		return append(b, v.s...)
	case FieldFloat:
		return pyjson.AppendFloat(b, v.f)
	}
	return append(b, "null"...)
}

func isIntLiteral(lit string) bool {
	s := lit
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (SetTheme) isAction()       {}
func (Navigate) isAction()       {}
func (OpenCreate) isAction()     {}
func (OpenDialog) isAction()     {}
func (Toast) isAction()          {}
func (ShowPane) isAction()       {}
func (ToggleTerminal) isAction() {}
func (ScrollToCard) isAction()   {}
func (Resource) isAction()       {}
func (ResourceList) isAction()   {}
func (Chart) isAction()          {}
func (Refresh) isAction()        {}

// ActionType returns "set_theme".
func (SetTheme) ActionType() string { return "set_theme" }

// ActionType returns "navigate".
func (Navigate) ActionType() string { return "navigate" }

// ActionType returns "open_create".
func (OpenCreate) ActionType() string { return "open_create" }

// ActionType returns "open_dialog".
func (OpenDialog) ActionType() string { return "open_dialog" }

// ActionType returns "toast".
func (Toast) ActionType() string { return "toast" }

// ActionType returns "show_pane".
func (ShowPane) ActionType() string { return "show_pane" }

// ActionType returns "toggle_terminal".
func (ToggleTerminal) ActionType() string { return "toggle_terminal" }

// ActionType returns "scroll_to_card".
func (ScrollToCard) ActionType() string { return "scroll_to_card" }

// ActionType returns "resource".
func (Resource) ActionType() string { return "resource" }

// ActionType returns "resource_list".
func (ResourceList) ActionType() string { return "resource_list" }

// ActionType returns "chart".
func (Chart) ActionType() string { return "chart" }

// ActionType returns "refresh".
func (Refresh) ActionType() string { return "refresh" }
