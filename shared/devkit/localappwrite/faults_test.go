package localappwrite

import (
	"testing"

	"github.com/appwrite/sdk-for-go/functions"
)

// TestFailRequests: an injected fault answers the next matching requests with Appwrite's 500 and does
// nothing; other requests and later ones are served.
func TestFailRequests(t *testing.T) {
	f := newFixture(t, Options{})
	f.s.FailRequests("POST", "/v1/functions", 1)
	fs := functions.New(f.sdk(f.key))
	_, err := fs.Create("fn", "Function", "go-1.26")
	wantAPIError(t, err, 500, ErrGeneralServerError, "An internal server error occurred.")
	if _, err := fs.Get("fn"); appwriteType(err) != ErrFunctionNotFound {
		t.Fatalf("the failed create made the function: %v", err)
	}
	if _, err := fs.Create("fn", "Function", "go-1.26"); err != nil {
		t.Fatalf("the second create: %v", err)
	}
}
