package api

import (
	"errors"
	"io"

	"github.com/ledgerbase/ledgerbase/api/document"
)

// writePDF lays a document out as a PDF: document.WritePDF.
var writePDF = func(io.Writer, *document.Doc) error { return errors.New("api: no PDF writer in this build") }
