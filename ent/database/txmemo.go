package database

import (
	"sync"

	"entgo.io/ent/dialect"

	"github.com/ledgerbase/ledgerbase/ent"
)

// TxMemo keeps what a SQLite write transaction read, for the rest of that
// transaction: SQLite lets one connection write at a time, so until the
// transaction ends only its own statements change what it read, and a
// caller that updates the memo with them can skip the read next time
// (group commit runs many writes in one transaction). On PostgreSQL, whose
// writers run side by side, it keeps nothing. One slot: a value read in
// another transaction is never answered.
type TxMemo[V any] struct {
	mu   sync.Mutex
	tx   *ent.Tx
	vals map[string]V
}

// Get answers the value kept for key in tx.
func (m *TxMemo[V]) Get(d *DB, tx *ent.Tx, key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v V
	if d.Dialect == dialect.Postgres || m.tx != tx {
		return v, false
	}
	v, ok := m.vals[key]
	return v, ok
}

// Put keeps v for key in tx.
func (m *TxMemo[V]) Put(d *DB, tx *ent.Tx, key string, v V) {
	if d.Dialect == dialect.Postgres {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tx != tx {
		m.tx, m.vals = tx, map[string]V{}
	}
	m.vals[key] = v
}

// Forget drops everything kept: the caller changed what it depends on.
func (m *TxMemo[V]) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tx, m.vals = nil, nil
}
