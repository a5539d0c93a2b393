-- MIG instances the portal created ahead of a booked lab window on a dynamic GPU. The
-- portal destroys one once no window keeps it and no session holds it; an instance with
-- no row here or in gpu_sessions is an admin's and is never touched.
CREATE TABLE prepared_instances (
    gpu_uuid TEXT NOT NULL,
    profile_id BIGINT NOT NULL,
    start_slice BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (gpu_uuid, profile_id, start_slice)
);
