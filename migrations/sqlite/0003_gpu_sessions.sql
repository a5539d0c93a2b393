-- GPU sessions (a student's claim of a MIG slice and the container on it), their
-- lifecycle events, the memory slices they hold, the usage ledger and course policies.
-- Times are epoch milliseconds; flags 0/1.

-- What a course lets its students run. Lists are comma-separated; an empty profile list
-- allows every profile the GPUs offer. A course without a row uses the configured defaults.
CREATE TABLE course_policies (
    course_id           BIGINT PRIMARY KEY REFERENCES courses (id) ON DELETE CASCADE,
    allowed_images      TEXT NOT NULL,
    allowed_profiles    TEXT NOT NULL,
    max_session_minutes BIGINT NOT NULL CHECK (max_session_minutes > 0),
    updated_at          BIGINT NOT NULL
);

CREATE TABLE gpu_sessions (
    id               TEXT PRIMARY KEY,
    user_id          BIGINT NOT NULL REFERENCES users (id),
    course_id        BIGINT NOT NULL REFERENCES courses (id),
    kind             TEXT NOT NULL CHECK (kind IN ('notebook', 'job')),
    profile          TEXT NOT NULL,
    image            TEXT NOT NULL,
    -- A job's command as a JSON array of strings; empty for notebooks.
    argv             TEXT NOT NULL,
    state            TEXT NOT NULL,
    reason           TEXT NOT NULL DEFAULT '',
    -- 1 until the session is ended or failed.
    live             BIGINT NOT NULL DEFAULT 1 CHECK (live IN (0, 1)),
    gpu_uuid         TEXT,
    gpu_index        BIGINT,
    profile_id       BIGINT,
    start_slice      BIGINT,
    placement        TEXT,
    -- The portal created the MIG instance (dynamic GPU) and must destroy it on release.
    created_instance BIGINT NOT NULL DEFAULT 0 CHECK (created_instance IN (0, 1)),
    -- 1 while nothing is held: before a slice is placed, and once it is given back.
    released         BIGINT NOT NULL DEFAULT 0 CHECK (released IN (0, 1)),
    mig_uuid         TEXT,
    container        TEXT,
    host_port        BIGINT,
    token            TEXT NOT NULL,
    exit_code        BIGINT,
    -- The container's last log lines, kept when it is removed.
    log_tail         TEXT NOT NULL DEFAULT '',
    requested_at     BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    ready_at         BIGINT,
    ended_at         BIGINT,
    deadline_at      BIGINT NOT NULL
);
CREATE INDEX gpu_sessions_user ON gpu_sessions (user_id, live);
CREATE INDEX gpu_sessions_live ON gpu_sessions (live, state);

CREATE TABLE session_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES gpu_sessions (id) ON DELETE CASCADE,
    at_ms      BIGINT NOT NULL,
    state      TEXT NOT NULL,
    detail     TEXT NOT NULL
);
CREATE INDEX session_events_session ON session_events (session_id, id);

-- One row per memory slice a live session holds: the primary key makes two sessions on
-- one placement impossible, whatever the code above it does.
CREATE TABLE slice_holds (
    gpu_uuid     TEXT NOT NULL,
    memory_slice BIGINT NOT NULL CHECK (memory_slice BETWEEN 0 AND 7),
    session_id   TEXT NOT NULL REFERENCES gpu_sessions (id),
    PRIMARY KEY (gpu_uuid, memory_slice)
);
CREATE INDEX slice_holds_session ON slice_holds (session_id);

-- One row per session that got a slice: opened before its container starts, closed once.
CREATE TABLE usage_ledger (
    session_id  TEXT PRIMARY KEY REFERENCES gpu_sessions (id),
    user_id     BIGINT NOT NULL REFERENCES users (id),
    course_id   BIGINT NOT NULL REFERENCES courses (id),
    gpu_uuid    TEXT NOT NULL,
    profile     TEXT NOT NULL,
    placement   TEXT NOT NULL,
    image       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    ended_at    BIGINT,
    end_reason  TEXT
);
CREATE INDEX usage_ledger_course ON usage_ledger (course_id, started_at);
