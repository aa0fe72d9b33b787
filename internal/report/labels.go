package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/driver"
	"github.com/storbench/storbench/internal/study"
)

// What a throughput figure honestly is. An engine that keeps no transaction
// counter (SQLite), or a database that restarted or could not be read at the
// window's end, has the client's count stand in for the database's, and the run's
// Sources say so ("…, as tpm_client"): the charts and tables then say "client
// count", not "database counter".

// pointFromClient tells whether any run of a point had the client's count stand in.
func pointFromClient(p *Point, figure string) bool {
	return slices.ContainsFunc(p.Steps, func(s *study.StepResult) bool { return s.Run.FromClient(figure) })
}

// pointIndicative tells whether a run of a point has a database TPM over a window
// too short for the counters (driver.Result.TPMDBIndicative, which run's and the
// study's terminal lines mark too).
func pointIndicative(p *Point) bool {
	return slices.ContainsFunc(p.Steps, func(s *study.StepResult) bool { return s.Run.TPMDBIndicative() })
}

// throughputSource names where the series' figure comes from, for a chart's
// subtitle: "database counter", "client count", or the database counter with the
// series whose figure is the client's named.
func throughputSource(series []*Series, figure string) string {
	var client []string
	for _, s := range series {
		if slices.ContainsFunc(s.Points, func(p Point) bool { return pointFromClient(&p, figure) }) {
			client = append(client, s.Name)
		}
	}
	switch {
	case len(client) == 0:
		return "database counter"
	case len(client) == len(series):
		return "client count"
	}
	return "database counter, client count for " + strings.Join(client, ", ")
}

// throughputSources says where the series' NOPM and where their TPM come from,
// each by its own recorded source (on SQLite NOPM is a database counter and TPM
// the client's count), for a section's intro or a table's note.
func throughputSources(series []*Series) string {
	nopm, tpm := throughputSource(series, "nopm_db"), throughputSource(series, "tpm_db")
	if nopm == tpm && !strings.Contains(nopm, ",") { // "database counter" or "client count", for all series
		return "NOPM and TPM: " + nopm + "s"
	}
	return "NOPM: " + nopm + "; TPM: " + tpm
}

// Marks of the per-step table's database figures.
const (
	// markShortWindow: a database TPM over a window shorter than driver.CounterWindow.
	markShortWindow = "†"
	// markClient: the client's count standing in for the database's.
	markClient = "‡"
	// markUnsteady: a figure of a point a run of which had an unsteady window.
	markUnsteady = "§"
)

// databaseCell is a point's database figure for the per-step table, marked as
// databaseMark says.
func databaseCell(p *Point, figure string, s Stat) string {
	return stat(s, 0) + databaseMark(p, figure, s)
}

// databaseMark marks a point's database figure (" ‡", " †" or "") when it is the
// client's count, or a database TPM over a window too short for the counters'
// publication lag, and (" §") when a run's window was unsteady; databaseNotes
// explain the marks.
func databaseMark(p *Point, figure string, s Stat) string {
	mark := ""
	switch {
	case s.N == 0:
		return ""
	case pointFromClient(p, figure):
		mark = " " + markClient
	case figure == "tpm_db" && pointIndicative(p):
		mark = " " + markShortWindow
	}
	if pointUnsteady(p) {
		mark += " " + markUnsteady
	}
	return mark
}

// databaseNotes explain the marks the per-step table of series uses.
func databaseNotes(series []*Series) []string {
	var short, client, unsteady bool
	for _, s := range series {
		for i := range s.Points {
			p := &s.Points[i]
			client = client || pointFromClient(p, "tpm_db") || pointFromClient(p, "nopm_db")
			short = short || pointIndicative(p)
			unsteady = unsteady || pointUnsteady(p)
		}
	}
	var notes []string
	if short {
		notes = append(notes, fmt.Sprintf(shortWindowNote, markShortWindow, seconds(driver.CounterWindow)))
	}
	if client {
		notes = append(notes, markClient+" client count: the database kept no counter for this figure (SQLite has no transaction counter) or could not be read at the window's end, so storbench's own count stands in.")
	}
	if unsteady {
		notes = append(notes, markUnsteady+unsteadyNote)
	}
	return notes
}
