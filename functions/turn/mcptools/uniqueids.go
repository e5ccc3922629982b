package mcptools

import (
	"crypto/rand"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// UniqueToken is the Appwrite SDK's "generate an id" placeholder the guard expands.
const UniqueToken = "unique()"

// idKeys are the id arguments a create's dedupe key prefers, in order.
var idKeys = []string{"database_id", "bucket_id", "user_id", "team_id", "function_id", "file_id",
	"collection_id", "table_id", "row_id", "document_id"}

var (
	createRE  = regexp.MustCompile(`(?:^|_)create(?:_|$)`)
	ownRE     = regexp.MustCompile(`^([a-z0-9]+)_create`)
	createXRE = regexp.MustCompile(`^(.+)_create_(.+)$`)
)

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newID is a fresh Appwrite-style id: a lowercase letter then 19 characters of [a-z0-9].
func newID() string {
	b := make([]byte, 20)
	for i := range b {
		n := len(idAlphabet)
		if i == 0 {
			n = 26
		}
		v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
		if err != nil {
			panic(err)
		}
		b[i] = idAlphabet[v.Int64()]
	}
	return string(b)
}

// isCreate reports a create tool: "create" as a whole _-separated word of the name.
func isCreate(tool string) bool { return tool != "" && createRE.MatchString(tool) }

// ownIDKeys are the id arguments a create mints itself: users_create → user_id, databases_create →
// database_id (ies → y, a trailing s dropped unless ss).
func ownIDKeys(tool string) map[string]bool {
	m := ownRE.FindStringSubmatch(tool)
	if m == nil {
		return nil
	}
	r := m[1]
	switch {
	case strings.HasSuffix(r, "ies"):
		r = r[:len(r)-3] + "y"
	case strings.HasSuffix(r, "s") && !strings.HasSuffix(r, "ss"):
		r = r[:len(r)-1]
	}
	return map[string]bool{r + "_id": true}
}

// getToolFor is the get tool of a create: X_create → X_get, A_create_B → A_get_B ("" when none).
func getToolFor(create string) string {
	if strings.HasSuffix(create, "_create") {
		return strings.TrimSuffix(create, "_create") + "_get"
	}
	if m := createXRE.FindStringSubmatch(create); m != nil {
		return m[1] + "_get_" + m[2]
	}
	return ""
}

// idFromArguments is the first concrete (non-empty, not unique()) id: the preferred keys first, then
// any key ending in _id, in argument order.
func idFromArguments(args any) (key, value string, ok bool) {
	o, isObj := args.(*object)
	if !isObj {
		return "", "", false
	}
	concrete := func(v any) (string, bool) {
		s, isStr := v.(string)
		return s, isStr && s != "" && s != UniqueToken
	}
	for _, k := range idKeys {
		if v, has := o.get(k); has {
			if s, ok := concrete(v); ok {
				return k, s, true
			}
		}
	}
	for _, k := range o.keys {
		if strings.HasSuffix(k, "_id") {
			if s, ok := concrete(o.vals[k]); ok {
				return k, s, true
			}
		}
	}
	return "", "", false
}

// dedupeKey is "<tool>:<id key>=<id value>[,<id key>=<id value>…]" over every concrete id argument (the
// preferred keys first, then the other *_id keys in argument order); "" when there is none. The reference
// keys on the first id only, which blocks a second table in the same database or a second file in the
// same bucket within a turn; keying on all ids still blocks a create retried with the same ids.
func dedupeKey(tool string, args any) string {
	o, isObj := args.(*object)
	if !isObj {
		return ""
	}
	var parts []string
	add := func(k string) {
		if s, ok := o.vals[k].(string); ok && s != "" && s != UniqueToken {
			parts = append(parts, k+"="+s)
		}
	}
	preferred := map[string]bool{}
	for _, k := range idKeys {
		preferred[k] = true
		add(k)
	}
	for _, k := range o.keys {
		if strings.HasSuffix(k, "_id") && !preferred[k] {
			add(k)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return tool + ":" + strings.Join(parts, ",")
}

// expander replaces "unique()" with generated ids, one per slot (the value's path: key, a.b, list[0]),
// reused for the whole turn, so a database_id minted by one call is the same in the next.
type expander struct {
	ids   map[string]string
	newID func() string
}

// expand returns v with every "unique()" replaced. For a create's own id keys (fresh), attempt > 0 uses
// the slot "<slot>#<attempt>", so a repeated create mints a new id while foreign keys keep theirs.
func (e *expander) expand(v any, prefix string, fresh map[string]bool, attempt int) any {
	switch t := v.(type) {
	case *object:
		out := newObject()
		for _, k := range t.keys {
			val := t.vals[k]
			slot := k
			if prefix != "" {
				slot = prefix + "." + k
			}
			if attempt > 0 && fresh[k] && val == UniqueToken {
				slot += "#" + strconv.Itoa(attempt)
			}
			switch val.(type) {
			case *object, []any:
				out.set(k, e.expand(val, slot, fresh, attempt))
			default:
				out.set(k, e.scalar(val, slot))
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			out[i] = e.expand(item, prefix+"["+strconv.Itoa(i)+"]", fresh, attempt)
		}
		return out
	default:
		if prefix == "" {
			prefix = "value"
		}
		return e.scalar(v, prefix)
	}
}

func (e *expander) scalar(v any, slot string) any {
	if v != UniqueToken {
		return v
	}
	id, ok := e.ids[slot]
	if !ok {
		id = e.newID()
		e.ids[slot] = id
	}
	return id
}
