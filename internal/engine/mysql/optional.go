package mysql

import "github.com/storbench/storbench/internal/engine"

// The optional interfaces the driver and the sampler find by type assertion: a
// misspelt method would otherwise switch a check off without a word.
var (
	_ engine.ConnectionLimiter = (*DB)(nil)
	_ engine.StatementLimiter  = (*DB)(nil)
	_ engine.FootprintReader   = (*DB)(nil)
	_ engine.ServerProcess     = (*DB)(nil)
	_ engine.WaitProfiler      = (*DB)(nil)
)
