// Package browser starts a real headless Chromium for page tests, driven through the DevTools protocol by
// github.com/chromedp/chromedp.
//
// The browser is Debian's `chromium` package, which scripts/test installs when it is missing
// (scripts/install-chromium). When it cannot be found, New skips the test and says why, so a machine without it
// still runs the rest of the suite and the reason is printed in the test's output.
//
// Chromium starts with the flags this machine's closed network needs: no background networking, no component
// updates, no sync, no first-run (without them it keeps trying to reach Google's hosts), in a new empty
// profile per test.
//
// chromedp v0.23 types its actions: chromedp.Do(ctx, steps...) runs actions that return nothing
// (Navigate, Click, WaitVisible, and this package's Type), and chromedp.Run(ctx, action) runs one that returns a value
// (Text, Value, Evaluate[T], FullScreenshot). Selectors are typed: chromedp.ID("x"), chromedp.CSS("form button").
package browser

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvPath names a Chromium binary to use instead of the one found on the PATH.
const EnvPath = "CHROMIUM_PATH"

// Find returns the path of the Chromium binary: EnvPath when set, else `chromium` or `chromium-browser` on the
// PATH. The error says what was looked for.
func Find() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", errors.New("browser: " + EnvPath + "=" + p + ": " + err.Error())
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("browser: no chromium on the PATH (scripts/test installs Debian's chromium package; set " + EnvPath + " to use another)")
}

// New starts a headless Chromium for the test and returns a chromedp context of its first tab, bounded by
// timeout. The browser and its profile are removed when the test ends. Without a browser the test is skipped
// with the reason.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path, err := Find()
	if err != nil {
		t.Skip(err.Error())
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so a browser that cannot start fails here with its own error.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browser: starting %s: %v", path, err)
	}
	return ctx
}

// Type focuses the first element sel selects and types text into it as key events (kb's special keys, such
// as kb.Enter or kb.Backspace, included). Tests use it in place of chromedp.SendKeys, which reads the element's
// attributes before taking the element's lock (chromedp v0.23.0, query.go:1293) and so races, under -race,
// with the DOM events a live page sends while the keys are typed.
func Type[S chromedp.Selectable](sel S, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(sel, chromedp.NodeVisible), chromedp.KeyEvent(text))
}

// Screenshot saves a PNG of the whole page to path (creating its folder), for documentation images.
func Screenshot(ctx context.Context, path string) error {
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf, 0o644)
}
