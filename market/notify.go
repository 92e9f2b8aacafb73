package market

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/crtx-market/crtx"
)

// outboxSize bounds the changes waiting to be told to the other replicas;
// past it they are dropped, and the streams there find them at their next
// recheck (Config.StreamRecheck).
const outboxSize = 4096

// RunNotifications carries changes of executions' state between this
// replica and the others on its store, until ctx ends: it sends those made
// here, batched into one message per round trip, and wakes the streams
// here that follow those made elsewhere. It listens again after its
// connection fails, waking every stream then, since changes may have gone
// by unheard. listening, if not nil, is called each time it starts
// listening. On a store without a Notifier it returns at once.
func (m *Market) RunNotifications(ctx context.Context, listening func()) {
	n, ok := m.store.(crtx.Notifier)
	if !ok {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { m.publish(ctx, n) })
	for {
		err := n.Listen(ctx, func() {
			m.watches.announceAll()
			if listening != nil {
				listening()
			}
		}, m.heard)
		if ctx.Err() != nil {
			return
		}
		m.cfg.Logger.Warn("listen for other replicas' changes; streams fall back to rechecks", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// A message is the sending replica's id and the ids of the executions that
// changed, separated by spaces.

// publish sends the ids in the outbox, as many as fit in each message.
func (m *core) publish(ctx context.Context, n crtx.Notifier) {
	var b strings.Builder
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-m.outbox:
			b.Reset()
			b.WriteString(m.replica + " " + id)
		}
	batch:
		for b.Len()+100 < crtx.MaxNotification { // an id is 36 bytes
			select {
			case id := <-m.outbox:
				b.WriteString(" " + id)
			default:
				break batch
			}
		}
		if err := n.Notify(ctx, b.String()); err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("tell other replicas of changes; their streams fall back to rechecks", "err", err)
		}
	}
}

// heard wakes the streams here on the executions another replica changed,
// and hands each signal (a word with a colon, which no execution id has)
// to the handler of its kind.
func (m *core) heard(msg string) {
	ids := strings.Fields(msg)
	if len(ids) < 2 || ids[0] == m.replica {
		return
	}
	changed := ids[1:1]
	for _, id := range ids[1:] {
		kind, payload, ok := strings.Cut(id, ":")
		if !ok {
			changed = append(changed, id)
			continue
		}
		m.signals.mu.Lock()
		fn := m.signals.by[kind]
		m.signals.mu.Unlock()
		if fn != nil {
			fn(payload)
		}
	}
	m.watches.announce(changed...)
}

// signals are the handlers of what replicas tell each other beside
// changes of executions, by kind.
type signals struct {
	mu sync.Mutex
	by map[string]func(payload string)
}

// OnSignal has fn called with the payload of each signal of kind another
// replica sends (Signal).
func (m *Market) OnSignal(kind string, fn func(payload string)) {
	m.signals.mu.Lock()
	defer m.signals.mu.Unlock()
	m.signals.by[kind] = fn
}

// Signal tells the other replicas kind and payload (no spaces, at most 96
// bytes together; a longer one is not sent), as best it can: like a change, it is
// dropped when the publisher is behind, and goes nowhere on a store
// without other replicas.
func (m *Market) Signal(kind, payload string) {
	// The publisher fits a message's words by assuming each at most 100
	// bytes long.
	if m.outbox == nil || len(kind)+1+len(payload) > 96 || strings.Contains(kind, ":") || strings.IndexFunc(kind+payload, unicode.IsSpace) >= 0 {
		return
	}
	select {
	case m.outbox <- kind + ":" + payload:
	default:
	}
}
