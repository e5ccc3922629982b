package mcptools

import (
	"encoding/json"

	"appwrite-agent/shared/pyjson"
)

// The guard works on JSON values the reference's way, as Python's json module decodes them
// (shared/pyjson): objects keep their key order, as Python dicts do (the write guard's "first key ending
// in _id" and the arguments forwarded to the server depend on it), and numbers are Python ints and floats.

// parseJSON decodes a JSON text, keeping the order of object members (pyjson.Decode).
func parseJSON(data []byte) (pyjson.Value, error) {
	return pyjson.Decode(string(data))
}

// compactJSON is json.dumps(v, separators=(",", ":")): compact, keys in order, non-ASCII escaped.
func compactJSON(v pyjson.Value) string { return pyjson.Dumps(v, true) }

// toJSON is json.dumps(v, separators=(",", ":"), ensure_ascii=False), the arguments sent to a server.
func toJSON(v pyjson.Value) json.RawMessage { return pyjson.AppendDumps(nil, v, false) }
