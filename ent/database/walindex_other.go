//go:build !unix

package database

import "errors"

// Without mmap, every data-version reading asks SQLite (see dataversion.go).
type walIndex struct{}

type walHeader [12]uint32

func mapWALIndex(string) (*walIndex, error) {
	return nil, errors.New("database: no WAL index mapping here")
}

func (w *walIndex) header() (walHeader, bool) { return walHeader{}, false }

func (w *walIndex) unmap() {}
