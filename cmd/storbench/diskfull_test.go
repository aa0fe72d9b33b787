package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallDisk mounts a fresh ext4 filesystem of mb megabytes (a loop device) for the
// test and unmounts it after: a storage that fills up in seconds.
func smallDisk(t *testing.T, mb int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, int64(mb)<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := osexec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("no mkfs.ext4 here (%v: %s)", err, out)
	}
	mnt := t.TempDir()
	if out, err := osexec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a loop device here (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := osexec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}

// TestDiskFull: a build that fills its storage stops with one line naming the
// directory and its free space; nothing else on that storage is touched.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem and builds")
	}
	cases := []struct {
		name       string
		mb, whs    int
		dsn        func(t *testing.T, mnt string) string
		wantInText string
	}{
		{"sqlite", 24, 1, func(t *testing.T, mnt string) string { return "sqlite://" + filepath.Join(mnt, "tpcc.db") }, ""},
		{"postgres instance", 120, 2, func(t *testing.T, mnt string) string {
			t.Setenv("STORBENCH_HOME", t.TempDir())
			code, out, errOut := storbench(t, "instance", "create", "--path", filepath.Join(mnt, "pg"), "--name", "full")
			if code != 0 {
				t.Fatalf("instance create: exit %d\n%s%s", code, out, errOut)
			}
			t.Cleanup(func() { storbench(t, "instance", "destroy", "--name", "full") })
			for _, line := range strings.Split(out, "\n") {
				if i := strings.Index(line, "postgres://"); i >= 0 {
					return strings.Fields(line[i:])[0]
				}
			}
			t.Fatalf("no DSN in:\n%s", out)
			return ""
		}, filepath.Join("pg", "data")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mnt := smallDisk(t, c.mb)
			keep := filepath.Join(mnt, "keep-me")
			os.WriteFile(keep, []byte("the user's"), 0o644)
			dsn := c.dsn(t, mnt)
			code, out, errOut := storbench(t, "build", "--dsn", dsn, "--warehouses", fmt.Sprint(c.whs))
			if code != 1 || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 ||
				!strings.Contains(errOut, "the storage is full") || !strings.Contains(errOut, " MB free of ") || !strings.Contains(errOut, mnt) {
				t.Errorf("build on a full disk: exit %d, stderr %q\n%s", code, errOut, out)
			}
			t.Log(strings.TrimSpace(errOut))
			if c.wantInText != "" && !strings.Contains(errOut, c.wantInText) {
				t.Errorf("the message does not name %s: %s", c.wantInText, errOut)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "the user's" {
				t.Errorf("a file on the full storage was touched: %v", err)
			}
		})
	}
}
