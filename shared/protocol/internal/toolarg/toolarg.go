// Package toolarg holds what the four protocol validators share: the error that carries the Python engine's
// message word for word, the reading of a tool argument (JSON text of one object or an array of objects),
// and the typed field readers with the engine's messages ("<where>key must be a string", "... is
// required", "... must be a boolean").
package toolarg

import "appwrite-agent/shared/pyjson"

// Error is a rejected tool argument; Error returns the message that follows the protocol's ErrorPrefix.
type Error struct {
	// Msg is the engine's message, word for word.
	Msg string
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Fail returns an *Error with msg.
func Fail(msg string) error { return &Error{Msg: msg} }

// Decode reads a tool argument as the engine's parse_*_arg does: invalid UTF-8 repaired, whitespace stripped,
// then json.loads. name ("actions", "prompts", "report") words the messages.
func Decode(arg, name string) (pyjson.Value, error) {
	text := pyjson.Strip(pyjson.ValidUTF8(arg))
	if text == "" {
		return pyjson.Value{}, Fail(name + " is empty")
	}
	v, err := pyjson.Decode(text)
	if err != nil {
		return pyjson.Value{}, Fail(name + " must be valid JSON: " + err.Error())
	}
	return v, nil
}

// Items is the list an argument holds: one object, or the elements of an array.
func Items(v pyjson.Value, name string) ([]pyjson.Value, error) {
	switch v.Kind() {
	case pyjson.Object:
		return []pyjson.Value{v}, nil
	case pyjson.Array:
		return v.Elems(), nil
	}
	return nil, Fail(name + " JSON must be an object or an array of objects")
}

// List is Decode then Items.
func List(arg, name string) ([]pyjson.Value, error) {
	v, err := Decode(arg, name)
	if err != nil {
		return nil, err
	}
	return Items(v, name)
}

// Where names the item a field belongs to in messages, as the engine does (for example the repr of its type:
// "'resource'"). It is called only when a message is made. Nil means messages name the field alone.
type Where func(raw *pyjson.Value) string

func (w Where) fail(raw *pyjson.Value, key, problem string) error {
	if w == nil {
		return Fail(key + problem)
	}
	return Fail(w(raw) + ": " + key + problem)
}

// RequiredString reads raw[key]: a string, stripped, not empty.
func RequiredString(raw *pyjson.Value, key string, where Where) (string, error) {
	return RequiredStringValue(raw, key, raw.Lookup(key), where)
}

// RequiredStringValue is RequiredString for a caller that has looked up v = raw[key] already.
func RequiredStringValue(raw *pyjson.Value, key string, v pyjson.Value, where Where) (string, error) {
	if v.Kind() != pyjson.String {
		return "", where.fail(raw, key, " must be a string")
	}
	t := pyjson.Strip(v.Text())
	if t == "" {
		return "", where.fail(raw, key, " is required")
	}
	return t, nil
}

// OptionalString reads raw[key]: absent or null is "", otherwise a string, stripped.
func OptionalString(raw *pyjson.Value, key string, where Where) (string, error) {
	return OptionalStringValue(raw, key, raw.Lookup(key), where)
}

// OptionalStringValue is OptionalString for a caller that has looked up v = raw[key] already.
func OptionalStringValue(raw *pyjson.Value, key string, v pyjson.Value, where Where) (string, error) {
	if v.Kind() == pyjson.Null {
		return "", nil
	}
	if v.Kind() != pyjson.String {
		return "", where.fail(raw, key, " must be a string")
	}
	return pyjson.Strip(v.Text()), nil
}

// OptionalBool reads raw[key]: absent or null is nil, otherwise a boolean.
func OptionalBool(raw *pyjson.Value, key string, where Where) (*bool, error) {
	v := raw.Lookup(key)
	if v.Kind() == pyjson.Null {
		return nil, nil
	}
	if v.Kind() != pyjson.Bool {
		return nil, where.fail(raw, key, " must be a boolean")
	}
	b := v.Bool()
	return &b, nil
}
