-- What instructors govern per course beyond images and sizes: concurrent sessions per
-- student, the largest slice one student may take, and a slice-hour budget per period in
-- the course's time zone. Budgets are kept in compute-slice-minutes (a 3g slice for one
-- hour costs 180); NULL means "the configured default" for the first two and "no quota"
-- for the budget.
ALTER TABLE course_policies ADD COLUMN max_sessions BIGINT CHECK (max_sessions > 0);
ALTER TABLE course_policies ADD COLUMN max_slices BIGINT CHECK (max_slices BETWEEN 1 AND 7);
ALTER TABLE course_policies ADD COLUMN quota_slice_minutes BIGINT CHECK (quota_slice_minutes > 0);
-- 'week': resets every week on reset_weekday (0 = Monday) at reset_minute after local
-- midnight; 'term': one budget from term_starts to the end of term_ends (YYYY-MM-DD).
ALTER TABLE course_policies ADD COLUMN quota_period TEXT NOT NULL DEFAULT 'week' CHECK (quota_period IN ('week', 'term'));
ALTER TABLE course_policies ADD COLUMN reset_weekday BIGINT NOT NULL DEFAULT 0 CHECK (reset_weekday BETWEEN 0 AND 6);
ALTER TABLE course_policies ADD COLUMN reset_minute BIGINT NOT NULL DEFAULT 0 CHECK (reset_minute BETWEEN 0 AND 1439);
ALTER TABLE course_policies ADD COLUMN term_starts TEXT;
ALTER TABLE course_policies ADD COLUMN term_ends TEXT;
ALTER TABLE course_policies ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';

-- Extra slice-minutes an instructor gives one student for the period they fall in.
CREATE TABLE quota_grants (
    id          BIGSERIAL PRIMARY KEY,
    course_id   BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slice_minutes BIGINT NOT NULL CHECK (slice_minutes > 0),
    reason      TEXT NOT NULL,
    granted_by  TEXT NOT NULL,
    granted_at  BIGINT NOT NULL
);
CREATE INDEX quota_grants_student ON quota_grants (course_id, user_id, granted_at);
CREATE INDEX usage_ledger_student ON usage_ledger (course_id, user_id, started_at);
