-- Where a session runs: '' on this machine's Docker engine, 'slurm' as a job of the Slurm
-- cluster; that job's id once Slurm accepted it, and the node it started on.
ALTER TABLE gpu_sessions ADD COLUMN pool TEXT NOT NULL DEFAULT '';
ALTER TABLE gpu_sessions ADD COLUMN slurm_job BIGINT;
ALTER TABLE gpu_sessions ADD COLUMN slurm_node TEXT;
