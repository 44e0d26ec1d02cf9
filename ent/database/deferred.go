package database

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/ledgerbase/ledgerbase/ent"
)

// Deferred is what writes leave to the end of their transaction (done once
// for all writes of a group commit): each write adds to its transaction's
// T, and flush gets it once, just before COMMIT; if flush fails the
// transaction is undone (ErrBatchLost). An undone transaction drops its T.
type Deferred[T any] struct {
	flush func(tx *ent.Tx, v *T) error
	mu    sync.Mutex
	open  map[*ent.Tx]*T
}

// NewDeferred returns a Deferred whose transactions' T are given to flush.
func NewDeferred[T any](flush func(tx *ent.Tx, v *T) error) *Deferred[T] {
	return &Deferred[T]{flush: flush, open: map[*ent.Tx]*T{}}
}

// In is tx's T (a transaction of d's writer), made on first use. Writes
// sharing tx take turns, so they never use it at the same time.
func (f *Deferred[T]) In(d *DB, tx *ent.Tx) *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.open[tx]; ok {
		return v
	}
	v := new(T)
	f.open[tx] = v
	d.ends.add(tx, func(commit bool) error {
		f.mu.Lock()
		delete(f.open, tx)
		f.mu.Unlock()
		if !commit {
			return nil
		}
		return f.flush(tx, v)
	})
	return v
}

// ends are the open transactions' end hooks (Deferred.In).
type ends struct {
	mu sync.Mutex
	m  map[*ent.Tx][]func(commit bool) error
}

func (e *ends) add(tx *ent.Tx, fn func(commit bool) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[*ent.Tx][]func(bool) error{}
	}
	e.m[tx] = append(e.m[tx], fn)
}

// end runs tx's hooks once: with commit set, just before it commits (an
// error stops there and drops the rest: the caller undoes tx); unset, after
// it was undone.
func (e *ends) end(tx *ent.Tx, commit bool) error {
	e.mu.Lock()
	fns := e.m[tx]
	delete(e.m, tx)
	e.mu.Unlock()
	for i, fn := range fns {
		if err := endHook(fn, commit); err != nil && commit {
			for _, rest := range fns[i+1:] {
				_ = endHook(rest, false)
			}
			return err
		}
	}
	return nil
}

// endHook runs one hook; its panic is its error: a group commit's end runs
// outside any write, where a panic would leave the writer's turn taken.
func endHook(fn func(commit bool) error, commit bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("database: the work left to the end of a transaction panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("database: the work left to the end of a transaction panicked: %v", r)
		}
	}()
	return fn(commit)
}
