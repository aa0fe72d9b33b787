package tpcc

import "testing"

func TestLastName(t *testing.T) {
	// 4.3.2.3: one syllable per digit of a three-digit number.
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "BARBARBAR"},
		{1, "BARBAROUGHT"},
		{9, "BARBAREING"},
		{10, "BAROUGHTBAR"},
		{100, "OUGHTBARBAR"},
		{123, "OUGHTABLEPRI"},
		{371, "PRICALLYOUGHT"},
		{456, "PRESESEANTI"},
		{789, "CALLYATIONEING"},
		{999, "EINGEINGEING"},
	} {
		if got := LastName(tc.n); got != tc.want {
			t.Errorf("LastName(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if got := string(AppendLastName([]byte("c_last="), tc.n)); got != "c_last="+tc.want {
			t.Errorf("AppendLastName(%d) = %q, want %q", tc.n, got, "c_last="+tc.want)
		}
	}
}

func TestLastNamesDistinct(t *testing.T) {
	// Every number gives its own name, so customers 1..1000 of a district cover all
	// 1000 names exactly once (4.3.2.3), and AppendLastName agrees with LastName.
	seen := map[string]int{}
	for n := range 1000 {
		name := LastName(n)
		if prev, dup := seen[name]; dup {
			t.Fatalf("LastName(%d) = LastName(%d) = %q", n, prev, name)
		}
		seen[name] = n
		if a := string(AppendLastName(nil, n)); a != name {
			t.Fatalf("AppendLastName(%d) = %q, LastName = %q", n, a, name)
		}
		if len(name) < 9 || len(name) > 15 {
			t.Fatalf("LastName(%d) = %q: length %d outside 9..15", n, name, len(name))
		}
	}
}

func TestAppendLastNameNoAlloc(t *testing.T) {
	buf := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() { buf = AppendLastName(buf[:0], 371) }); allocs != 0 {
		t.Errorf("AppendLastName allocates %.0f times per call", allocs)
	}
}
