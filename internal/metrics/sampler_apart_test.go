package metrics

import (
	"context"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// barrier is a collector that answers only once its partner has started: run one
// after the other, the first would wait out its deadline.
type barrier struct {
	mine, partner chan struct{}
	set           func(*Sample)
}

func (b barrier) Collect(ctx context.Context, s *Sample) error {
	close(b.mine)
	select {
	case <-b.partner:
		b.set(s)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestApartCollectorsRunBeside: two collectors added apart (a database and a host's
// node_exporter, say) run at once, each into its own sample, and what they found
// lands in the interval's sample beside what the local collectors found.
func TestApartCollectorsRunBeside(t *testing.T) {
	a, b := make(chan struct{}), make(chan struct{})
	s := NewSampler(100*time.Millisecond, nil)
	s.Add("cpu", collectorFunc(func(_ context.Context, s *Sample) error { s.CPU = &CPU{User: 1}; return nil }))
	s.AddApart("database", barrier{mine: a, partner: b, set: func(s *Sample) { s.Database = &Database{CommitsPerSec: 7} }})
	s.AddApart("node_exporter", barrier{mine: b, partner: a, set: func(s *Sample) { s.Disks = []Disk{{Device: "vdb"}} }})
	sample := Sample{Time: time.Now(), Seconds: 1}
	if errs := s.collect(context.Background(), &sample); len(errs) > 0 {
		t.Fatalf("collectors added apart did not run beside each other: %v", errs)
	}
	if sample.CPU == nil || sample.Database == nil || sample.Database.CommitsPerSec != 7 || len(sample.Disks) != 1 {
		t.Errorf("the interval's sample lacks what a collector found: cpu %v database %v disks %v", sample.CPU, sample.Database, sample.Disks)
	}
}

type collectorFunc func(context.Context, *Sample) error

func (f collectorFunc) Collect(ctx context.Context, s *Sample) error { return f(ctx, s) }

// TestMergeCoversSample sets every field of a sample a collector may set and merges
// it into an empty one: a field merge leaves out (one added to Sample later) fails
// here instead of vanishing from the samples of collectors run apart.
func TestMergeCoversSample(t *testing.T) {
	// What the sampler itself sets around its collectors.
	owned := map[string]bool{"T": true, "Time": true, "Seconds": true, "Resets": true, "Bottleneck": true, "judged": true}
	var src Sample
	v := reflect.ValueOf(&src).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if owned[name] {
			continue
		}
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("field %s (%s): teach this test to set it", name, f.Kind())
		}
	}
	var dst Sample
	merge(&dst, &src)
	d := reflect.ValueOf(&dst).Elem()
	for i := range d.NumField() {
		name := d.Type().Field(i).Name
		if !owned[name] && d.Field(i).IsZero() {
			t.Errorf("merge leaves out Sample.%s: a collector run apart would lose it", name)
		}
	}
}
