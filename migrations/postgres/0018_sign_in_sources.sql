-- Accounts that sign in through a campus identity provider (OpenID Connect, LDAP, the web
-- server's header, an LMS). Each row is one identity (`provider` as configured, `subject`
-- as that provider names the person for good) attached to one account. An identity is
-- attached when the account is made for it at first sign-in, by an administrator, or by
-- its owner signing in to both in one flow: never by a matching name or e-mail.
CREATE TABLE external_identities (
    provider        TEXT NOT NULL,
    subject         TEXT NOT NULL,
    user_id         BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at      BIGINT NOT NULL,
    last_sign_in_at BIGINT NOT NULL,
    PRIMARY KEY (provider, subject)
);
CREATE INDEX external_identities_user ON external_identities (user_id);

-- Course memberships and administrator rights that a provider's groups gave: NULL means
-- given by hand (a roster, an invitation, an administrator). Only what a provider gave is
-- taken back by it when the person leaves the group.
ALTER TABLE course_members ADD COLUMN granted_by TEXT;
ALTER TABLE users ADD COLUMN admin_granted_by TEXT;

-- A redirect to a provider under way: one use, bound to the browser that began it.
CREATE TABLE sign_in_attempts (
    state_sha256   TEXT PRIMARY KEY,
    provider       TEXT NOT NULL,
    browser_sha256 TEXT NOT NULL,
    nonce          TEXT NOT NULL,
    pkce_verifier  TEXT NOT NULL,
    next_path      TEXT,
    link_user_id   BIGINT REFERENCES users (id) ON DELETE CASCADE,
    created_at     BIGINT NOT NULL
);
-- Stale attempts are deleted by age.
CREATE INDEX sign_in_attempts_created ON sign_in_attempts (created_at);

-- LMS platforms (LTI 1.3) an administrator registered: one row per issuer and client id.
-- Identities and grants of a platform are keyed `lti:ID`: an id is never given again, so a
-- platform registered later under a removed one's name inherits none of its accounts.
CREATE TABLE lti_platforms (
    id             BIGSERIAL PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    issuer         TEXT NOT NULL,
    client_id      TEXT NOT NULL,
    deployment_ids TEXT NOT NULL,
    auth_login_url TEXT NOT NULL,
    auth_token_url TEXT NOT NULL,
    jwks_url       TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    UNIQUE (issuer, client_id)
);

-- Which SliceHub course an LMS course (an LTI context) is; set at the first launch by an
-- instructor. `memberships_url` is where its roster is read (LTI Names and Roles).
CREATE TABLE lti_contexts (
    platform_id     BIGINT NOT NULL REFERENCES lti_platforms (id) ON DELETE CASCADE,
    context_id      TEXT NOT NULL,
    course_id       BIGINT NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    memberships_url TEXT,
    synced_at       BIGINT,
    PRIMARY KEY (platform_id, context_id)
);
CREATE INDEX lti_contexts_course ON lti_contexts (course_id);

-- The portal's own signing key as an LTI tool (client assertions for Names and Roles),
-- published at /lti/jwks.
CREATE TABLE lti_tool_keys (
    kid         TEXT PRIMARY KEY,
    private_der TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- A launch from a framed LMS page continues in a window of its own with this one-use ticket.
CREATE TABLE lti_tickets (
    ticket_sha256 TEXT PRIMARY KEY,
    user_id       BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    next_path     TEXT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX lti_tickets_expires ON lti_tickets (expires_at);
