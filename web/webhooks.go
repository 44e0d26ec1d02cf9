package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ledgerbase/ledgerbase/api"
	"github.com/ledgerbase/ledgerbase/api/apierr"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/api/webhooks"
	"github.com/ledgerbase/ledgerbase/ent"
	"github.com/ledgerbase/ledgerbase/ent/webhookendpoint"
)

// The workspace's webhook endpoints and their delivery logs. Every change
// goes through the rules /v1/webhook-endpoints applies (api/webhooks).

// deliveriesPerPage is how many deliveries an endpoint's page shows.
const deliveriesPerPage = 25

// endpointForm is what the create and edit forms hold, and the refusal to
// show by its field.
type endpointForm struct {
	URL, Description string
	Events           []string
	ErrParam, ErrMsg string
}

// errorFor is the refusal's message when it names field.
func (f endpointForm) errorFor(field string) string {
	if f.ErrParam == field {
		return f.ErrMsg
	}
	return ""
}

func (f endpointForm) has(t string) bool { return slices.Contains(f.Events, t) }

// eventGroup is the event types of one object, for the events chooser.
type eventGroup struct {
	Object string
	Types  []string
}

// eventGroups are resource.EventTypes() by object (invoice, shipment, …).
func eventGroups() []eventGroup {
	var out []eventGroup
	for _, t := range resource.EventTypes() {
		obj, _, _ := strings.Cut(t, ".")
		if len(out) == 0 || out[len(out)-1].Object != obj {
			out = append(out, eventGroup{Object: obj})
		}
		out[len(out)-1].Types = append(out[len(out)-1].Types, t)
	}
	return out
}

type webhooksData struct {
	page
	Endpoints []*ent.WebhookEndpoint
	Form      endpointForm
	Groups    []eventGroup
}

type endpointData struct {
	page
	E          *ent.WebhookEndpoint
	Secret     string // a new secret, shown once
	Form       endpointForm
	Groups     []eventGroup
	Deliveries []webhooks.Delivery
	Total      int
	Offset     int
}

func (u *UI) webhooksData(c *fiber.Ctx, f endpointForm) (webhooksData, error) {
	d := webhooksData{page: u.pageOf(c, "Webhooks", "webhooks"), Form: f, Groups: eventGroups()}
	es, err := u.db.Reader.WebhookEndpoint.Query().Where(webhookendpoint.WorkspaceID(workspaceOf(c).ID)).
		Order(ent.Desc(webhookendpoint.FieldCreatedAt), ent.Desc(webhookendpoint.FieldID)).All(c.UserContext())
	d.Endpoints = es
	return d, err
}

func (u *UI) webhooks(c *fiber.Ctx) error {
	d, err := u.webhooksData(c, endpointForm{Events: []string{"*"}})
	if err != nil {
		return u.internal(c, err)
	}
	if c.Query("deleted") != "" {
		d.Notice = "The endpoint " + c.Query("deleted") + " is deleted, with its delivery log; nothing more is sent to it."
	}
	return render(c, http.StatusOK, webhooksView(d))
}

// formChange reads the create and edit forms as the API's JSON of the
// change; the endpoints' rules then check it.
func formChange(c *fiber.Ctx) (endpointForm, map[string]any) {
	f := endpointForm{URL: strings.TrimSpace(c.FormValue("url")), Description: strings.TrimSpace(c.FormValue("description"))}
	f.Events = []string{}
	for _, v := range c.Context().PostArgs().PeekMulti("enabled_events") {
		f.Events = append(f.Events, string(v))
	}
	return f, map[string]any{"url": f.URL, "description": f.Description, "enabled_events": f.Events}
}

// refused fills the form's refusal from a rule's; other refusals are not
// the form's to show.
func (f *endpointForm) refused(e *apierr.Error) bool {
	if e.Status != http.StatusBadRequest {
		return false
	}
	f.ErrParam, f.ErrMsg = e.Param, capitalize(e.Message)+"."
	return true
}

func (u *UI) createEndpoint(c *fiber.Ctx) error {
	f, in := formChange(c)
	return u.configure(c, api.CreateEndpoint, in, wsURL(workspaceOf(c), "webhooks", "{id}")+"?done=created", func(e *apierr.Error) error {
		if !f.refused(e) {
			return u.onceFailed(c, e)
		}
		d, err := u.webhooksData(c, f)
		if err != nil {
			return u.internal(c, err)
		}
		d.Error = "The endpoint was not saved; see the field marked below."
		return render(c, http.StatusUnprocessableEntity, webhooksView(d))
	})
}

// endpointOf is the workspace's endpoint :id.
func (u *UI) endpointOf(c *fiber.Ctx) (*ent.WebhookEndpoint, error) {
	return webhooks.FindEndpoint(c.UserContext(), u.db.Reader, workspaceOf(c).ID, c.Params("id"))
}

// showEndpoint renders an endpoint's page: its settings form (f, when a
// refused edit is shown again), its actions, and its deliveries.
func (u *UI) showEndpoint(c *fiber.Ctx, status int, e *ent.WebhookEndpoint, secret string, f *endpointForm) error {
	d := endpointData{page: u.pageOf(c, "Webhook endpoint", "webhooks"), E: e, Secret: secret, Groups: eventGroups()}
	if f != nil {
		d.Form = *f
		d.Error = "The changes were not saved; see the field marked below."
	} else {
		d.Form = endpointForm{URL: e.URL, Description: e.Description, Events: webhooks.DecodeTypes(e.EnabledEvents)}
	}
	d.Offset, _ = strconv.Atoi(c.Query("offset"))
	d.Offset = max(d.Offset, 0)
	var err error
	d.Deliveries, d.Total, err = webhooks.Deliveries(c.UserContext(), u.db.Reader, e.ID, deliveriesPerPage, d.Offset)
	if err != nil {
		return u.internal(c, err)
	}
	switch c.Query("done") {
	case "saved":
		d.Notice = "Saved."
	case "disabled":
		d.Notice = "Disabled: events are no longer sent to this endpoint."
	case "enabled":
		d.Notice = "Enabled: the next events are sent to this endpoint."
	case "retry":
		d.Notice = "The delivery is sent again now; reload to see the attempt."
	case "created", "rotated":
		if d.Secret = u.takeFlash(c); d.Secret == "" {
			d.Notice = "Its signing secret was shown once, when it was made."
		}
	}
	return render(c, status, endpointView(d))
}

func (u *UI) endpointPage(c *fiber.Ctx) error {
	e, err := u.endpointOf(c)
	if err != nil {
		return u.lookupFailed(c, err)
	}
	return u.showEndpoint(c, http.StatusOK, e, "", nil)
}

// endpointWrite is a button that runs op on the workspace's endpoint :id
// and goes back to its page, saying done.
func (u *UI) endpointWrite(op api.ConfigOp, in any, done string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return u.configure(c, op, in, wsURL(workspaceOf(c), "webhooks", c.Params("id"))+"?done="+done, nil)
	}
}

func (u *UI) updateEndpoint(c *fiber.Ctx) error {
	e, err := u.endpointOf(c)
	if err != nil {
		return u.lookupFailed(c, err)
	}
	f, in := formChange(c)
	return u.configure(c, api.UpdateEndpoint, in, wsURL(workspaceOf(c), "webhooks", e.ID)+"?done=saved", func(r *apierr.Error) error {
		if !f.refused(r) {
			return u.onceFailed(c, r)
		}
		return u.showEndpoint(c, http.StatusUnprocessableEntity, e, "", &f)
	})
}

func (u *UI) deleteEndpointPage(c *fiber.Ctx) error {
	e, err := u.endpointOf(c)
	if err != nil {
		return u.lookupFailed(c, err)
	}
	d := endpointData{page: u.pageOf(c, "Delete webhook endpoint", "webhooks"), E: e}
	return render(c, http.StatusOK, deleteEndpointView(d))
}

func (u *UI) deleteEndpoint(c *fiber.Ctx) error {
	return u.configure(c, api.DeleteEndpoint, nil, wsURL(workspaceOf(c), "webhooks")+"?deleted="+url.QueryEscape(c.Params("id")), nil)
}

// attemptOutcome says how an attempt ended: the receiver's status, or why
// no answer came.
func attemptOutcome(a *ent.WebhookAttempt) string {
	if a.StatusCode != 0 {
		return statusText(a.StatusCode)
	}
	if a.Error != "" {
		return "no answer: " + a.Error
	}
	return "no answer"
}

func latency(ms int64) string { return strconv.FormatInt(ms, 10) + " ms" }

func offsetURL(ws *ent.Workspace, id string, offset int) string {
	return wsURL(ws, "webhooks", id) + "?offset=" + strconv.Itoa(offset)
}

// groupChosen tells a group whose events the form chose: it shows open.
func groupChosen(f endpointForm, g eventGroup) bool {
	return f.has(g.Object+".*") || slices.ContainsFunc(g.Types, f.has)
}
