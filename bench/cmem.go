//go:build linux && cgo

package bench

/*
#include <stddef.h>
#include <malloc.h>

// c_memory fills in_use and free with glibc's mallinfo2 (every arena), returning 1, or
// returns 0 where there is no mallinfo2 (glibc before 2.33, musl).
static int c_memory(size_t *in_use, size_t *free_held) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
	*in_use = mi.uordblks + mi.hblkhd;
	*free_held = mi.fordblks;
	return 1;
#else
	return 0;
#endif
}
*/
import "C"

// cMemory returns, in MiB, what the C allocator (glibc's malloc, which SQLite's allocations go
// through) holds in use and holds free (kept in its arenas, not returned to the system), in
// every arena; ok is false where it cannot be read (no glibc 2.33 or later).
func cMemory() (inUse, free float64, ok bool) {
	var u, f C.size_t
	if C.c_memory(&u, &f) == 0 {
		return 0, 0, false
	}
	return float64(u) / (1 << 20), float64(f) / (1 << 20), true
}
