package rest

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
)

// pdf serves a document's PDF (GET /v1/invoices/{id}/pdf): read as the
// record's GET is, with lang its one parameter.
func (s *Server) pdf(r *resource.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		lang := ""
		var unknown string
		c.Context().QueryArgs().VisitAll(func(k, v []byte) {
			switch string(k) {
			case "lang":
				lang = string(v)
			default:
				if unknown == "" {
					unknown = string(k)
				}
			}
		})
		if unknown != "" {
			return apierr.Invalid(unknown, "unknown query parameter %q; a document takes lang only", unknown)
		}
		name, b, err := s.DocumentPDF(c.UserContext(), Principal(c), r.Name, c.Params("id"), lang)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, "application/pdf")
		c.Set(fiber.HeaderContentDisposition, `inline; filename="`+name+`"`)
		return c.Status(fiber.StatusOK).Send(b)
	}
}
