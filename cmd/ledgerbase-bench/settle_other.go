//go:build !unix

package main

// settleDisk has nothing to wait for where sync(2) does not exist.
func settleDisk() {}
