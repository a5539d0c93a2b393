-- Per-day totals of the usage ledger, so a term's report reads a few thousand rows, not a
-- third of a year's intervals. A closed interval adds its part of each UTC day it touched,
-- once per grain (by course, by student, by GPU, by image; each also by slice size), in
-- the transaction that closes it; open intervals are read from the ledger live.
-- `sessions` counts the intervals held during the day or begun in it, `started` those
-- begun in it: a period's sessions are its first day's `sessions` plus the later days'
-- `started`. An interval's end cause counts on the day it ended.
CREATE TABLE usage_days (
    grain            TEXT NOT NULL,
    day              BIGINT NOT NULL,
    course_id        BIGINT NOT NULL,
    user_id          BIGINT NOT NULL,
    detail           TEXT NOT NULL,
    profile          TEXT NOT NULL,
    sessions         BIGINT NOT NULL,
    started          BIGINT NOT NULL,
    held_ms          BIGINT NOT NULL,
    ended_time_limit BIGINT NOT NULL,
    ended_quota      BIGINT NOT NULL,
    ended_idle       BIGINT NOT NULL,
    PRIMARY KEY (grain, day, course_id, user_id, detail, profile)
);
-- How many closed intervals that began on a day waited how many whole seconds for their
-- slice, per grain: the report's wait percentiles are ranks in these counts.
CREATE TABLE usage_waits (
    grain     TEXT NOT NULL,
    day       BIGINT NOT NULL,
    course_id BIGINT NOT NULL,
    user_id   BIGINT NOT NULL,
    detail    TEXT NOT NULL,
    wait_s    BIGINT NOT NULL,
    intervals BIGINT NOT NULL,
    PRIMARY KEY (grain, day, course_id, user_id, detail, wait_s)
);
-- Intervals closed before this migration are added by the portal's next start (or by
-- `slicehub usage rebuild`); until then reports read the ledger.
INSERT INTO settings (key, value, updated_at) VALUES ('usage_rollups', 'rebuild', 0)
    ON CONFLICT (key) DO UPDATE SET value = 'rebuild';
