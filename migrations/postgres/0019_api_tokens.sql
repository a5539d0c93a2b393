-- Personal access tokens for the REST API and the JupyterHub-compatible API: only the
-- SHA-256 of a token is kept. A token made by another token (the hub API's token call)
-- names it, and is revoked with it.
CREATE TABLE api_tokens (
    id             BIGSERIAL PRIMARY KEY,
    user_id        BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    token_sha256   TEXT NOT NULL UNIQUE,
    scopes         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT,
    last_used_at   BIGINT,
    last_used_from TEXT,
    revoked_at     BIGINT,
    parent_id      BIGINT REFERENCES api_tokens (id) ON DELETE CASCADE
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);
CREATE INDEX api_tokens_parent ON api_tokens (parent_id);
