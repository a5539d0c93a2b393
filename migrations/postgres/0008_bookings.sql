-- Booked lab sessions: a course's slices kept for a window, once or weekly (weeks > 1),
-- on the placements chosen when it was booked.
CREATE TABLE bookings (
    id           BIGSERIAL PRIMARY KEY,
    course_id    BIGINT NOT NULL REFERENCES courses (id),
    profile      TEXT NOT NULL,
    slices       BIGINT NOT NULL CHECK (slices > 0),
    starts_at    BIGINT NOT NULL,
    ends_at      BIGINT NOT NULL CHECK (ends_at > starts_at),
    weeks        BIGINT NOT NULL CHECK (weeks BETWEEN 1 AND 26),
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    cancelled_at BIGINT
);
CREATE INDEX bookings_live ON bookings (cancelled_at, ends_at);

CREATE TABLE booking_slots (
    booking_id  BIGINT NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
    gpu_uuid    TEXT NOT NULL,
    profile_id  BIGINT NOT NULL,
    start_slice BIGINT NOT NULL,
    mask        BIGINT NOT NULL,
    PRIMARY KEY (booking_id, gpu_uuid, start_slice)
);
