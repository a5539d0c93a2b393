-- Where a session runs: '' on this machine's Docker engine, 'slurm' as a job of the Slurm
-- cluster; and that job's id once Slurm accepted it.
ALTER TABLE gpu_sessions ADD COLUMN pool TEXT NOT NULL DEFAULT '';
ALTER TABLE gpu_sessions ADD COLUMN slurm_job BIGINT;
