package market

import (
	"sync/atomic"
	"time"
)

// The stages an x402 call spends its time in beyond an API-key call's,
// timed for /metrics and the benchmark: the checks that need no RPC call,
// the simulation, the simulation again just before a payment settled after
// the result is sent, and the settlement (sending the payment until it is
// confirmed).
const (
	stageCheck = iota
	stageSimulate
	stageResimulate
	stageSettle
)

// stageNames name them, in the order a call passes them.
var stageNames = [...]string{stageCheck: "check", stageSimulate: "simulate", stageResimulate: "resimulate", stageSettle: "settle"}

// stageTimes sums each stage's time and count since the process started.
type stageTimes struct {
	nanos, count [len(stageNames)]atomic.Int64
}

func (s *stageTimes) add(stage int, since time.Time) {
	s.nanos[stage].Add(int64(time.Since(since)))
	s.count[stage].Add(1)
}

// StageTime is one stage's total time and how many calls passed it.
type StageTime struct {
	Total time.Duration
	Count int64
}

// X402Stages reports the x402 stages' times so far, by stage.
func (m *X402) X402Stages() map[string]StageTime {
	out := make(map[string]StageTime, len(stageNames))
	for i, name := range stageNames {
		out[name] = StageTime{Total: time.Duration(m.stages.nanos[i].Load()), Count: m.stages.count[i].Load()}
	}
	return out
}
