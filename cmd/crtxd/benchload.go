package main

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// load runs clients closed loops of fn for d; fn is told its client's number.
func load(name string, clients int, d time.Duration, fn func(client int) error) result {
	var errs atomic.Int64
	var first atomic.Pointer[error]
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := fn(c); err != nil {
					errs.Add(1)
					first.CompareAndSwap(nil, &err)
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	r := summarize(name, clients, time.Since(start), slices.Concat(lat...), errs.Load())
	if err := first.Load(); err != nil {
		r.FirstError = (*err).Error()
	}
	return r
}

// paced starts fn rate times a second for d, whatever the answers' pace;
// the i-th call is told i.
func paced(name string, rate int, d time.Duration, fn func(i int) error) result {
	return arrivals(name, rate, max(1, int(float64(rate)*d.Seconds())), fn)
}

// arrivals starts n calls of fn, rate a second, whatever the answers' pace,
// and waits for them all; the i-th call is told i.
func arrivals(name string, rate, n int, fn func(i int) error) result {
	return timedArrivals(name, rate, n, func(i int) (time.Duration, error) {
		t0 := time.Now()
		err := fn(i)
		return time.Since(t0), err
	})
}

// timedArrivals is arrivals of calls that measure their own latency (a
// stream's, to its first event).
func timedArrivals(name string, rate, n int, fn func(i int) (time.Duration, error)) result {
	interval := time.Second / time.Duration(rate)
	var mu sync.Mutex
	var lat []time.Duration
	var errs int64
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Go(func() {
			d, err := fn(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				first = cmp.Or(first, err)
				return
			}
			lat = append(lat, d)
		})
	}
	wg.Wait()
	r := summarize(name, 0, time.Since(start), lat, errs)
	if first != nil {
		r.FirstError = first.Error()
	}
	return r
}

// summarize turns the latencies of the answered requests into figures.
func summarize(name string, clients int, elapsed time.Duration, lat []time.Duration, errs int64) result {
	slices.Sort(lat)
	r := result{Name: name, Clients: clients, Seconds: elapsed.Seconds(), OK: int64(len(lat)), Errors: errs,
		RPS: float64(len(lat)) / elapsed.Seconds()}
	if len(lat) > 0 {
		ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		r.P50MS, r.P99MS, r.MaxMS = ms(0.5), ms(0.99), ms(1)
	}
	return r
}
