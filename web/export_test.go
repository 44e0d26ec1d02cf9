package web

// SetExportFlushed makes every CSV export call f after each batch it
// wrote and flushed to the client (nil: none); tests see the stream.
func SetExportFlushed(f func(rows int)) { exportFlushed = f }
