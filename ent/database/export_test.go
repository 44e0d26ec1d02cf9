package database

// Checkpointing reports whether the background checkpointer runs.
func (d *DB) Checkpointing() bool { return d.ckpt != nil }
