package localappwrite

import (
	"encoding/json"
	"net/url"
	"testing"
)

// FuzzRealtimeMessage: any client message gets a well-formed answer (or none), never a panic, and a
// connection's subscriptions stay usable.
func FuzzRealtimeMessage(f *testing.F) {
	for _, s := range []string{`{"type":"ping"}`, `{"type":"authentication","data":{"session":"eyJpZCI6ImEifQ=="}}`,
		`{"type":"subscribe","data":[{"channels":["rows"],"queries":["{\"method\":\"and\",\"values\":[{\"method\":\"equal\",\"attribute\":\"a\",\"values\":[1]}]}"]}]}`,
		`{"type":"unsubscribe","data":[{"subscriptionId":"x"}]}`, `{"data":1}`, `[]`, `{"type":7}`} {
		f.Add([]byte(s))
	}
	s := New(Options{Logf: func(string, ...any) {}})
	defer s.Close()
	_ = s.SeedProject(ProjectSpec{ID: "p"})
	f.Fuzz(func(t *testing.T, msg []byte) {
		c := &rtConn{projectID: "p", roles: []string{"guests"}, out: make(chan []byte, 4)}
		reply, _ := s.realtimeMessage(c, msg)
		if reply != nil && !json.Valid(reply) {
			t.Fatalf("reply %q", reply)
		}
		for _, sub := range c.subs {
			sub.matches(map[string]any{"a": 1.0, "turn_id": "t"})
		}
	})
}

// FuzzConstructSubscriptions: any connect query string gives subscriptions or an error, never a panic.
func FuzzConstructSubscriptions(f *testing.F) {
	f.Add("channels[]=rows&rows[]=" + url.QueryEscape(`{"method":"equal","attribute":"x","values":["y"]}`))
	f.Add("channels[]=a.b&a_b[0][]=" + url.QueryEscape(`{"method":"select","values":["*"]}`) + "&a_b[2][]=x")
	f.Add("channels[]=account&channels[]=account.x&project=p")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		slots, err := constructSubscriptions(convertChannels(q["channels[]"], "u"), q)
		if err != nil {
			return
		}
		for _, sl := range slots {
			if len(sl.channels) == 0 {
				t.Fatalf("a subscription without channels from %q", raw)
			}
		}
	})
}
