// Package tmpfstest gives a test a small file system of its own that fills up: a tmpfs mounted
// in a temporary folder (Linux, with the privilege to mount: root or CAP_SYS_ADMIN), and a filler
// file that takes its free space.
package tmpfstest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes in a temporary folder of t's, unmounted when t ends, and
// returns the folder. It skips t, saying why, where a tmpfs cannot be mounted (not Linux, no
// privilege to mount): the disk-full tests need one.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a disk-full test mounts a tmpfs: Linux only")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := "size=" + strconv.FormatInt(size, 10) + ",mode=0700"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("a disk-full test mounts a %d-byte tmpfs, and this process may not (%v): run it as root or with CAP_SYS_ADMIN", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes the file dir/filler until the file system refuses more (ENOSPC), then gives back
// leave bytes (rounded up to whole pages), and returns the filler's path: removing it frees the
// space again.
func Fill(t testing.TB, dir string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for _, chunk := range []int{64 << 10, 4 << 10, 512, 1} {
		for {
			if _, err := f.Write(buf[:chunk]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
	if leave > 0 {
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		page := int64(os.Getpagesize())
		if err := f.Truncate(max(st.Size()-(leave+page-1)/page*page, 0)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// Free reports the bytes free on the file system holding dir.
func Free(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}
