package browser_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"appwrite-agent/shared/devkit/browser"

	"github.com/chromedp/chromedp"
)

// TestNewRendersAndRunsScript loads a page whose script writes into the DOM, clicks a button and reads the
// result: the browser really runs.
func TestNewRendersAndRunsScript(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><p id=out>static</p>
<button id=b onclick="document.getElementById('out').textContent='clicked '+location.pathname">go</button>`))
	}))
	defer srv.Close()
	ctx := browser.New(t, 30*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/page"), chromedp.Click(chromedp.ID("b"))); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("out")))
	if err != nil {
		t.Fatal(err)
	}
	if text != "clicked /page" {
		t.Fatalf("text after the click = %q, want %q", text, "clicked /page")
	}
}
