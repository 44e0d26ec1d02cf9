package resource

import "slices"

// Endpoint is one /v1 endpoint derived from a declaration. The API mounts
// them, the OpenAPI document describes them and the MCP bridge calls them.
type Endpoint struct {
	Method   string
	Path     string // fiber pattern: /v1/clients/:id/addresses
	Resource *Resource
	Op       Op
}

// Endpoints lists every /v1 endpoint, in declaration order. In a
// sub-resource's paths :id is the parent's id and :{IDParam} the child's.
// AdminOnly operations are not among them.
func Endpoints() []Endpoint {
	return slices.DeleteFunc(AllEndpoints(), func(e Endpoint) bool { return e.Op.AdminOnly })
}

// AllEndpoints is Endpoints with the AdminOnly operations, which the admin
// UI runs: their paths name them as /v1 would, but no route serves them.
func AllEndpoints() []Endpoint {
	var out []Endpoint
	for _, r := range All {
		base := "/v1/" + r.Name
		item := base + "/:id"
		if r.Singleton {
			item = base
		}
		if r.Parent != nil {
			base = "/v1/" + r.Parent.Resource.Name + "/:id/" + r.Parent.Segment
			item = base + "/:" + r.Parent.IDParam
		}
		for _, op := range r.Ops {
			switch op.Kind {
			case List:
				out = append(out, Endpoint{"GET", base, r, op})
			case Get:
				out = append(out, Endpoint{"GET", item, r, op})
			case Create:
				out = append(out, Endpoint{"POST", base, r, op})
			case Update:
				out = append(out, Endpoint{"PATCH", item, r, op})
			case Upsert:
				out = append(out, Endpoint{"POST", base + "/upsert", r, op})
			case Bulk:
				out = append(out, Endpoint{"POST", base + "/bulk", r, op})
			case Delete:
				out = append(out, Endpoint{"DELETE", item, r, op})
			case Action:
				out = append(out, Endpoint{"POST", item + "/" + op.Name, r, op})
			case Document:
				out = append(out, Endpoint{"GET", item + "/pdf", r, op})
			}
		}
	}
	return out
}
