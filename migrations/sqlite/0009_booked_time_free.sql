-- Whether time in the course's booked lab windows is left out of its students' quotas.
ALTER TABLE course_policies ADD COLUMN booked_time_free BIGINT NOT NULL DEFAULT 0;
