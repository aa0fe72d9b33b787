package tpcc

import "fmt"

// Count says n of the workload's things (warehouses, users) as a sentence does:
// "1 warehouse", "4 warehouses".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
