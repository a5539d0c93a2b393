-- A course's idle policy (sessions::IdlePolicy as JSON); NULL: the defaults.
ALTER TABLE course_policies ADD COLUMN idle_policy TEXT;

-- When each running session was last active, and the idle warning it was given: it stops
-- at stops_at unless it is active before; early: the stop came early because students
-- wait for its size; stops = 0: a job the course only reports.
CREATE TABLE session_idle (
    session_id TEXT PRIMARY KEY,
    last_active_at BIGINT NOT NULL,
    stops_at BIGINT,
    early BIGINT NOT NULL DEFAULT 0,
    stops BIGINT NOT NULL DEFAULT 1
);
