package tpcc

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName builds c_last from a number 0..999, one syllable per digit (4.3.2.3):
// 371 gives PRICALLYOUGHT.
func LastName(n int) string {
	return string(AppendLastName(nil, n))
}

// AppendLastName appends LastName(n) without allocating.
func AppendLastName(b []byte, n int) []byte {
	b = append(b, syllables[n/100]...)
	b = append(b, syllables[n/10%10]...)
	return append(b, syllables[n%10]...)
}
