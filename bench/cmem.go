//go:build linux && cgo

package bench

/*
#include <malloc.h>
*/
import "C"

// cMemory returns, in MiB, what the C allocator (glibc's malloc, which SQLite's allocations go
// through) holds in use and holds free (kept in its arenas, not returned to the system), in
// every arena; ok is false where it cannot be read.
func cMemory() (inUse, free float64, ok bool) {
	mi := C.mallinfo2()
	return float64(mi.uordblks+mi.hblkhd) / (1 << 20), float64(mi.fordblks) / (1 << 20), true
}
