package webtest_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/demo"
	"github.com/ledgerbase/ledgerbase/ent/invoice"
	"github.com/ledgerbase/ledgerbase/ent/salesorder"
	"github.com/ledgerbase/ledgerbase/web/webtest"
)

// TestDashboardAndDocumentsInABrowser opens the dashboard, an invoice and
// an order at desktop and phone widths, follows a figure to its list, and
// saves the screenshots the README shows
// (LEDGERBASE_SCREENSHOTS=<repo>/docs/screenshots to refresh them).
func TestDashboardAndDocumentsInABrowser(t *testing.T) {
	ctx := browser(t)
	env := webtest.Start(t)
	b := &tab{t: t, ctx: ctx, env: env}
	ws := env.Workspace(t, "business", true, true)
	if err := env.DB.Writer.Workspace.UpdateOneID(ws.ID).SetName("Northwind Supplies").Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := demo.Seed(t.Context(), env.DB, ws.ID, demo.Options{Invoices: 600, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	inv, err := env.DB.Writer.Invoice.Query().Where(invoice.WorkspaceID(ws.ID), invoice.StatusEQ(invoice.StatusPartiallyPaid)).
		Order(ent.Desc(invoice.FieldCreatedAt)).First(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	so, err := env.DB.Writer.SalesOrder.Query().Where(salesorder.WorkspaceID(ws.ID), salesorder.StatusEQ(salesorder.StatusPartiallyShipped)).
		Order(ent.Desc(salesorder.FieldCreatedAt)).First(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w := "/admin/w/" + ws.ID

	email := webtest.NewAdmin(t, env) // before the first page: with no admin it would offer the setup
	b.open("/admin/login")
	b.fill("#email", email)
	b.fill("#password", webtest.Password)
	b.submit(`button[type=submit]`)
	b.waitText("Create a workspace")

	shoot := func(suffix string, full bool) {
		b.open(w)
		b.waitText("Overdue invoices by days past due")
		b.waitText("Sales invoiced per month")
		b.screenshot("dashboard"+suffix+".png", full)
		b.open(w + "/records/invoices/" + inv.ID)
		b.waitText("Invoice " + inv.Number)
		b.waitText("Remaining")
		b.screenshot("invoice"+suffix+".png", full)
		b.open(w + "/records/sales-orders/" + so.ID)
		b.waitText("Sales order " + so.Number)
		b.waitText("Shipments")
		b.screenshot("order"+suffix+".png", full)
	}
	shoot("", true)

	// A figure opens the list of exactly its records: the overdue card's
	// count is the list's total.
	b.open(w)
	count := b.text(`a.card.figure[href*="status=overdue"] .label:last-child`)
	n, _, _ := strings.Cut(count, " ")
	b.submit(`a.card.figure[href*="status=overdue"]`)
	b.waitText("of " + n)
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("#f-status").selectedOptions[0].textContent`))
	if err != nil || got != "Overdue" {
		t.Fatalf("the overdue list's status filter shows %q", got)
	}
	// A bar of the chart opens its month's invoices.
	b.open(w)
	b.submit(`svg a:last-of-type`)
	if !strings.Contains(b.location(), "date_from=") {
		t.Fatalf("the chart's bar led to %s", b.location())
	}

	b.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	shoot("-phone", true)
	b.do("laptop viewport", chromedp.ResetViewport())
}
