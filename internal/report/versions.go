package report

import (
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/driver"
)

// serverRelease cuts a server's own version string to its product and release:
// "PostgreSQL 13.23 on x86_64-pc-linux-gnu, compiled by …" → "PostgreSQL 13.23"
// (driver.RunConfig.Server).
func serverRelease(version string) string {
	product, release := driver.RunConfig{ServerVersion: version}.Server()
	return strings.TrimSpace(product + " " + release)
}

// pointRelease is the server release all of a point's runs ran on: "" when none
// recorded one or they differ.
func pointRelease(p *Point) string {
	rel := ""
	for i, st := range p.Steps {
		r := serverRelease(st.Run.Config.ServerVersion)
		if r == "" || i > 0 && r != rel {
			return ""
		}
		rel = r
	}
	return rel
}

// targetRelease is the server release a source's environment recorded for a target
// ("" when it did not).
func targetRelease(src *Source, target string) string {
	if src.Env == nil {
		return ""
	}
	for _, t := range src.Env.Targets {
		if t.Name == target {
			return serverRelease(t.ServerVersion)
		}
	}
	return ""
}

// versioned names two compared configurations with their server releases when these
// differ ("old (PostgreSQL 13.23)"), and then says so in stacks ("; the servers
// differ …"): a difference between them is the whole stack's, storage and server
// together, as the papers' old-vs-new-stack comparison is. Where the releases are the
// same or one is unknown, the names stand as they are and stacks is "".
func versioned(nameB, nameA, relB, relA string) (nb, na, stacks string) {
	if relB == "" || relA == "" || relB == relA {
		return nameB, nameA, ""
	}
	return nameB + " (" + relB + ")", nameA + " (" + relA + ")",
		fmt.Sprintf("; the servers differ (%s vs %s), so this compares the stacks, not the storage alone", relB, relA)
}

// pointTool is what measured all of a point's runs (driver.RunConfig.Tool); ""
// when they differ.
func pointTool(p *Point) string {
	tool := ""
	for i, st := range p.Steps {
		t := st.Run.Config.Tool()
		if i > 0 && t != tool {
			return ""
		}
		tool = t
	}
	return tool
}
