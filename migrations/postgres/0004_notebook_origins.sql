-- Notebooks on their own origin: one-time launch tickets minted by the portal and the
-- notebook-host cookies (grants) they are exchanged for. Only SHA-256 digests of both
-- are stored. Also: where the proxy reaches a notebook (its container's address on the
-- portal's session network) and whether a course's containers may reach the internet.

CREATE TABLE notebook_tickets (
    token_sha256 TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES gpu_sessions (id) ON DELETE CASCADE,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The path (and query) on the notebook host to go to once the ticket is redeemed.
    path         TEXT NOT NULL,
    expires_at   BIGINT NOT NULL
);

CREATE TABLE notebook_grants (
    token_sha256 TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES gpu_sessions (id) ON DELETE CASCADE,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX notebook_grants_session ON notebook_grants (session_id);

-- host:port of JupyterLab on the session network, reached from the portal host only.
ALTER TABLE gpu_sessions ADD COLUMN notebook_address TEXT;

-- 1: the course's containers reach the internet (pip install); 0: only the portal.
ALTER TABLE course_policies ADD COLUMN internet BIGINT NOT NULL DEFAULT 1 CHECK (internet IN (0, 1));

-- Sessions that ended before tokens were erased at the end forget theirs now.
UPDATE gpu_sessions SET token = '' WHERE live = 0;
