package market

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// Shared are the settings every replica of one marketplace must hold
// alike, each under the name its operator sets it by (a flag, a key
// file): two replicas that differ answer the same caller differently, and
// one whose marketplace key differs has every dispatch refused by the
// creators, who check the key the others publish.
type Shared map[string]string

// ErrSettingsDiffer is returned by Join for a replica whose shared
// settings are not the marketplace's.
var ErrSettingsDiffer = errors.New("this replica's settings are not the marketplace's")

// sharedMeta holds the settings the last replica to start recorded.
const sharedMeta = "shared_settings"

// joinAlive is how recently a replica must have beaten to count as alive
// when another starts: wider than the heartbeat, so that clocks a few
// seconds apart still see each other.
const joinAlive = 10

// Join records s as the marketplace's shared settings and this replica as
// alive. While another replica is alive, a replica whose settings differ
// from the recorded ones is refused, with every difference named: the
// others serve with the recorded ones. A replica alone records its own, so
// stopping every replica and starting them with new settings changes them.
//
// The keys of rotations (the key creators check requests with) no restart
// changes but a rotation: each may take the value its successor setting
// (the next key, which the replicas published first) holds in the record,
// alive replicas or not. A successor rolls out replica by replica: one
// without it leaves the recorded one in place while another replica is
// alive (it may not have been given the file yet), and a different one is
// refused then; a replica alone records its own, so a rotation is
// abandoned by stopping every replica and starting them without it.
//
// A replica that knows it is its store's only one (it holds a SQLite
// folder's lock) is alone, whatever the heartbeats of a predecessor that
// crashed say.
//
// with, if not nil, writes in the same transaction what a replica records
// only once it has joined (the mint each of its chains binds), so that
// one refused records none of it.
func (m *Market) Join(ctx context.Context, s Shared, alone bool, rotations map[string]string, with func(crtx.Tx) error) error {
	for {
		// Update runs SERIALIZABLE on PostgreSQL: a replica that joined
		// while this transaction's snapshot was taken, before the lock was
		// held, conflicts with it, and the transaction is tried again.
		err := m.store.Update(ctx, func(tx crtx.Tx) error {
			ok, err := tx.System.TryLock(ctx, sharedMeta)
			if err != nil {
				return err
			}
			if !ok {
				return errBusy
			}
			if err := m.join(ctx, tx, s, alone, rotations, true); err != nil || with == nil {
				return err
			}
			return with(tx)
		})
		if !errors.Is(err, errBusy) {
			return err
		}
		// Another replica is starting: its row is in when its lock ends.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var errBusy = errors.New("another replica is joining")

// CanJoin is Join's check alone, writing nothing: for a replica to be
// refused before it does anything its settings would make wrong (create a
// treasury's accounts on the chain, say). Join checks again.
func (m *Market) CanJoin(ctx context.Context, s Shared, alone bool, rotations map[string]string) error {
	return m.store.View(ctx, func(tx crtx.Tx) error { return m.join(ctx, tx, s, alone, rotations, false) })
}

// Leave tells the other replicas that this one has stopped, so that one
// started next with new settings need not wait for its heartbeat to age.
// Executions it still owns are taken over when their leases run out.
func (m *Market) Leave(ctx context.Context) error {
	return m.store.Update(ctx, func(tx crtx.Tx) error { return tx.System.Leave(ctx, m.replica) })
}

func (m *Market) join(ctx context.Context, tx crtx.Tx, s Shared, alone bool, rotations map[string]string, write bool) error {
	now := m.now()
	raw, err := tx.System.Meta(ctx, sharedMeta)
	if err != nil && !errors.Is(err, crtx.ErrNotFound) {
		return err
	}
	var had Shared
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &had); err != nil {
			return fmt.Errorf("the recorded shared settings: %w", err)
		}
	}
	changed := had.differ(s)
	var alive []string
	if len(changed) > 0 && !alone {
		beats, err := tx.System.Replicas(ctx)
		if err != nil {
			return err
		}
		for id, at := range beats {
			if id != m.replica && !at.Before(now.Add(-joinAlive*m.cfg.Heartbeat)) {
				alive = append(alive, id)
			}
		}
		slices.Sort(alive)
	}
	keyOf := map[string]string{}
	for key, next := range rotations {
		keyOf[next] = key
	}
	merged := maps.Clone(had)
	if merged == nil {
		merged = Shared{}
	}
	maps.Copy(merged, s)
	var refused, kept []string
	differs := func(name string) string {
		return fmt.Sprintf("%s is %q here, %q in the marketplace", name, s[name], had[name])
	}
	for _, name := range changed {
		if next, isKey := rotations[name]; isKey {
			if had[next] != "" && s[name] == had[next] { // the switch of a rotation
				merged[next] = s[next]
				continue
			}
			kept = append(kept, name)
			if had[next] != "" {
				refused = append(refused, differs(name)+fmt.Sprintf(" (rotating to %q, %s)", had[next], next))
			} else {
				refused = append(refused, differs(name))
			}
			continue
		}
		if key, isNext := keyOf[name]; isNext {
			switch {
			case s[name] == "" && s[key] == had[key] && len(alive) > 0:
				merged[name] = had[name] // not given the file yet: the rotation stands
				if write {
					m.cfg.Logger.Warn("the marketplace key rotates, and this replica does not publish the next key: copy it from another replica", "setting", name, "next", had[name])
				}
			case len(alive) > 0 && s[name] != "" && had[name] != "": // another next key than the one published
				refused = append(refused, differs(name))
			}
			continue
		}
		if len(alive) > 0 {
			refused = append(refused, differs(name))
		}
	}
	if len(refused) > 0 {
		hint := "give this one the same, or stop them all to change a setting"
		if len(kept) > 0 {
			hint = fmt.Sprintf("no restart changes %s but a rotation (docs/deploy.md): copy it from another replica, or from a backup", strings.Join(kept, ", "))
		}
		if len(alive) > 0 {
			hint = fmt.Sprintf("the replicas alive (%s) serve with the marketplace's: %s", strings.Join(alive, ", "), hint)
		}
		return fmt.Errorf("%w: %s; %s", ErrSettingsDiffer, strings.Join(refused, "; "), hint)
	}
	if !write {
		return nil
	}
	for _, name := range changed {
		if merged[name] != had[name] {
			m.cfg.Logger.Warn("a shared setting changed", "setting", name, "was", had[name], "now", merged[name])
		}
	}
	if !maps.Equal(merged, had) {
		b, err := json.Marshal(merged)
		if err != nil {
			return err
		}
		if err := tx.System.SetMeta(ctx, sharedMeta, string(b)); err != nil {
			return err
		}
	}
	return tx.System.Heartbeat(ctx, m.replica, crtx.Release, now, now.Add(-time.Hour))
}

// differ names, sorted, the settings both s and t hold with another
// value. One only one holds was added or dropped by another release, and
// differs from nothing: releases side by side during an upgrade agree.
func (s Shared) differ(t Shared) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(t)) {
		if v, ok := s[name]; ok && v != t[name] {
			out = append(out, name)
		}
	}
	return out
}
