package sim

import "sync"

// Seeds runs seeds first..first+n-1 on workers goroutines and answers their
// results in seed order: the worlds' commands (sim-slow, sim-hedge) share it.
func Seeds[T any](first int64, n, workers int, run func(seed int64) T) []T {
	results := make([]T, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = run(first + int64(i))
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}
