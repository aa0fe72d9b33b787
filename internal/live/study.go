package live

import (
	"strconv"
	"sync"

	"github.com/storbench/storbench/internal/measure"
	"github.com/storbench/storbench/internal/study"
)

// studyWatcher is a study.Watcher that sets the endpoint's study figures, and its
// TPC-C points' by their target.
type studyWatcher struct {
	s *Server

	mu      sync.Mutex
	current []string // the step series set, removed when the step ends
	failed  int
}

var _ study.Watcher = (*studyWatcher)(nil)

// Study watches a study as it runs.
func (s *Server) Study() study.Watcher {
	s.m.studyRunning.Set(1)
	s.studying.Store(true)
	return &studyWatcher{s: s}
}

// Step sets where the study stands.
func (w *studyWatcher) Step(st study.StepState) {
	m := w.s.m
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.current != nil {
		m.step.DeleteLabelValues(w.current...)
		w.current = nil
	}
	if st.Failed {
		w.failed++
	}
	m.steps.WithLabelValues("total").Set(float64(st.Of))
	m.steps.WithLabelValues("stored").Set(float64(st.Stored))
	m.steps.WithLabelValues("failed").Set(float64(w.failed))
	left := st.Of - st.Stored - w.failed
	m.stepsLeft.Set(float64(left))
	m.etaSeconds.Set(st.Remaining.Seconds())
	if !st.Ended {
		w.current = []string{strconv.Itoa(st.Step.Seq), st.Step.ID, st.Step.Kind, st.Step.Target}
		m.step.WithLabelValues(w.current...).Set(1)
	}
}

// Point watches a TPC-C point of a step, labelled by its target.
func (w *studyWatcher) Point(step study.Step) measure.Watcher {
	return w.s.Point(step.Target, step.Users)
}
