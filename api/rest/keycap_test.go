package rest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ledgerbase/ledgerbase/api/access"
	"github.com/ledgerbase/ledgerbase/api/apitest"
	"github.com/ledgerbase/ledgerbase/api/resource"
	"github.com/ledgerbase/ledgerbase/ent/apikey"
	"github.com/ledgerbase/ledgerbase/ent/workspace"
)

// The spec (section 8): the business plan raises the cap on API keys.
func TestActiveKeysAreCappedByPlan(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ws := env.Workspace(t, "starter", false, false) // holds one admin key already
	ctx := t.Context()
	starter := access.KeyCaps[resource.Starter]
	if business := access.KeyCaps[resource.Business]; business <= starter {
		t.Fatalf("business cap %d is not above starter's %d", business, starter)
	}
	// An expired key does not count.
	if _, _, err := access.NewKey(ctx, env.DB.Writer, access.KeySpec{WorkspaceID: ws.ID, ExpiresIn: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	for i := 1; i < starter; i++ {
		if _, _, err := access.NewKey(ctx, env.DB.Writer, access.KeySpec{WorkspaceID: ws.ID}); err != nil {
			t.Fatalf("key %d of %d: %v", i+1, starter, err)
		}
	}
	_, _, err := access.NewKey(ctx, env.DB.Writer, access.KeySpec{WorkspaceID: ws.ID})
	var capped *access.KeyCapError
	if !errors.As(err, &capped) || capped.Cap != starter {
		t.Fatalf("key beyond the starter cap: %v", err)
	}
	// Revoking one frees its place. (One that counts: the expired key is
	// unrevoked too, and First has no order, so PostgreSQL sometimes
	// picked it, and revoking it frees nothing.)
	k, err := env.DB.Writer.APIKey.Query().Where(apikey.WorkspaceID(ws.ID), apikey.RevokedAtIsNil(), apikey.ExpiresAtIsNil()).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := access.RevokeKey(ctx, env.DB.Writer, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := access.NewKey(ctx, env.DB.Writer, access.KeySpec{WorkspaceID: ws.ID}); err != nil {
		t.Fatalf("after a revoke: %v", err)
	}
	// The business plan allows more.
	if err := env.DB.Writer.Workspace.UpdateOneID(ws.ID).SetPlan(workspace.PlanBusiness).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := access.NewKey(ctx, env.DB.Writer, access.KeySpec{WorkspaceID: ws.ID}); err != nil {
		t.Fatalf("on business: %v", err)
	}
}
