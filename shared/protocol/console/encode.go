package console

import (
	"strconv"

	"appwrite-agent/shared/pyjson"
)

// AppendJSON appends the envelope as compact JSON: {"protocol":…,"actions":[…]}.
// It writes what the struct holds; use Normalize first for values that did
// not come out of Validate.
func (e Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"protocol":`...)
	b = pyjson.AppendString(b, e.Protocol)
	b = pyjson.AppendArray(append(b, `,"actions":`...), e.Actions)
	return append(b, '}')
}

// String returns the envelope as compact JSON.
func (e Envelope) String() string { return string(e.AppendJSON(nil)) }

func head(b []byte, t string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, t...)
	return append(b, '"')
}

// AppendJSON appends {"type":"set_theme","theme":…}.
func (a SetTheme) AppendJSON(b []byte) []byte {
	return append(pyjson.AppendStringField(head(b, "set_theme"), "theme", string(a.Theme)), '}')
}

// AppendJSON appends {"type":"navigate","path":…,"hash"?,"replace"?}.
func (a Navigate) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "navigate"), "path", a.Path)
	if a.Hash != nil {
		b = pyjson.AppendStringField(b, "hash", *a.Hash)
	}
	if a.Replace != nil {
		b = pyjson.AppendBoolField(b, "replace", *a.Replace)
	}
	return append(b, '}')
}

// AppendJSON appends {"type":"open_create","resource":…,"projectId"?}.
func (a OpenCreate) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "open_create"), "resource", string(a.Resource))
	return append(pyjson.AppendOptionalStringField(b, "projectId", a.ProjectID), '}')
}

// AppendJSON appends {"type":"open_dialog","dialog":…,"projectId"?}.
func (a OpenDialog) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "open_dialog"), "dialog", string(a.Dialog))
	return append(pyjson.AppendOptionalStringField(b, "projectId", a.ProjectID), '}')
}

// AppendJSON appends {"type":"toast","level":…,"message":…,"description"?}.
func (a Toast) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "toast"), "level", string(a.Level))
	b = pyjson.AppendStringField(b, "message", a.Message)
	return append(pyjson.AppendOptionalStringField(b, "description", a.Description), '}')
}

// AppendJSON appends {"type":"show_pane","content":…}.
func (a ShowPane) AppendJSON(b []byte) []byte {
	return append(pyjson.AppendStringField(head(b, "show_pane"), "content", string(a.Content)), '}')
}

// AppendJSON appends {"type":"toggle_terminal"}.
func (ToggleTerminal) AppendJSON(b []byte) []byte {
	return append(head(b, "toggle_terminal"), '}')
}

// AppendJSON appends {"type":"scroll_to_card","cardId":…}.
func (a ScrollToCard) AppendJSON(b []byte) []byte {
	return append(pyjson.AppendStringField(head(b, "scroll_to_card"), "cardId", a.CardID), '}')
}

// appendItemBody appends ,"resourceId":…,"title":…,… (no braces).
func (it *ResourceItem) appendBody(b []byte) []byte {
	b = pyjson.AppendStringField(b, "resourceId", it.ResourceID)
	b = pyjson.AppendStringField(b, "title", it.Title)
	b = pyjson.AppendOptionalStringField(b, "subtitle", it.Subtitle)
	b = pyjson.AppendOptionalStringField(b, "href", it.Href)
	b = pyjson.AppendOptionalStringField(b, "status", it.Status)
	if it.Metadata != nil {
		b = append(pyjson.AppendKey(b, "metadata"), '[')
		for i, m := range it.Metadata {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"label":`...)
			b = pyjson.AppendString(b, m.Label)
			b = append(b, `,"value":`...)
			b = pyjson.AppendString(b, m.Value)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if it.Fields != nil {
		b = it.Fields.AppendJSON(pyjson.AppendKey(b, "fields"))
	}
	return b
}

// AppendJSON appends the item as a JSON object.
func (it ResourceItem) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	start := len(b)
	b = it.appendBody(b)
	b = append(b[:start], b[start+1:]...) // drop the leading comma
	return append(b, '}')
}

// AppendJSON appends the fields as a JSON object, in order.
func (f Fields) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, e := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = pyjson.AppendString(b, e.Key)
		b = append(b, ':')
		b = e.Value.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends {"type":"resource","mutation":…,"resourceType":…,"resourceId":…,…}.
func (a Resource) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "resource"), "mutation", string(a.Mutation))
	b = pyjson.AppendStringField(b, "resourceType", a.ResourceType)
	b = a.ResourceItem.appendBody(b)
	return append(b, '}')
}

// AppendJSON appends {"type":"resource_list","resourceType":…,"items":[…],…}.
func (a ResourceList) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "resource_list"), "resourceType", a.ResourceType)
	b = append(pyjson.AppendKey(b, "items"), '[')
	for i := range a.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = a.Items[i].AppendJSON(b)
	}
	b = append(b, ']')
	b = pyjson.AppendOptionalStringField(b, "title", a.Title)
	b = pyjson.AppendOptionalStringField(b, "description", a.Description)
	b = pyjson.AppendOptionalStringField(b, "listHref", a.ListHref)
	b = pyjson.AppendOptionalStringField(b, "emptyMessage", a.EmptyMessage)
	if a.Total != nil {
		b = strconv.AppendInt(pyjson.AppendKey(b, "total"), *a.Total, 10)
	}
	b = pyjson.AppendOptionalStringField(b, "projectId", a.ProjectID)
	if a.Columns != nil {
		b = append(pyjson.AppendKey(b, "columns"), '[')
		for i, c := range a.Columns {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = pyjson.AppendString(b, c.Key)
			b = append(b, `,"label":`...)
			b = pyjson.AppendString(b, c.Label)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// AppendJSON appends {"type":"chart","title":…,"metrics":[…],…}.
func (a Chart) AppendJSON(b []byte) []byte {
	b = pyjson.AppendStringField(head(b, "chart"), "title", a.Title)
	b = append(pyjson.AppendKey(b, "metrics"), '[')
	for i, m := range a.Metrics {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"metric":`...)
		b = pyjson.AppendString(b, m.Metric)
		b = append(b, `,"points":[`...)
		for j, p := range m.Points {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"time":`...)
			b = pyjson.AppendString(b, p.Time)
			b = append(b, `,"value":`...)
			b = pyjson.AppendFloat(b, p.Value)
			if p.Label != "" {
				b = append(b, `,"label":`...)
				b = pyjson.AppendString(b, p.Label)
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, ']')
	b = pyjson.AppendOptionalStringField(b, "description", a.Description)
	b = pyjson.AppendOptionalStringField(b, "unitLabel", a.UnitLabel)
	b = pyjson.AppendOptionalStringField(b, "interval", a.Interval)
	b = pyjson.AppendOptionalStringField(b, "startAt", a.StartAt)
	b = pyjson.AppendOptionalStringField(b, "endAt", a.EndAt)
	b = pyjson.AppendOptionalStringField(b, "href", a.Href)
	b = pyjson.AppendOptionalStringField(b, "projectId", a.ProjectID)
	b = pyjson.AppendOptionalStringField(b, "chartType", string(a.ChartType))
	b = pyjson.AppendOptionalStringField(b, "kind", string(a.Kind))
	b = pyjson.AppendOptionalStringField(b, "axisFormat", string(a.AxisFormat))
	if a.ChangePercent != nil {
		b = pyjson.AppendFloat(pyjson.AppendKey(b, "changePercent"), *a.ChangePercent)
	}
	return append(b, '}')
}

// AppendJSON appends {"type":"refresh","scopes":[…]}.
func (a Refresh) AppendJSON(b []byte) []byte {
	b = append(pyjson.AppendKey(head(b, "refresh"), "scopes"), '[')
	for i, s := range a.Scopes {
		if i > 0 {
			b = append(b, ',')
		}
		b = pyjson.AppendString(b, s)
	}
	return append(b, "]}"...)
}
