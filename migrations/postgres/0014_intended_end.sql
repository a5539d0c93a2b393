-- What a stop set out to record once its container is gone (`ended` or `failed`, and why):
-- a stop finished by the repair pass or after a restart records the same, not a generic
-- "stopped".
ALTER TABLE gpu_sessions ADD COLUMN stopping_to TEXT;
ALTER TABLE gpu_sessions ADD COLUMN stopping_reason TEXT;
