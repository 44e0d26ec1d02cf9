package web

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/document"
	pricing "github.com/ledgerbase/ledgerbase/api/money"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent"
)

// langNames name a document's languages in themselves.
var langNames = map[document.Lang]string{"en": "English", "fr": "Français", "ar": "العربية", "bilingual": "English + العربية"}

// langLink is a document's file in one language.
type langLink struct {
	Lang       document.Lang
	Name       string
	PDF, Print string
	Current    bool
}

// docFiles are a record's document files: its PDF and print view, in its
// default language and in each one.
type docFiles struct {
	PDF, Print string
	Langs      []langLink
}

// filesOf are the document files of record id of r; nil when r makes no
// document or the workspace's plan does not reach r.
func filesOf(ws *ent.Workspace, r *resource.Resource, id string) *docFiles {
	if _, ok := document.Kinds[r]; !ok || access.GatePlan(access.WorkspaceOf(ws), r) != nil {
		return nil
	}
	base := wsURL(ws, "records", r.Name, url.PathEscape(id))
	f := &docFiles{PDF: base + "/pdf", Print: base + "/print"}
	f.Langs = langLinks(f, "")
	return f
}

func langLinks(f *docFiles, current document.Lang) []langLink {
	var out []langLink
	for _, l := range document.Langs {
		q := "?lang=" + url.QueryEscape(string(l))
		out = append(out, langLink{Lang: l, Name: langNames[l], PDF: f.PDF + q, Print: f.Print + q, Current: l == current})
	}
	return out
}

// documentOfPage is the page's record as its document, in the lang the
// query asks for (none: the document's default).
func (u *UI) documentOfPage(c *fiber.Ctx) (*resource.Resource, *document.Doc, error) {
	r := browsableByName(c.Params("res"))
	if _, ok := document.Kinds[r]; !ok {
		return nil, nil, apierr.NotFound("document")
	}
	d, err := u.core.Document(c.UserContext(), u.principal(c), r.Name, c.Params("id"), c.Query("lang"))
	return r, d, err
}

// documentFailed answers a document that cannot be made: 404 for an
// unknown record, the API's own refusal (a language it does not know, a
// plan that does not reach it) as a page saying so.
func (u *UI) documentFailed(c *fiber.Ctx, err error) error {
	e, ok := apierr.As(err)
	switch {
	case ok && e.Status == http.StatusNotFound:
		return u.notFound(c)
	case ok && e.Status < 500:
		return u.fail(c, e.Status, "No document", gateMessage(err))
	}
	return u.internal(c, err)
}

// documentPDF serves a record's PDF: the bytes GET /v1/{res}/{id}/pdf answers.
func (u *UI) documentPDF(c *fiber.Ctx) error {
	r := browsableByName(c.Params("res"))
	if _, ok := document.Kinds[r]; !ok {
		return u.notFound(c)
	}
	name, b, err := u.core.DocumentPDF(c.UserContext(), u.principal(c), r.Name, c.Params("id"), c.Query("lang"))
	if err != nil {
		return u.documentFailed(c, err)
	}
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, `inline; filename="`+name+`"`)
	return c.Status(http.StatusOK).Send(b)
}

// printView is a document as an HTML page to print: the Doc the PDF lays
// out, with the catalogue's labels.
type printView struct {
	Doc   *document.Doc
	Back  string // the record's page
	Files *docFiles
	Logo  string // a data: URL
}

// printDocument shows a record's print view.
func (u *UI) printDocument(c *fiber.Ctx) error {
	r, d, err := u.documentOfPage(c)
	if err != nil {
		return u.documentFailed(c, err)
	}
	ws := workspaceOf(c)
	v := printView{Doc: d, Back: wsURL(ws, "records", r.Name, url.PathEscape(c.Params("id"))), Files: filesOf(ws, r, c.Params("id"))}
	v.Files.Langs = langLinks(v.Files, d.Lang)
	if d.Logo != nil && len(d.Logo.Data) > 0 {
		v.Logo = "data:" + d.Logo.MediaType + ";base64," + base64.StdEncoding.EncodeToString(d.Logo.Data)
	}
	return render(c, http.StatusOK, printPage(v))
}

// sided is a label in one of the document's languages.
type sided struct {
	Lang document.Lang
	Text string
	Dir  string
}

// label is k in each of the document's languages: one, or English and
// Arabic side by side.
func (v printView) label(k document.Label) []sided {
	var out []sided
	for _, l := range v.Doc.Lang.Sides() {
		s := sided{Lang: l, Text: l.Text(k), Dir: "ltr"}
		if l.RTL() {
			s.Dir = "rtl"
		}
		out = append(out, s)
	}
	return out
}

func (v printView) dir() string {
	if v.Doc.Lang.RTL() {
		return "rtl"
	}
	return "ltr"
}

// htmlLang is the page's language: bilingual pages start in English.
func (v printView) htmlLang() string { return string(v.Doc.Lang.Sides()[0]) }

func (v printView) amount(minor int64) string {
	return pricing.Format(minor, v.Doc.Currency, string(v.Doc.Lang))
}
func (v printView) qty(milli int64) string { return pricing.Decimal(milli, 3, string(v.Doc.Lang)) }
func (v printView) rate(bp int64) string   { return pricing.Decimal(bp, 2, string(v.Doc.Lang)) + " %" }

// prices is whether the document shows prices (a packing slip does not).
func (v printView) prices() bool { return v.Doc.Kind != document.Shipment }

func (v printView) discounts() bool {
	for _, l := range v.Doc.Lines {
		if l.DiscountBP != 0 {
			return true
		}
	}
	return false
}

// dueLabel is what a document's due date means: a quote's is how long it is valid.
func (v printView) dueLabel() document.Label {
	if v.Doc.Kind == document.Quote {
		return document.ValidUntil
	}
	return document.DueDate
}

// day is a date as the document's language writes it ("" for none).
func (v printView) day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(v.Doc.Lang.Text(document.DateLayout))
}

// buyerLabel heads the buyer: a packing slip's is where it ships.
func (v printView) buyerLabel() document.Label {
	if v.Doc.Kind == document.Shipment {
		return document.ShipTo
	}
	return document.BillTo
}

// field is a label and its value on one line as one language joins them
// (fr: "N° de TVA : …"); "" when the document shows two languages.
func (v printView) field(k document.Label, value string) string {
	if len(v.Doc.Lang.Sides()) > 1 {
		return ""
	}
	return v.Doc.Lang.Text(document.Field, v.Doc.Lang.Text(k), value)
}

func (v printView) invoice() bool { return v.Doc.Kind == document.Invoice }
