-- Usage reports read the ledger by period across all courses.
CREATE INDEX usage_ledger_started ON usage_ledger (started_at);
