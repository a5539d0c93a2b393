//! Lab bookings: a course's slices kept for a time window, once or weekly, on placements
//! chosen when it was booked.

use sqlx::FromRow;

use super::{now_ms, Store};
use crate::CoreError;
use crate::CourseId;

/// One week in milliseconds: weekly bookings repeat by this much.
pub const WEEK_MS: i64 = 7 * 24 * 3_600_000;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct BookingRow {
    pub id: i64,
    pub course_id: CourseId,
    pub code: String,
    pub profile: String,
    pub slices: i64,
    pub starts_at: i64,
    pub ends_at: i64,
    /// How many weekly windows (1: once).
    pub weeks: i64,
    pub created_by: String,
    pub created_at: i64,
}

/// One placement a booking keeps.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct BookingSlotRow {
    pub booking_id: i64,
    pub gpu_uuid: String,
    pub profile_id: i64,
    pub start_slice: i64,
    pub mask: i64,
}

/// What a new booking writes.
pub struct NewBooking<'a> {
    pub course_id: CourseId,
    pub profile: &'a str,
    pub starts_at: i64,
    pub ends_at: i64,
    pub weeks: i64,
    pub created_by: &'a str,
    /// (GPU UUID, profile id, start, memory-slice mask) for each slice kept.
    pub slots: &'a [(String, u32, u8, u8)],
}

impl Store {
    /// Writes a booking and its placements, all or nothing; returns its id.
    pub async fn insert_booking(&self, new: &NewBooking<'_>) -> Result<i64, CoreError> {
        let mut tx = self.pool().begin().await?;
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO bookings (course_id, profile, slices, starts_at, ends_at, weeks, created_by, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(new.course_id)
        .bind(new.profile)
        .bind(new.slots.len() as i64)
        .bind(new.starts_at)
        .bind(new.ends_at)
        .bind(new.weeks)
        .bind(new.created_by)
        .bind(now_ms())
        .fetch_one(&mut *tx)
        .await?;
        for (gpu_uuid, profile_id, start, mask) in new.slots {
            sqlx::query(
                "INSERT INTO booking_slots (booking_id, gpu_uuid, profile_id, start_slice, mask)
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(id)
            .bind(gpu_uuid)
            .bind(i64::from(*profile_id))
            .bind(i64::from(*start))
            .bind(i64::from(*mask))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    /// Bookings not cancelled whose last window has not ended by `now_ms`, soonest first.
    pub async fn live_bookings(&self, now_ms: i64) -> Result<Vec<BookingRow>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT b.id, b.course_id, c.code, b.profile, b.slices, b.starts_at, b.ends_at, b.weeks,
                    b.created_by, b.created_at
             FROM bookings b JOIN courses c ON c.id = b.course_id
             WHERE b.cancelled_at IS NULL AND b.ends_at + (b.weeks - 1) * $2 > $1
             ORDER BY b.starts_at, b.id",
        )
        .bind(now_ms)
        .bind(WEEK_MS)
        .fetch_all(self.pool())
        .await?)
    }

    /// The placements of bookings not cancelled whose last window has not ended.
    pub async fn live_booking_slots(&self, now_ms: i64) -> Result<Vec<BookingSlotRow>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT s.booking_id, s.gpu_uuid, s.profile_id, s.start_slice, s.mask
             FROM booking_slots s JOIN bookings b ON b.id = s.booking_id
             WHERE b.cancelled_at IS NULL AND b.ends_at + (b.weeks - 1) * $2 > $1",
        )
        .bind(now_ms)
        .bind(WEEK_MS)
        .fetch_all(self.pool())
        .await?)
    }

    /// Every booking of the course not cancelled, past ones too.
    pub async fn course_bookings(&self, course_id: CourseId) -> Result<Vec<BookingRow>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT b.id, b.course_id, c.code, b.profile, b.slices, b.starts_at, b.ends_at, b.weeks,
                    b.created_by, b.created_at
             FROM bookings b JOIN courses c ON c.id = b.course_id
             WHERE b.cancelled_at IS NULL AND b.course_id = $1
             ORDER BY b.starts_at, b.id",
        )
        .bind(course_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// The course's booked lab time as the quota sees it: every booking's start, end and
    /// weeks, with when it was cancelled (time booked before a cancellation stays booked).
    pub async fn course_booked_spans(&self, course_id: CourseId) -> Result<Vec<(i64, i64, i64, Option<i64>)>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT starts_at, ends_at, weeks, cancelled_at FROM bookings WHERE course_id = $1 ORDER BY starts_at, id",
        )
        .bind(course_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Cancels a booking of the course; false if there is none such still live.
    pub async fn cancel_booking(&self, course_id: CourseId, id: i64) -> Result<bool, CoreError> {
        let done = sqlx::query(
            "UPDATE bookings SET cancelled_at = $3 WHERE id = $1 AND course_id = $2 AND cancelled_at IS NULL",
        )
        .bind(id)
        .bind(course_id)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }
}
