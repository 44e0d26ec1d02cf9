package resource

// Lack names the first condition of a resource a workspace does not meet;
// the API's 403s and the MCP tool list both read it, so they agree.
type Lack int

const (
	Reached Lack = iota
	LacksPlan
	LacksCommerceMode
	LacksCommerceModule
)

// Lack reports what a workspace on plan p with the given commerce settings
// misses to reach r; Reached when nothing.
func (r *Resource) Lack(p Plan, commerceMode, commerceModule bool) Lack {
	switch {
	case p < r.Plan:
		return LacksPlan
	case r.Needs&CommerceMode != 0 && !commerceMode:
		return LacksCommerceMode
	case r.Needs&CommerceModule != 0 && !commerceModule:
		return LacksCommerceModule
	}
	return Reached
}

// List bounds (DESIGN.md "Lists"): the API enforces them, the OpenAPI
// document and the MCP tools state them.
const (
	DefaultLimit = 25
	MaxLimit     = 100
	MaxQLen      = 200
)
