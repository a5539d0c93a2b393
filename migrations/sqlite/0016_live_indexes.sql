-- Indexes for what the portal reads while it runs (the queue, the reconciler, the
-- metrics, a course's live view): each serves one filter of the live queries, so their
-- cost follows the sessions that are live, not a year of ended ones. The old
-- (live, state) index led with a column the state filters do not name, so SQLite scanned
-- every session ever for them.
-- Sessions by state, in the order they are served (the queue, the reconciler's rules).
CREATE INDEX gpu_sessions_state ON gpu_sessions (state, requested_at);
-- A course's live sessions (the class view) and every live session (the metrics).
CREATE INDEX gpu_sessions_live_course ON gpu_sessions (course_id, requested_at) WHERE live = 1;
-- A course's recent failed starts (the class view's problems).
CREATE INDEX gpu_sessions_failed_course ON gpu_sessions (course_id, updated_at) WHERE state = 'failed';
-- What still holds a slice (the allocator's map, the release rule, the metrics).
CREATE INDEX gpu_sessions_held ON gpu_sessions (gpu_uuid) WHERE released = 0;
-- Where the portal created MIG instances (whether a leftover instance is the portal's).
CREATE INDEX gpu_sessions_created_instances ON gpu_sessions (gpu_uuid, profile_id, start_slice)
    WHERE created_instance = 1;
-- A student's sessions, newest first (the sessions page), in the page's order, so the
-- first page is read without sorting the student's whole history.
CREATE INDEX gpu_sessions_user_requested ON gpu_sessions (user_id, requested_at DESC, id);
-- Ledger rows that overlap a quota period: those that ended after it began, and the open
-- ones (a course's and a student's budget).
CREATE INDEX usage_ledger_course_ended ON usage_ledger (course_id, ended_at);
CREATE INDEX usage_ledger_student_ended ON usage_ledger (course_id, user_id, ended_at);
-- How far each ledger row reaches (open rows: forever), so a report finds the rows that
-- overlap its period without walking the ones that ended before it.
CREATE INDEX usage_ledger_reach ON usage_ledger (COALESCE(ended_at, 9223372036854775807));
-- Last: on PostgreSQL, dropping takes the table's exclusive lock until the migration
-- commits, so the indexes above are built while the portal can still read.
DROP INDEX gpu_sessions_live;
