-- Migration 7 of the PostgreSQL store: the row the readiness probe writes
-- to prove that the database has room (ProbeWrite, internal/pgstore/usage.go).
-- Taking a transaction writes nothing a full disk would refuse, so after a
-- full disk, once after each start and every 10 s while asked, the probe
-- empties this table (TRUNCATE: new files) and writes one row of 64 KiB
-- that do not compress, which must take new blocks from the disk.
CREATE TABLE room_probe (
    id smallint PRIMARY KEY CHECK (id = 1),
    written_utc timestamptz NOT NULL,
    pad bytea NOT NULL
);
