package mcperr_test

import (
	"errors"
	"fmt"
	"testing"

	"appwrite-agent/functions/mcp-events/mcperr"
)

func TestNumberings(t *testing.T) {
	for _, c := range []struct {
		n    mcperr.Numbering
		k    mcperr.Kind
		code int
	}{
		{mcperr.Sketch, mcperr.NotFound, -32011}, {mcperr.Sketch, mcperr.Forbidden, -32012},
		{mcperr.Sketch, mcperr.ResourceExhausted, -32013}, {mcperr.Sketch, mcperr.Unsupported, -32014},
		{mcperr.Sketch, mcperr.CallbackEndpointError, -32015}, {mcperr.SEP, mcperr.NotFound, -32023},
		{mcperr.SEP, mcperr.Forbidden, -32024}, {mcperr.SEP, mcperr.ResourceExhausted, -32025},
		{mcperr.SEP, mcperr.Unsupported, -32026}, {mcperr.SEP, mcperr.CallbackEndpointError, -32027},
		{mcperr.SEP, mcperr.InvalidParams, -32602}, {mcperr.Sketch, mcperr.Internal, -32603},
	} {
		if got := c.n.Code(c.k); got != c.code {
			t.Errorf("%s %s = %d, want %d", c.n.Name, c.k, got, c.code)
		}
	}
	if e := mcperr.As(errors.New("secret detail")); e.Kind != mcperr.Internal || e.Message != "internal error" {
		t.Fatalf("%+v", e)
	}
}

func ExampleNumbering_Wire() {
	e := mcperr.Callback(mcperr.ReasonTimeout, "callback verification failed: %s", "timeout")
	w := mcperr.Sketch.Wire(e)
	fmt.Println(w.Code, w.Message, w.Data["reason"])
	// Output: -32015 callback verification failed: timeout timeout
}
