package subscriptions

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"

	"appwrite-agent/functions/mcp-events/mcperr"
	"appwrite-agent/shared/safehttp"
	"appwrite-agent/shared/stdwebhooks"
)

// HeaderSubscriptionID is the MCP-specific header of every delivery and control envelope.
const HeaderSubscriptionID = "X-MCP-Subscription-Id"

// maxChallengeAnswer bounds the body read from a verification answer.
const maxChallengeAnswer = 64 << 10

// Challenge is the body of a verification control envelope.
type Challenge struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// verifyCallback POSTs a signed verification envelope to the callback URL through the SSRF-safe client and
// requires a 2xx answer echoing the challenge. Failures are CallbackEndpointError with data.reason.
func (s *Service) verifyCallback(ctx context.Context, pr *prepared, secret stdwebhooks.Secret) *mcperr.Error {
	ctx, cancel := context.WithTimeout(ctx, s.o.ChallengeTimeout)
	defer cancel()
	nonce := randomHex(24)
	body, _ := json.Marshal(Challenge{Type: "verification", Challenge: nonce})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, pr.url, bytes.NewReader(body))
	if err != nil {
		return mcperr.Invalid("delivery.url", "delivery.url: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "appwrite-mcp-events")
	req.Header.Set(HeaderSubscriptionID, pr.id)
	if err := stdwebhooks.SetHeaders(req.Header, "msg_verification_"+randomHex(12), s.o.Now(), body, secret); err != nil {
		return mcperr.As(err)
	}
	resp, err := s.o.Callback.Do(req)
	if err != nil {
		reason := safehttp.Classify(err, nil).MCP()
		if ctx.Err() != nil {
			reason = mcperr.ReasonTimeout
		}
		return mcperr.Callback(reason, "callback verification failed: %s", reason)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxChallengeAnswer))
	if r := safehttp.Classify(rerr, resp); r != safehttp.ReasonOK {
		reason := r.MCP()
		return mcperr.Callback(reason, "callback verification failed: %s", reason)
	}
	var answer struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(data, &answer) != nil || subtle.ConstantTimeCompare([]byte(answer.Challenge), []byte(nonce)) != 1 {
		return mcperr.Callback(mcperr.ReasonChallengeFailed,
			"callback verification failed: the endpoint answered without echoing the challenge")
	}
	return nil
}
