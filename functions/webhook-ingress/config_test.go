package handler_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	handler "appwrite-agent/functions/webhook-ingress"
	"appwrite-agent/functions/webhook-ingress/ingress"
)

// TestDeliveryBudgetFitsTheExecution: INGRESS_BUDGET_MS is accepted up to the execution's 12 s cut less
// what scheduling a retry needs, and refused one millisecond above, with the bounds in the log.
func TestDeliveryBudgetFitsTheExecution(t *testing.T) {
	if got := time.Duration(ingress.MaxBudgetMS)*time.Millisecond + ingress.ScheduleReserve; got != ingress.ExecutionTimeout {
		t.Fatalf("max budget + schedule reserve = %v, execution timeout %v", got, ingress.ExecutionTimeout)
	}
	f := newFixture(t)
	post := func() int {
		t.Helper()
		res, err := http.Post(f.ingress.URL+"/appwrite/webhooks/x", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	t.Setenv("INGRESS_BUDGET_MS", strconv.Itoa(ingress.MaxBudgetMS))
	if code := post(); code == http.StatusServiceUnavailable {
		t.Fatalf("INGRESS_BUDGET_MS=%d refused", ingress.MaxBudgetMS)
	}
	c, err := handler.LoadConfig()
	cfg := c.Ingress
	if err != nil || cfg.Policy.Budget != 10*time.Second {
		t.Fatalf("budget %v, %v", cfg.Policy.Budget, err)
	}
	// The client's timeouts are one attempt's (each attempt has that deadline anyway), and with its header
	// timeout no shorter than its total one, safehttp sets no header timer.
	if a := cfg.Policy.AttemptTimeout; a <= 0 || cfg.HTTP.TotalTimeout != a || cfg.HTTP.HeaderTimeout != a || !cfg.HTTP.DisableCompression {
		t.Fatalf("attempt timeout %v, client %+v", a, cfg.HTTP)
	}
	t.Setenv("INGRESS_BUDGET_MS", "1500")
	c, err = handler.LoadConfig()
	if cfg = c.Ingress; err != nil || cfg.Policy.AttemptTimeout != 1500*time.Millisecond || cfg.HTTP.TotalTimeout != 1500*time.Millisecond {
		t.Fatalf("a budget under the attempt timeout: attempt %v, client total %v, %v", cfg.Policy.AttemptTimeout, cfg.HTTP.TotalTimeout, err)
	}
	t.Setenv("INGRESS_BUDGET_MS", strconv.Itoa(ingress.MaxBudgetMS))
	t.Setenv("INGRESS_BUDGET_MS", strconv.Itoa(ingress.MaxBudgetMS+1))
	if code := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("INGRESS_BUDGET_MS=%d: status %d, want 503", ingress.MaxBudgetMS+1, code)
	}
	if f.logs.count("INGRESS_BUDGET_MS must be an integer from 100 to 10000") == 0 {
		t.Fatal("the log does not give the accepted range")
	}
}

// TestPercentInTheIngressURLIsRefused: Appwrite 1.9.6 and earlier sign rawurldecode(url), later versions the
// stored url, so a webhook URL with a "%" would fail verification on one of them: the ingress refuses such a
// configuration, naming it.
func TestPercentInTheIngressURLIsRefused(t *testing.T) {
	newFixture(t)
	t.Setenv("MCP_EVENTS_INGRESS_URL", "https://ingress.example.com/a%20b")
	if _, err := handler.LoadConfig(); err == nil || !strings.Contains(err.Error(), "MCP_EVENTS_INGRESS_URL must not hold a %") {
		t.Fatalf("%v", err)
	}
}
