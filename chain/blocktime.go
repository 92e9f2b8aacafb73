package chain

import (
	"context"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go/rpc"
)

// A blockhash lives crtx.BlockhashBlocks, and how long that is depends on the
// cluster: about 60 s on mainnet's 400 ms slots, 15 s on a local validator
// of 100 ms slots, longer on a loaded one. An x402 payment settled after
// its call's result must land before its blockhash expires, so the
// marketplace measures the cluster's block time from the heights it reads
// and when it read them.

const (
	// clockBlocks is how many blocks a measure spans before it is
	// believed: a reading's error of one block is then at most 2.5 %.
	clockBlocks = 40
	// clockRead is how old the last reading may be before BlockTime reads
	// a height again: at most one RPC call a second.
	clockRead = time.Second
	// clockSpan is how long a measure goes on before it starts again from
	// its last reading, following a cluster whose pace changes.
	clockSpan = 10 * time.Minute
	// clockWait is the most a reading may take: a node that does not
	// answer leaves the measure as it was, and the request that asked goes
	// on without it.
	clockWait = 2 * time.Second
)

// blockClock is the measure.
type blockClock struct {
	mu          sync.Mutex
	first, last heightAt
	// block is the last measure that spanned clockBlocks, kept while a new
	// one starts.
	block time.Duration
	// tried is when a reading was last begun: one a clockRead at most,
	// whether it answers or not, and never two at once.
	tried time.Time
}

type heightAt struct {
	at     time.Time
	height uint64
}

// observe records that the cluster was at height at at.
func (b *blockClock) observe(at time.Time, height uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.first.at.IsZero() || height+clockBlocks < b.last.height:
		// The first reading, or a cluster that started again (its
		// measure stands until a new one spans enough).
		b.first, b.last = heightAt{at, height}, heightAt{at, height}
		return
	case height < b.last.height || !at.After(b.last.at):
		return // a node that lags behind the one read before
	}
	b.last = heightAt{at, height}
	if n := b.last.height - b.first.height; n >= clockBlocks {
		b.block = b.last.at.Sub(b.first.at) / time.Duration(n)
		if b.last.at.Sub(b.first.at) > clockSpan {
			b.first = b.last
		}
	}
}

// blockTime is the measured time of a block, 0 while unknown.
func (b *blockClock) blockTime() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.block
}

// try reports whether a reading is due at now (none begun for clockRead,
// none read for as long), and if so counts it begun.
func (b *blockClock) try(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.tried) < clockRead || now.Sub(b.last.at) < clockRead {
		return false
	}
	b.tried = now
	return true
}

// BlockTime is how long the cluster takes to make a block, as measured
// from the heights read so far (reading one, for at most clockWait, if
// none was read or begun for a second); 0 until the readings span enough
// blocks.
func (c *Client) BlockTime(ctx context.Context) time.Duration {
	if c.clock.try(time.Now()) {
		ctx, cancel := context.WithTimeout(ctx, clockWait)
		if h, err := c.rpc.GetBlockHeight(ctx, rpc.CommitmentProcessed); err == nil {
			c.clock.observe(time.Now(), h)
		}
		cancel()
	}
	return c.clock.blockTime()
}
