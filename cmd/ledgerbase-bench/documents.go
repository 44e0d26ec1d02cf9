package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// documentInvoices creates the two invoices the PDF rows fetch: 3 lines
// and 200 lines (the sizes), among the seeded ones.
func documentInvoices(ctx context.Context, env *benchEnv) (short, long string, err error) {
	create := func(n int) (string, error) {
		lines := make([]map[string]any, n)
		for i := range lines {
			lines[i] = map[string]any{"description": fmt.Sprintf("Bench service %d, %s", i+1, env.nonce),
				"qty_milli": 1000 + 500*(i%3), "unit_price_cents": 1250 + 100*i, "vat_rate_bp": []int{2000, 550, 0}[i%3]}
		}
		status, b, err := env.app.api(ctx, "POST", "/v1/invoices", env.auth, map[string]any{
			"client_name": "Bench Documents " + env.nonce, "currency_code": "EUR", "lines": lines})
		if err != nil || status != 201 {
			return "", fmt.Errorf("create a %d-line invoice: %d %s %v", n, status, b, err)
		}
		var inv struct{ ID string }
		return inv.ID, json.Unmarshal(b, &inv)
	}
	if short, err = create(3); err == nil {
		long, err = create(200)
	}
	return short, long, err
}

// documentScenarios fetch the PDFs. Four connections: a few people
// downloading at once; 64 would measure the queue on the machine's cores.
func documentScenarios(env *benchEnv) []scenario {
	pdf := func(id string) *request {
		return &request{method: "GET", path: "/v1/invoices/" + id + "/pdf", auth: env.auth}
	}
	row := func(name, id, target string, ms float64) scenario {
		r := pdf(id)
		return scenario{name: name, conns: 4, probe: r, ok: status(200),
			gen: func(*rand.Rand) request { return *r }, target: target, check: p99Within(ms)}
	}
	return []scenario{
		row("invoice PDF, 3 lines", env.pdfShort, "p99 ≤ 50 ms", 50),
		row("invoice PDF, 200 lines", env.pdfLong, "p99 ≤ 500 ms", 500),
	}
}
