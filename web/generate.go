// Package web is the admin UI: server-rendered templ pages under /admin,
// served by the same fiber app as /v1 and sharing its data layer, its key
// and role functions (api/access) and its read engine (api/records).
package web

//go:generate go tool templ generate
