package storetest

import (
	"context"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL server the later engine runs on answers, with the version
// that engine needs (SKIP LOCKED and advisory locks: 9.5 or newer).
func TestPostgresReachable(t *testing.T) {
	dsn := PostgresDSN(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect to CRTX_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(context.Background())
	var version int
	if err := conn.QueryRow(context.Background(), `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 90500 {
		t.Fatalf("PostgreSQL %d is too old", version)
	}
}

type fakeTB struct {
	testing.TB
	fataled, skipped bool
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Fatal(...any) { f.fataled = true; runtime.Goexit() }
func (f *fakeTB) Skip(...any)  { f.skipped = true; runtime.Goexit() }

// call runs PostgresDSN on its own goroutine, as testing does, so that
// Fatal and Skip end it.
func call(f *fakeTB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		PostgresDSN(f)
	}()
	<-done
}

// Without a server, CI fails where a developer's machine skips.
func TestPostgresDSNRefusesToSkipInCI(t *testing.T) {
	t.Setenv("CRTX_TEST_POSTGRES", "")
	t.Setenv("CRTX_REQUIRE_POSTGRES", "")
	t.Setenv("CI", "true")
	f := &fakeTB{}
	call(f)
	if !f.fataled || f.skipped {
		t.Errorf("in CI: fataled=%v skipped=%v", f.fataled, f.skipped)
	}
	t.Setenv("CI", "")
	f = &fakeTB{}
	call(f)
	if f.fataled || !f.skipped {
		t.Errorf("locally: fataled=%v skipped=%v", f.fataled, f.skipped)
	}
}
