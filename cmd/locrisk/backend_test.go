package main

import (
	"strings"
	"testing"
)

// TestBackendFor: a postgres:// or postgresql:// URL is PostgreSQL,
// anything else a SQLite file; a URL names itself without its password.
func TestBackendFor(t *testing.T) {
	for _, tt := range []struct {
		db, kind, name string
	}{
		{"./locrisk.db", "sqlite", "./locrisk.db"},
		{"/var/lib/locrisk/postgres.db", "sqlite", "/var/lib/locrisk/postgres.db"},
		{"postgres:///postgres?host=/tmp/pg", "postgres", "postgres:///postgres?host=/tmp/pg"},
		{"postgresql://app@db.example/locrisk", "postgres", "postgresql://app@db.example/locrisk"},
		{"postgres://app:s3cret@db.example:5432/locrisk", "postgres", "postgres://app:xxxxx@db.example:5432/locrisk"},
	} {
		be := backendFor(tt.db)
		kind := "sqlite"
		if _, ok := be.(postgresBackend); ok {
			kind = "postgres"
		}
		if kind != tt.kind || be.String() != tt.name {
			t.Errorf("backendFor(%q) = %s %q, want %s %q", tt.db, kind, be.String(), tt.kind, tt.name)
		}
	}
}

// TestDBVacuumRefusesPostgres: db vacuum is SQLite's alone; on a
// PostgreSQL URL it is a usage error, before any connection is tried.
func TestDBVacuumRefusesPostgres(t *testing.T) {
	r := cmd(t, nil, "db", "vacuum", "--db", "postgres://app:s3cret@localhost:1/none")
	if r.code != exitUsage || !strings.Contains(r.stderr, "PostgreSQL reclaims space with its own autovacuum") {
		t.Errorf("db vacuum on PostgreSQL: %+v; want a usage error", r)
	}
}
