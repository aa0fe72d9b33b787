package metrics

import (
	"io"
)

// The collectors that run processes or hold connections, which the sampler closes
// when it finds io.Closer by type assertion: a misspelt Close would leave them
// running without a word.
var (
	_ io.Closer = (*cpuCollector)(nil)
	_ io.Closer = (*IOLatency)(nil)
	_ io.Closer = (*processCollector)(nil)
	_ io.Closer = (*waitCollector)(nil)
)
