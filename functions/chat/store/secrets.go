package store

import (
	"errors"
	"fmt"
	"strings"

	"appwrite-agent/shared/seal"
)

// The secrets a user gives chat (their model API key, their MCP servers' OAuth tokens and client
// registrations) are sealed with chat's keys (CHAT_SEAL_KEYS, shared/seal's AES-256-GCM blobs) before they are
// stored, so a database export, a backup or any API key with rows.read reveals none of them. Each is bound to
// its column and to its owner (and connection): a sealed value copied into another user's row does not open.
// They are opened only to send a turn.

// sealedPrefix marks a sealed column. A value without it was written before secrets were sealed: it is read
// as it is, and sealed on the row's next write.
const sealedPrefix = "sealed:"

// Purposes of the sealed columns.
const (
	purposeAPIKey     = "chat/settings/api_key"
	purposeTokens     = "chat/mcp_connections/tokens"
	purposeClientInfo = "chat/mcp_connections/client_info"
)

// ErrNoSealKeys is a secret to store or to open while chat has no sealing keys (CHAT_SEAL_KEYS).
var ErrNoSealKeys = errors.New("CHAT_SEAL_KEYS is not set (or not valid): chat does not keep secrets without its sealing keys")

// sealSecret seals v for purpose and its owner parts; "" stays "".
func (s *Store) sealSecret(v, purpose string, owner ...string) (string, error) {
	if v == "" {
		return "", nil
	}
	if s.secrets == nil {
		return "", ErrNoSealKeys
	}
	b, err := s.secrets.SealBlob(purpose+"\x00"+strings.Join(owner, "\x00"), []byte(v))
	if err != nil {
		return "", fmt.Errorf("sealing %s: %w", purpose, err)
	}
	return sealedPrefix + b, nil
}

// openSecret reverses sealSecret; a value written before secrets were sealed comes back as it is.
func (s *Store) openSecret(v, purpose string, owner ...string) (string, error) {
	b, ok := strings.CutPrefix(v, sealedPrefix)
	if !ok {
		return v, nil
	}
	if s.secrets == nil {
		return "", ErrNoSealKeys
	}
	pt, err := s.secrets.OpenBlob(purpose+"\x00"+strings.Join(owner, "\x00"), b)
	if err != nil {
		if errors.Is(err, seal.ErrUnknownKey) {
			return "", fmt.Errorf("the stored %s was sealed with a key CHAT_SEAL_KEYS no longer lists: %w", purpose, err)
		}
		return "", fmt.Errorf("the stored %s does not open (tampered, or moved from another row): %w", purpose, err)
	}
	return string(pt), nil
}
