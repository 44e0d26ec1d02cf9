//go:build cgo

package database

/*
// sqlite3_config is compiled into the binary by mattn/go-sqlite3, whose
// header is not on this package's include path.
int sqlite3_config(int, ...);

// SQLITE_CONFIG_MEMSTATUS is 9 in sqlite3.h.
static int ledgerbase_memstatus_off(void) { return sqlite3_config(9, 0); }

// sqlite3_memory_used stays 0 while the statistics are off.
long long sqlite3_memory_used(void);
*/
import "C"

// memstatusOff stops SQLite's memory statistics, which nothing here reads:
// with them on, every allocation takes one process-wide mutex (go-sqlite3
// is not built with SQLITE_DEFAULT_MEMSTATUS=0). It must run before SQLite
// initializes; it reports false when it came too late.
func memstatusOff() bool { return C.ledgerbase_memstatus_off() == 0 }

// memoryCounted is SQLite's count of the bytes it has allocated: 0 while
// the statistics are off.
func memoryCounted() int64 { return int64(C.sqlite3_memory_used()) }
