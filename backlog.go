package crtx

import "time"

// Backlog is the work waiting in a marketplace, across its replicas, as
// its metrics read it.
type Backlog struct {
	// Executions are those pending or running, by environment, with what
	// their escrows hold.
	Executions map[Environment]Queue
	// Webhooks and Pushes are the deliveries due and not yet made
	// (webhooks to callers, A2A push notifications).
	Webhooks, Pushes Queue
	// Withdrawals are those not yet final (pending or sent), by
	// environment.
	Withdrawals map[Environment]Queue
}

// Queue is how many items wait, what they amount to where they hold
// money, and since when the oldest has waited (zero when none waits).
type Queue struct {
	Waiting int
	Amount  USDC
	Oldest  time.Time
}
