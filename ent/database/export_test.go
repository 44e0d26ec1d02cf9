package database

// Checkpointing reports whether the background checkpointer runs.
func (d *DB) Checkpointing() bool { return d.ckpt != nil }

// DataVersionQueries is how many times DataVersion asked SQLite, rather
// than finding the WAL index unchanged since its last reading.
func (d *DB) DataVersionQueries() int64 { return d.dv.asked.Load() }

// DataVersionMapped reports whether the WAL index's header is mapped.
func (d *DB) DataVersionMapped() bool { return d.dv.wal != nil }

// SQLiteMemoryCounted is SQLite's count of its allocated bytes (0 while its
// memory statistics are off), and whether they were switched off at start.
func SQLiteMemoryCounted() (int64, bool) { return memoryCounted(), memstatus }
