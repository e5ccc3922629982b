package fnhttp_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"appwrite-agent/shared/fnhttp"

	"github.com/open-runtimes/types-for-go/v4/openruntimes"
)

func ExampleHealth() {
	ctx := openruntimes.NewContext(openruntimes.Logger{})
	res := fnhttp.Health(ctx, "6650f1e2a3") // the deployment's id: platform.Env.BuildID
	fmt.Println(res.StatusCode, res.Headers["content-type"], string(res.Body))
	// Output: 200 application/json {"status":"ok","build_id":"6650f1e2a3"}
}

func ExampleError() {
	ctx := openruntimes.NewContext(openruntimes.Logger{})
	res := fnhttp.Error(ctx, 400, "invalid_request", "message or attachments required")
	fmt.Println(res.StatusCode, string(res.Body))
	// Output: 400 {"error":"invalid_request","message":"message or attachments required"}
}

func TestNotFoundNamesTheRoute(t *testing.T) {
	ctx := openruntimes.NewContext(openruntimes.Logger{})
	ctx.Req.Method, ctx.Req.Path = "DELETE", "/x"
	res := fnhttp.NotFound(ctx)
	var body fnhttp.ErrorBody
	if err := json.Unmarshal(res.Body, &body); err != nil || res.StatusCode != 404 || body.Error != "not_found" || body.Message != "no route for DELETE /x" {
		t.Fatalf("%d %s %v", res.StatusCode, res.Body, err)
	}
}

func TestJSONEncodingFailureIsAJSON500(t *testing.T) {
	ctx := openruntimes.NewContext(openruntimes.Logger{})
	res := fnhttp.JSON(ctx, 200, map[string]any{"f": func() {}})
	var body fnhttp.ErrorBody
	if res.StatusCode != 500 || json.Unmarshal(res.Body, &body) != nil || body.Error != "internal" {
		t.Fatalf("%d %s", res.StatusCode, res.Body)
	}
}

func ExampleBearerToken() {
	for _, h := range []string{"Bearer abc", "bearer  abc ", "BEARER x.y.z", "Basic abc", "Bearer ", "Bearerabc", ""} {
		tok, ok := fnhttp.BearerToken(h)
		fmt.Printf("%q -> %q %v\n", h, tok, ok)
	}
	// Output:
	// "Bearer abc" -> "abc" true
	// "bearer  abc " -> "abc" true
	// "BEARER x.y.z" -> "x.y.z" true
	// "Basic abc" -> "" false
	// "Bearer " -> "" false
	// "Bearerabc" -> "" false
	// "" -> "" false
}
