-- An instructor's roster names an account that exists already: instead of enrolling it
-- (and showing its e-mail to the instructor), the course invites it; its owner joins or
-- declines. Administrators still enrol directly.
CREATE TABLE course_invitations (
    course_id BIGINT NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    invited_by TEXT NOT NULL,
    invited_at BIGINT NOT NULL,
    PRIMARY KEY (course_id, user_id)
);
CREATE INDEX course_invitations_by_user ON course_invitations (user_id);
