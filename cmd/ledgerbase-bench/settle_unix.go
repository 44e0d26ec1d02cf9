//go:build unix

package main

import "syscall"

// settleDisk waits until the kernel has written every dirty page back.
func settleDisk() { syscall.Sync() }
