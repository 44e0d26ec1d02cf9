package api

import (
	"bytes"
	"context"
	"strings"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/document"
)

// DocumentPDF is Document as the PDF a business sends, and the name it is
// saved under (INV-000042.pdf).
func (c *Core) DocumentPDF(ctx context.Context, p *access.Principal, res, id, lang string) (string, []byte, error) {
	d, err := c.Document(ctx, p, res, id, lang)
	if err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	if err := document.WritePDF(&b, d); err != nil {
		return "", nil, apierr.Internal(err)
	}
	return fileName(d.Number, id) + ".pdf", b.Bytes(), nil
}

// fileName keeps a document's number to what a file name may safely hold
// everywhere (a number is free text: "2026/17" must not make a path).
func fileName(number, id string) string {
	out := []rune{}
	for _, r := range number {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			out = append(out, r)
		case len(out) > 0 && out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	if s := strings.Trim(string(out), "-."); s != "" {
		return s
	}
	return id
}
