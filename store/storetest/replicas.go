package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/crtx-market/crtx"
)

// testHeartbeats: heartbeats read back as written; an execution whose
// owner is named silent is claimed at once, whatever its lease; the others
// wait for their leases; the claimer becomes the owner; replicas silent for
// long are forgotten.
func testHeartbeats(t *testing.T, s crtx.Store) {
	lease := t0.Add(time.Hour) // far from running out
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.Catalog.EnsureCreator(ctx, "w1", t0); err != nil {
			return err
		}
		if err := tx.Catalog.InsertAgent(ctx, agent("a1", "w1", 100_000, []string{"data"}, t0)); err != nil {
			return err
		}
		for i, owner := range []string{"dead", "alive", "unknown", "dead"} {
			e := execution(fmt.Sprintf("h%d", i), t0)
			e.Owner, e.LeaseUntil = owner, lease
			if i == 3 {
				e.Status = crtx.ExecCompleted
			}
			if err := tx.Executions.InsertExecution(ctx, e); err != nil {
				return err
			}
		}
		if err := tx.System.Heartbeat(ctx, "dead", 0, t0, t0.Add(-time.Hour)); err != nil {
			return err
		}
		return tx.System.Heartbeat(ctx, "alive", crtx.Release, t0.Add(10*time.Second), t0.Add(-time.Hour))
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.System.Replicas(ctx)
		if err != nil || len(got) != 2 || !got["dead"].Equal(t0) || !got["alive"].Equal(t0.Add(10*time.Second)) {
			t.Errorf("Replicas = %v, %v", got, err)
		}
		// A replica of an older release is named until it is forgotten.
		if old, err := tx.System.ReplicasBelow(ctx, crtx.ReleaseMetered, t0); err != nil || !slices.Equal(old, []string{"dead"}) {
			t.Errorf("ReplicasBelow = %v, %v; want the one of release 0", old, err)
		}
		if old, err := tx.System.ReplicasBelow(ctx, crtx.ReleaseMetered, t0.Add(time.Second)); err != nil || len(old) != 0 {
			t.Errorf("ReplicasBelow since after its last beat = %v, %v; want none", old, err)
		}
		return err
	})
	claim := func(now time.Time, silent ...string) []string {
		var ids []string
		update(t, s, func(ctx context.Context, tx crtx.Tx) error {
			claimed, err := tx.Executions.ClaimExecutions(ctx, "me", now, now.Add(time.Minute), silent, 10)
			for _, e := range claimed {
				if e.Owner != "me" || !e.LeaseUntil.Equal(now.Add(time.Minute)) {
					t.Errorf("claimed %s owned by %q until %v", e.ID, e.Owner, e.LeaseUntil)
				}
				ids = append(ids, e.ID)
			}
			return err
		})
		slices.Sort(ids)
		return ids
	}
	if got := claim(t0.Add(11*time.Second), "dead", "me"); !slices.Equal(got, []string{"h0"}) {
		t.Errorf("claimed %v, want only the silent owner's execution in flight", got)
	}
	if got := claim(t0.Add(12*time.Second), "dead", "me"); len(got) != 0 {
		t.Errorf("claimed %v again: the claimer's own are never silent", got)
	}
	// Past every lease, all in flight go (h0 again: its new lease ran out).
	if got := claim(lease.Add(2 * time.Minute)); !slices.Equal(got, []string{"h0", "h1", "h2"}) {
		t.Errorf("claimed %v past the leases", got)
	}
	// A replica silent for long is forgotten.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		return tx.System.Heartbeat(ctx, "me", crtx.Release, t0.Add(2*time.Hour), t0.Add(time.Hour))
	})
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		e := execution("h4", t0)
		e.Owner, e.LeaseUntil = "dead", t0.Add(3*time.Hour)
		return tx.Executions.InsertExecution(ctx, e)
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.System.Replicas(ctx)
		if _, ok := got["dead"]; ok || err != nil {
			t.Errorf("Replicas after forgetting = %v, %v", got, err)
		}
		if old, err := tx.System.ReplicasBelow(ctx, crtx.ReleaseMetered, t0.Add(-time.Hour)); err != nil || len(old) != 0 {
			t.Errorf("ReplicasBelow after forgetting = %v, %v", old, err)
		}
		return err
	})
	if got := claim(t0.Add(2 * time.Hour)); slices.Contains(got, "h4") {
		t.Errorf("claimed %v, h4 among them, with no silent owner; want its lease to decide", got)
	}
	// A replica that leaves is forgotten at once; the others stay.
	update(t, s, func(ctx context.Context, tx crtx.Tx) error {
		if err := tx.System.Heartbeat(ctx, "other", crtx.Release, t0.Add(2*time.Hour), t0.Add(time.Hour)); err != nil {
			return err
		}
		return tx.System.Leave(ctx, "me")
	})
	view(t, s, func(ctx context.Context, tx crtx.Tx) error {
		got, err := tx.System.Replicas(ctx)
		if _, ok := got["me"]; ok || len(got) != 1 || err != nil {
			t.Errorf("Replicas after one left = %v, %v; want only the other", got, err)
		}
		return err
	})
}
