//go:build !cgo

package database

// Without cgo there is no SQLite to configure (go-sqlite3 builds a stub).
func memstatusOff() bool { return false }

func memoryCounted() int64 { return 0 }
