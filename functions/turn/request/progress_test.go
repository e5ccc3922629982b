package request

import (
	"appwrite-agent/shared/turnrequest"
	"encoding/json"
	"strings"
	"testing"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestParseProgress(t *testing.T) {
	ok := []struct{ body, turnID string }{
		{`{"message":"m","progress":{"realtime":true}}`, ""},
		{`{"message":"m","async":true,"progress":{"realtime":true,"turn_id":"t-1_A"}}`, "t-1_A"},
		{`{"message":"m","progress":{"webhook":{"url":" https://example.com/h ","secret":"` + testSecret + `"}}}`, ""},
	}
	for _, c := range ok {
		turn, err := Parse([]byte(c.body), Limits{})
		if err != nil || !turn.Progress.Any() || turn.Progress.TurnID != c.turnID {
			t.Fatalf("%s: %+v %v", c.body, turn.Progress, err)
		}
	}
	turn, _ := Parse([]byte(`{"message":"m","progress":{"webhook":{"url":"https://example.com/h","secret":"`+testSecret+`"}}}`), Limits{})
	if w := turn.Progress.Webhook; w == nil || w.URL != "https://example.com/h" || len(w.Secret) != 24 {
		t.Fatalf("%+v", w)
	}
	if turn, err := Parse([]byte(`{"message":"m"}`), Limits{}); err != nil || turn.Progress != nil || turn.Progress.Any() {
		t.Fatalf("no progress: %+v %v", turn.Progress, err)
	}
	bad := map[string]string{
		`{"message":"m","async":true}`:                                                                       MsgAsyncNeedsSink,
		`{"message":"m","async":true,"progress":{"realtime":false}}`:                                         MsgAsyncNeedsSink,
		`{"message":"m","progress":{}}`:                                                                      MsgProgressEmpty,
		`{"message":"m","progress":{"realtime":true,"turn_id":"-x"}}`:                                        MsgTurnID,
		`{"message":"m","progress":{"realtime":true,"turn_id":"` + strings.Repeat("a", 37) + `"}}`:           MsgTurnID,
		`{"message":"m","progress":{"webhook":{"url":"ftp://x/h","secret":"` + testSecret + `"}}}`:           MsgWebhookURL,
		`{"message":"m","progress":{"webhook":{"url":"https:///h","secret":"` + testSecret + `"}}}`:          MsgWebhookURL,
		`{"message":"m","progress":{"webhook":{"url":"https://u:p@x.com/h","secret":"` + testSecret + `"}}}`: MsgWebhookURL,
		`{"message":"m","progress":{"webhook":{"url":"https://x.com/h"}}}`:                                   MsgWebhookNoSecret,
		`{"message":"m","progress":{"webhook":{"url":"https://x.com/h","secret":"whsec_!!"}}}`:               MsgWebhookSecret,
	}
	for body, want := range bad {
		_, err := Parse([]byte(body), Limits{})
		if err == nil || err.Status != 422 || err.Message != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// FuzzParseProgress: any progress field either parses into a usable sink set or is refused with a 4xx;
// it never panics, and an accepted webhook always has an http(s) URL and a valid secret.
func FuzzParseProgress(f *testing.F) {
	f.Add(`{"realtime":true,"turn_id":"abc"}`, false)
	f.Add(`{"webhook":{"url":"https://example.com/h","secret":"`+testSecret+`"}}`, true)
	f.Add(`{"webhook":{"url":"http://[::1]:80/h","secret":"whsec_"}}`, true)
	f.Add(`{"turn_id":"","realtime":false}`, false)
	f.Fuzz(func(t *testing.T, progress string, async bool) {
		body, _ := json.Marshal(map[string]any{"message": "m", "async": async, "progress": json.RawMessage(progress)})
		if !json.Valid([]byte(progress)) {
			return
		}
		turn, err := Parse(body, Limits{})
		if err != nil {
			if err.Status < 400 || err.Status >= 500 {
				t.Fatalf("status %d", err.Status)
			}
			return
		}
		if async && !turn.Progress.Any() {
			t.Fatal("async accepted without a sink")
		}
		if p := turn.Progress; p != nil {
			if p.TurnID != "" && !turnrequest.ValidTurnID(p.TurnID) {
				t.Fatalf("turn id %q", p.TurnID)
			}
			if w := p.Webhook; w != nil && (!w.Secret.Valid() || !(strings.HasPrefix(w.URL, "https://") || strings.HasPrefix(w.URL, "http://"))) {
				t.Fatalf("webhook %+v", w)
			}
		}
	})
}
