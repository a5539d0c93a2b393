-- When the Slurm watcher last saw a session's job running (written at most once a minute):
-- a job Slurm has already forgotten when the portal looks again (MinJobAge, after portal
-- downtime) is charged until then, not until the portal noticed.
ALTER TABLE gpu_sessions ADD COLUMN slurm_seen_running_at BIGINT;

-- Which portal account each line of `slurm.users_file` stands for (per-student Slurm mode).
-- A line is bound to the account of its name that exists when the portal first reads it;
-- a line read before its account existed waits (user_id NULL) until an administrator binds
-- it (`slicehub slurm link NAME`), so an account an instructor's roster creates later under
-- a listed name never becomes that cluster user by itself.
CREATE TABLE slurm_links (
    portal_username TEXT PRIMARY KEY,
    user_id BIGINT,
    linked_at BIGINT NOT NULL
);
