package driver

import "testing"

// A response time counts once, in the first bucket whose bound it does not pass:
// a bound's own value is in that bucket, above the last bound in the overflow one.
func TestLatencyBucketsCountEachOnce(t *testing.T) {
	var b LatencyBuckets
	for _, us := range []int64{1, 500, 501, 10_000_000, 10_000_001} {
		b.add(us)
	}
	want := map[int]int64{0: 2, 1: 1, len(LatencyBounds) - 1: 1, len(LatencyBounds): 1}
	for i, n := range b.Counts {
		if n != want[i] {
			t.Errorf("bucket %d: %d, want %d", i, n, want[i])
		}
	}
	if b.SumMicros != 1+500+501+10_000_000+10_000_001 {
		t.Errorf("sum %d µs", b.SumMicros)
	}
	var total LatencyBuckets
	total.plus(&b)
	total.plus(&b)
	if total.Counts[0] != 4 || total.SumMicros != 2*b.SumMicros {
		t.Errorf("two shards' buckets summed: %+v", total)
	}
}

// A server's version is read the same from what it says over SQL and from what its
// binary says on the command line (an instance's record).
func TestServerOfVersionStrings(t *testing.T) {
	for version, want := range map[string][2]string{
		"PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc": {"PostgreSQL", "15.18"},
		"postgres (PostgreSQL) 13.23":       {"PostgreSQL", "13.23"},
		"MariaDB 10.11.6-MariaDB-0+deb12u1": {"MariaDB", "10.11.6"},
		"mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)": {"MariaDB", "10.11.19"},
		"SQLite 3.46.1":   {"SQLite", "3.46.1"},
		"SQL Server 2022": {"SQL Server", "2022"},
		"":                {"", ""},
	} {
		product, release := RunConfig{ServerVersion: version}.Server()
		if product != want[0] || release != want[1] {
			t.Errorf("%q: %q %q, want %q %q", version, product, release, want[0], want[1])
		}
	}
}
