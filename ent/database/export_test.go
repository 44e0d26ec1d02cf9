package database

// SQLiteMemoryCounted is SQLite's count of its allocated bytes (0 while its
// memory statistics are off), and whether they were switched off at start.
func SQLiteMemoryCounted() (int64, bool) { return memoryCounted(), memstatus }

// QueuedWrites is how many InTx calls wait for the writer's turn (SQLite).
func (d *DB) QueuedWrites() int32 { return d.batch.waiting.Load() }
