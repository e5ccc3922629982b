// Package turncontract holds the rules of the turn function's request (docs/turn.md) that its callers keep
// to as well: turn enforces them, chat (functions/chat/turns) sends within them. One definition, so the two
// cannot drift apart.
package turncontract

import (
	"regexp"
	"sync"
)

// HistoryWindow is how many history messages (not turns) a turn keeps: the last 12, as the reference
// engine does.
const HistoryWindow = 12

// MaxMemories is how many memories one turn request may carry: turn refuses a request with more.
const MaxMemories = 200

// turnID is what a turn id must match, compiled on first use.
var turnID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$`) })

// ValidTurnID reports whether id is usable as a turn id (progress.turn_id: in progress rows and webhook
// ids): 1 to 36 characters of A-Z, a-z, 0-9, _ and -, not starting with _ or -.
func ValidTurnID(id string) bool { return turnID().MatchString(id) }
