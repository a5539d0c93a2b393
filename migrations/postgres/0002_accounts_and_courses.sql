-- Accounts, login sessions, courses and their members.
-- Flags are 0/1 integers and times epoch milliseconds, as everywhere in this schema.

CREATE TABLE users (
    id                   BIGSERIAL PRIMARY KEY,
    username             TEXT NOT NULL UNIQUE,
    display_name         TEXT NOT NULL,
    email                TEXT,
    password_hash        TEXT NOT NULL,
    is_admin             BIGINT NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
    must_change_password BIGINT NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
    disabled             BIGINT NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);

-- Only the SHA-256 of a session token is stored; the token itself lives in the cookie.
CREATE TABLE user_sessions (
    id           BIGSERIAL PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    remote_addr  TEXT NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);
CREATE INDEX user_sessions_expires ON user_sessions (expires_at);
CREATE INDEX user_sessions_last_seen ON user_sessions (last_seen_at);

CREATE TABLE courses (
    id         BIGSERIAL PRIMARY KEY,
    code       TEXT NOT NULL,
    title      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- CS-101 and cs-101 are the same course.
CREATE UNIQUE INDEX courses_code ON courses (lower(code));

CREATE TABLE course_members (
    course_id BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    user_id   BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('instructor', 'student')),
    added_at  BIGINT NOT NULL,
    UNIQUE (course_id, user_id)
);
CREATE INDEX course_members_user ON course_members (user_id, role);
