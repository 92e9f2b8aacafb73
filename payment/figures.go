package payment

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
	StageCheck = iota
	StageSimulate
	StageResimulate
	StageSettle
	stages
)

// stageNames name them, in the order a call passes them.
var stageNames = [stages]string{StageCheck: "check", StageSimulate: "simulate", StageResimulate: "resimulate", StageSettle: "settle"}

// Figures are what the ways of paying count since the process started.
type Figures struct {
	nanos, count [stages]atomic.Int64
	// Refused counts the x402 calls refused because their agent's calls
	// paid first keep failing; Refunded the refunds on the chain of calls
	// paid first that failed (each cost the fee payer two fees).
	Refused, Refunded atomic.Int64
}

// Timed adds the time since since to stage.
func (f *Figures) Timed(stage int, since time.Time) {
	f.nanos[stage].Add(int64(time.Since(since)))
	f.count[stage].Add(1)
}

// StageTime is one stage's total time and how many calls passed it.
type StageTime struct {
	Total time.Duration
	Count int64
}

// Stages reports the stages' times so far, by stage name.
func (f *Figures) Stages() map[string]StageTime {
	out := make(map[string]StageTime, len(stageNames))
	for i, name := range stageNames {
		out[name] = StageTime{Total: time.Duration(f.nanos[i].Load()), Count: f.count[i].Load()}
	}
	return out
}
