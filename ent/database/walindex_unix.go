//go:build unix

package database

import (
	"encoding/binary"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// walIndex maps the header of a SQLite file's WAL index (the -shm file),
// read only. Its layout is part of SQLite's documented file format
// (https://sqlite.org/walformat.html, "The WAL-Index Header"): two copies
// of a 48-byte header, which a writer updates on every commit — the second
// copy first, then the first — and which readers of every process compare
// to learn whether anything changed. PRAGMA data_version starts a read
// transaction to do the same comparison.
type walIndex struct{ mem []byte }

// walHeader is one copy of the header, as native-endian words.
type walHeader [walHeaderSize / 4]uint32

const walHeaderSize = 48

var errNoWALIndex = errors.New("database: no WAL index to map")

// mapWALIndex maps the WAL index of the database at path. The mapping is
// valid while a connection to the file stays open: only a process that
// finds no other connection resets the file (truncates it, which would make
// reading the mapping fault), and SQLite unlinks it rather than truncating
// it when the last connection closes.
func mapWALIndex(path string) (*walIndex, error) {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < 2*walHeaderSize {
		return nil, errNoWALIndex
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 2*walHeaderSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &walIndex{mem: mem}, nil
}

// header is the WAL index's current header; ok is false while a writer is
// updating it (the copies differ) or before it was first written.
func (w *walIndex) header() (h walHeader, ok bool) {
	// Word by word with atomic loads: another process writes this memory,
	// and the loads must neither be torn nor reordered. The first copy is
	// read first, as SQLite's readers do (the writer writes it last).
	p := unsafe.Pointer(unsafe.SliceData(w.mem))
	var second walHeader
	for i := range h {
		h[i] = atomic.LoadUint32((*uint32)(unsafe.Add(p, 4*i)))
	}
	for i := range second {
		second[i] = atomic.LoadUint32((*uint32)(unsafe.Add(p, walHeaderSize+4*i)))
	}
	var w3 [4]byte // isInit is the byte at offset 12
	binary.NativeEndian.PutUint32(w3[:], h[3])
	return h, h == second && w3[0] != 0
}

func (w *walIndex) unmap() { _ = syscall.Munmap(w.mem) }
