-- The memory slices kept for each waiting session from its latest start (see
-- mig/src/queue.rs): nobody else is placed there if they could still be running then.
CREATE TABLE queue_windows (
    session_id TEXT PRIMARY KEY REFERENCES gpu_sessions (id) ON DELETE CASCADE,
    gpu_uuid   TEXT NOT NULL,
    mask       BIGINT NOT NULL,
    from_at    BIGINT NOT NULL,
    until_at   BIGINT NOT NULL,
    -- The first latest start the student was shown, to measure how good the estimates are.
    first_from_at BIGINT NOT NULL
);

-- Queue estimates read how long the latest sessions of each profile ran.
CREATE INDEX usage_ledger_ended ON usage_ledger (ended_at);
