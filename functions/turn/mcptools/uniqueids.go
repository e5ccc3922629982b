package mcptools

import (
	"crypto/rand"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"appwrite-agent/shared/pyjson"
)

// UniqueToken is the Appwrite SDK's "generate an id" placeholder the guard expands.
const UniqueToken = "unique()"

// idKeys are the id arguments a create's dedupe key prefers, in order.
var idKeys = []string{"database_id", "bucket_id", "user_id", "team_id", "function_id", "file_id",
	"collection_id", "table_id", "row_id", "document_id"}

var (
	createRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|_)create(?:_|$)`) })
	ownRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z0-9]+)_create`) })
	createXRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)_create_(.+)$`) })
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
func isCreate(tool string) bool { return tool != "" && createRE().MatchString(tool) }

// ownIDKeys are the id arguments a create mints itself: users_create → user_id, databases_create →
// database_id (ies → y, a trailing s dropped unless ss).
func ownIDKeys(tool string) map[string]bool {
	m := ownRE().FindStringSubmatch(tool)
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
	if m := createXRE().FindStringSubmatch(create); m != nil {
		return m[1] + "_get_" + m[2]
	}
	return ""
}

// idFromArguments is the first concrete (non-empty, not unique()) id: the preferred keys first, then
// any key ending in _id, in argument order.
func idFromArguments(args pyjson.Value) (key, value string, ok bool) {
	if args.Kind() != pyjson.Object {
		return "", "", false
	}
	for _, k := range idKeys {
		if v, has := args.Get(k); has && concreteID(v) {
			return k, v.Text(), true
		}
	}
	for _, m := range args.Members() {
		if strings.HasSuffix(m.Key, "_id") && concreteID(m.Value) {
			return m.Key, m.Value.Text(), true
		}
	}
	return "", "", false
}

// dedupeKey is "<tool>:<id key>=<id value>[,<id key>=<id value>…]" over every concrete id argument (the
// preferred keys first, then the other *_id keys in argument order); "" when there is none. The reference
// keys on the first id only, which blocks a second table in the same database or a second file in the
// same bucket within a turn; keying on all ids still blocks a create retried with the same ids.
func dedupeKey(tool string, args pyjson.Value) string {
	if args.Kind() != pyjson.Object {
		return ""
	}
	var parts []string
	add := func(k string, v pyjson.Value) {
		if concreteID(v) {
			parts = append(parts, k+"="+v.Text())
		}
	}
	preferred := map[string]bool{}
	for _, k := range idKeys {
		preferred[k] = true
		add(k, args.Lookup(k))
	}
	for _, m := range args.Members() {
		if strings.HasSuffix(m.Key, "_id") && !preferred[m.Key] {
			add(m.Key, m.Value)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return tool + ":" + strings.Join(parts, ",")
}

// concreteID reports an id argument with a value: a non-empty string other than "unique()".
func concreteID(v pyjson.Value) bool {
	return v.Kind() == pyjson.String && v.Text() != "" && v.Text() != UniqueToken
}

// expander replaces "unique()" with generated ids, one per slot (the value's path: key, a.b, list[0]),
// reused for the whole turn, so a database_id minted by one call is the same in the next.
type expander struct {
	ids   map[string]string
	newID func() string
}

// expand returns v with every "unique()" replaced. For a create's own id keys (fresh), attempt > 0 uses
// the slot "<slot>#<attempt>", so a repeated create mints a new id while foreign keys keep theirs.
func (e *expander) expand(v pyjson.Value, prefix string, fresh map[string]bool, attempt int) pyjson.Value {
	switch v.Kind() {
	case pyjson.Object:
		members := v.Members()
		out := make([]pyjson.Member, 0, len(members))
		for _, m := range members {
			k, val := m.Key, m.Value
			slot := k
			if prefix != "" {
				slot = prefix + "." + k
			}
			if attempt > 0 && fresh[k] && isUniqueToken(val) {
				slot += "#" + strconv.Itoa(attempt)
			}
			switch val.Kind() {
			case pyjson.Object, pyjson.Array:
				val = e.expand(val, slot, fresh, attempt)
			default:
				val = e.scalar(val, slot)
			}
			out = append(out, pyjson.Member{Key: k, Value: val}) // keys of a decoded object are unique
		}
		return pyjson.ObjectValue(out)
	case pyjson.Array:
		out := make([]pyjson.Value, v.Len())
		for i, item := range v.Elems() {
			out[i] = e.expand(item, prefix+"["+strconv.Itoa(i)+"]", fresh, attempt)
		}
		return pyjson.ArrayValue(out)
	default:
		if prefix == "" {
			prefix = "value"
		}
		return e.scalar(v, prefix)
	}
}

func isUniqueToken(v pyjson.Value) bool { return v.Kind() == pyjson.String && v.Text() == UniqueToken }

func (e *expander) scalar(v pyjson.Value, slot string) pyjson.Value {
	if !isUniqueToken(v) {
		return v
	}
	id, ok := e.ids[slot]
	if !ok {
		id = e.newID()
		e.ids[slot] = id
	}
	return pyjson.StringValue(id)
}
