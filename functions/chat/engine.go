package handler

import (
	"encoding/json"
	"net/http"
	"strconv"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/shared/awclient"

	"github.com/appwrite/sdk-for-go/client"
	"github.com/appwrite/sdk-for-go/functions"
	"github.com/appwrite/sdk-for-go/models"
)

// getEngine is GET /api/engine: whether the engine can run turns, from turn's GET /ready read as a synchronous
// execution with chat's key. It answers 200 whatever turn said (the page shows it): {"ready", "status" (turn's
// HTTP status, 0 when it could not be reached), "detail" (why it is not ready), "checks" (turn's answer)}.
func getEngine(c *call) (int, any, *apiError) {
	out := map[string]any{"ready": false, "status": 0, "detail": ""}
	// A synchronous execution: Appwrite answers once turn has (at most 30 s).
	res, err := awclient.Do(c.ctx, c.aw, awclient.Key(c.key), func(sdk client.Client) (*models.Execution, error) {
		f := functions.New(sdk)
		return f.CreateExecution(c.cfg.TurnFunction, f.WithCreateExecutionAsync(false), f.WithCreateExecutionPath("/ready"),
			f.WithCreateExecutionMethod(http.MethodGet))
	})
	if err != nil {
		out["detail"] = "The engine (function '" + c.cfg.TurnFunction + "') could not be reached: " + err.Error()
		return http.StatusOK, out, nil
	}
	out["status"] = res.ResponseStatusCode
	var checks struct {
		Ready         bool `json:"ready"`
		LLMConfigured bool `json:"llm_configured"`
	}
	raw := json.RawMessage(res.ResponseBody)
	if res.ResponseStatusCode != http.StatusOK || json.Unmarshal(raw, &checks) != nil {
		out["detail"] = "The engine answered " + strconv.Itoa(res.ResponseStatusCode) + " to /ready."
		return http.StatusOK, out, nil
	}
	out["ready"], out["checks"] = checks.Ready, raw
	if !checks.Ready {
		out["detail"] = "The engine is running but not ready"
		if !checks.LLMConfigured {
			out["detail"] = "The engine has no model key (LLM_API_KEY): set one on turn, or your own in the agent settings."
		}
	}
	return http.StatusOK, out, nil
}

// validThumbnail tells whether s is a thumbnail chat keeps: a data: URL of a JPEG, PNG or WebP image, base64,
// at most store.ThumbnailChars.
func validThumbnail(s string) bool {
	if len(s) > thumbnailMax {
		return false
	}
	for _, prefix := range []string{"data:image/jpeg;base64,", "data:image/png;base64,", "data:image/webp;base64,"} {
		if len(s) > len(prefix) && s[:len(prefix)] == prefix {
			for _, r := range s[len(prefix):] {
				if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=') {
					return false
				}
			}
			return true
		}
	}
	return false
}

const thumbnailMax = store.ThumbnailChars
