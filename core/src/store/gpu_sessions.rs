//! GPU sessions, their events and the memory slices they hold.

use sqlx::any::AnyRow;
use sqlx::FromRow;

use super::gpu_session_row::GpuSessionRow;
use super::{now_ms, Store};
use crate::sessions::{GpuSession, SessionEvent, SessionKind, SessionPool, SessionState, SlicePlacement};
use crate::CoreError;
use crate::{CourseId, UserId};

/// A session as first written, in state `requested`.
pub struct NewGpuSession<'a> {
    pub id: &'a str,
    pub user_id: UserId,
    pub course_id: CourseId,
    pub kind: SessionKind,
    pub pool: SessionPool,
    pub profile: &'a str,
    pub image: &'a str,
    pub argv: &'a [String],
    pub token: &'a str,
    pub deadline_at_ms: i64,
}

/// A slice some unreleased session holds.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HeldSlice {
    #[sqlx(rename = "id")]
    pub session_id: String,
    pub gpu_uuid: String,
    #[sqlx(try_from = "i64")]
    pub profile_id: u32,
    #[sqlx(rename = "start_slice", try_from = "i64")]
    pub start: u8,
}

/// A [`SessionEvent`] as the join reads it, its state as the word stored.
#[derive(sqlx::FromRow)]
struct EventColumns {
    session_id: String,
    at_ms: i64,
    state: String,
    detail: String,
    user_id: UserId,
}

/// How stale the record of a Slurm job seen running may get.
pub const SEEN_RUNNING_EVERY_MS: i64 = 60_000;

pub(super) const SELECT: &str = "SELECT s.id, s.user_id, u.username, s.course_id, c.code, s.kind, s.profile,
        s.image, s.argv, s.state, s.reason, s.gpu_uuid, s.gpu_index, s.profile_id, s.start_slice,
        s.placement, s.created_instance, s.released, s.mig_uuid, s.container, s.notebook_address,
        s.token, s.exit_code, s.log_tail, s.requested_at, s.updated_at, s.ready_at, s.ended_at,
        s.deadline_at, s.pool, s.slurm_job, s.slurm_node
    FROM gpu_sessions s JOIN users u ON u.id = s.user_id JOIN courses c ON c.id = s.course_id";

pub(super) fn in_list(states: &[SessionState]) -> String {
    states
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn session_from(row: &AnyRow) -> Result<GpuSession, CoreError> {
    Ok(GpuSessionRow::from_row(row)?.into())
}

async fn event_on(
    conn: &mut sqlx::AnyConnection,
    session_id: &str,
    at_ms: i64,
    state: SessionState,
    detail: &str,
) -> Result<(), CoreError> {
    sqlx::query(
        "INSERT INTO session_events (session_id, at_ms, state, detail) VALUES ($1, $2, $3, $4)",
    )
    .bind(session_id)
    .bind(at_ms)
    .bind(state.as_str())
    .bind(detail)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes the event of a state change in the change's transaction.
async fn record_event(
    conn: &mut sqlx::AnyConnection,
    id: &str,
    user_id: UserId,
    at_ms: i64,
    state: SessionState,
    detail: &str,
) -> Result<SessionEvent, CoreError> {
    event_on(&mut *conn, id, at_ms, state, detail).await?;
    Ok(SessionEvent {
        session_id: id.to_string(),
        user_id,
        at_ms,
        state,
        detail: detail.to_string(),
    })
}

impl Store {
    /// Writes a new session in state `requested`, unless its user already has
    /// `max_live` sessions that are not over (then [`CoreError::Conflict`]).
    pub async fn insert_gpu_session(
        &self,
        new: &NewGpuSession<'_>,
        max_live: i64,
    ) -> Result<SessionEvent, CoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        // One user's claims count and insert one at a time. SQLite's BEGIN IMMEDIATE already
        // serializes writers (and a no-op UPDATE of the user there would check every table
        // that refers to users, a year of ledger rows included); PostgreSQL under READ
        // COMMITTED could let two claims count the same sessions, so the user's row is locked
        // until commit. NO KEY: rows that refer to the user (a login, the ledger) may still
        // be written meanwhile.
        if self.kind() == super::DbKind::Postgres {
            sqlx::query("SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE")
                .bind(new.user_id)
                .fetch_optional(&mut *tx)
                .await?;
        }
        let (live,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM gpu_sessions WHERE user_id = $1 AND live = 1")
                .bind(new.user_id)
                .fetch_one(&mut *tx)
                .await?;
        if live >= max_live {
            return Err(CoreError::Conflict(format!(
                "you already have {live} session{} running or waiting (the limit is {max_live}); stop one first",
                if live == 1 { "" } else { "s" }
            )));
        }
        let argv = if new.argv.is_empty() {
            String::new()
        } else {
            serde_json::to_string(new.argv).map_err(|e| CoreError::Database(e.to_string()))?
        };
        sqlx::query(
            "INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state,
                                       released, token, requested_at, updated_at, deadline_at, pool)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'requested', 1, $8, $9, $9, $10, $11)",
        )
        .bind(new.id)
        .bind(new.user_id)
        .bind(new.course_id)
        .bind(new.kind.as_str())
        .bind(new.profile)
        .bind(new.image)
        .bind(argv)
        .bind(new.token)
        .bind(now)
        .bind(new.deadline_at_ms)
        .bind(new.pool.as_str())
        .execute(&mut *tx)
        .await?;
        let detail = format!("{} on {} with {}", new.kind.as_str(), new.profile, new.image);
        event_on(&mut tx, new.id, now, SessionState::Requested, &detail).await?;
        tx.commit().await?;
        Ok(SessionEvent {
            session_id: new.id.to_string(),
            user_id: new.user_id,
            at_ms: now,
            state: SessionState::Requested,
            detail,
        })
    }

    pub async fn gpu_session(&self, id: &str) -> Result<Option<GpuSession>, CoreError> {
        // An id with a NUL would make PostgreSQL fail the query; no session has one.
        if !crate::auth::validate::plausible_key(id) {
            return Ok(None);
        }
        let row = sqlx::query(&format!("{SELECT} WHERE s.id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(session_from).transpose()
    }

    /// A user's sessions, newest first.
    pub async fn gpu_sessions_of_user(
        &self,
        user_id: UserId,
        limit: i64,
    ) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE s.user_id = $1 ORDER BY s.requested_at DESC, s.id LIMIT $2"
        ))
        .bind(user_id)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }

    /// One page of the user's ended and failed sessions, newest first.
    pub async fn past_sessions_of_user(
        &self,
        user_id: UserId,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE s.user_id = $1 AND s.live = 0
             ORDER BY s.requested_at DESC, s.id LIMIT $2 OFFSET $3"
        ))
        .bind(user_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }

    /// How many ended and failed sessions the user has.
    pub async fn count_past_sessions_of_user(&self, user_id: UserId) -> Result<i64, CoreError> {
        let (total,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM gpu_sessions WHERE user_id = $1 AND live = 0")
                .bind(user_id)
                .fetch_one(self.pool())
                .await?;
        Ok(total)
    }

    /// Sessions in any of `states`, oldest request first.
    pub async fn gpu_sessions_in(
        &self,
        states: &[SessionState],
    ) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE s.state IN ({}) ORDER BY s.requested_at, s.id",
            in_list(states)
        ))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }

    /// The course's sessions that are not over, oldest request first.
    pub async fn live_sessions_of_course(&self, course_id: CourseId) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE s.course_id = $1 AND s.live = 1 ORDER BY s.requested_at, s.id"
        ))
        .bind(course_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }

    /// The course's sessions that failed before they were ever ready, since `since_ms`,
    /// newest first, at most `limit`.
    pub async fn failed_starts_of_course(
        &self,
        course_id: CourseId,
        since_ms: i64,
        limit: i64,
    ) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE s.course_id = $1 AND s.state = 'failed' AND s.ready_at IS NULL
             AND s.updated_at >= $2 ORDER BY s.updated_at DESC, s.id LIMIT $3"
        ))
        .bind(course_id)
        .bind(since_ms)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }

    /// Ended or failed sessions whose slice was not given back yet.
    pub async fn unreleased_final_sessions(&self) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE s.live = 0 AND s.released = 0 ORDER BY s.requested_at"
        ))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }

    /// Moves a session to `to` if it is in a state that may precede it; returns the event
    /// written, or `None` when the session had already moved elsewhere (a stop won a race).
    pub async fn transition(
        &self,
        id: &str,
        to: SessionState,
        detail: &str,
    ) -> Result<Option<SessionEvent>, CoreError> {
        self.transition_from(id, to.allowed_from(), to, detail).await
    }

    /// Moves a session from one of `from` to `stopping`, recording what the stop will end
    /// it as (`to`, `reason`) for whoever finishes the stop.
    pub async fn begin_stop(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        reason: &str,
    ) -> Result<Option<SessionEvent>, CoreError> {
        let detail = format!("stopping: {reason}");
        self.transition_with(id, from, SessionState::Stopping, &detail, Some((to, reason))).await
    }

    /// What the stop under way set out to record: the final state and its reason.
    pub async fn intended_end(&self, id: &str) -> Result<Option<(SessionState, String)>, CoreError> {
        let row: Option<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT stopping_to, stopping_reason FROM gpu_sessions WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        Ok(match row {
            Some((Some(to), Some(reason))) => SessionState::parse(&to).filter(|s| s.is_final()).map(|s| (s, reason)),
            _ => None,
        })
    }

    /// Moves a starting session to `ready` at `ready_at_ms`, with the deadline its time
    /// limit now runs to.
    pub async fn mark_ready(
        &self,
        id: &str,
        detail: &str,
        ready_at_ms: i64,
        deadline_at_ms: i64,
    ) -> Result<Option<SessionEvent>, CoreError> {
        let from = in_list(SessionState::Ready.allowed_from());
        let mut tx = self.begin_write().await?;
        let updated: Option<(UserId,)> = sqlx::query_as(&format!(
            "UPDATE gpu_sessions SET state = 'ready', updated_at = $1, ready_at = $1, deadline_at = $2
             WHERE id = $3 AND state IN ({from}) RETURNING user_id"
        ))
        .bind(ready_at_ms)
        .bind(deadline_at_ms)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((user_id,)) = updated else {
            return Ok(None);
        };
        let event = record_event(&mut tx, id, user_id, ready_at_ms, SessionState::Ready, detail).await?;
        tx.commit().await?;
        Ok(Some(event))
    }

    /// [`Store::transition`] from only the given states (each must be allowed before `to`).
    pub async fn transition_from(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        detail: &str,
    ) -> Result<Option<SessionEvent>, CoreError> {
        self.transition_with(id, from, to, detail, None).await
    }

    async fn transition_with(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        detail: &str,
        intended: Option<(SessionState, &str)>,
    ) -> Result<Option<SessionEvent>, CoreError> {
        let from: Vec<SessionState> = from
            .iter()
            .copied()
            .filter(|s| to.allowed_from().contains(s))
            .collect();
        if from.is_empty() {
            return Ok(None);
        }
        let from = in_list(&from);
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let extra = match (to, intended) {
            // Its moment and deadline come with it (`mark_ready`).
            (SessionState::Ready, _) => {
                return Err(CoreError::Database("a session becomes ready only with its deadline (`mark_ready`)".into()))
            }
            (s, _) if s.is_final() => ", live = 0, ended_at = $3, reason = $4",
            (_, Some(_)) => ", stopping_to = $4, stopping_reason = $5",
            _ => "",
        };
        let sql = format!(
            "UPDATE gpu_sessions SET state = $1, updated_at = $3 {extra}
             WHERE id = $2 AND state IN ({from}) RETURNING user_id"
        );
        let mut query = sqlx::query_as(&sql).bind(to.as_str()).bind(id).bind(now);
        if to.is_final() {
            query = query.bind(detail);
        } else if let Some((end, reason)) = intended {
            query = query.bind(end.as_str()).bind(reason);
        }
        let updated: Option<(UserId,)> = query.fetch_optional(&mut *tx).await?;
        let Some((user_id,)) = updated else {
            return Ok(None);
        };
        let event = record_event(&mut tx, id, user_id, now, to, detail).await?;
        tx.commit().await?;
        Ok(Some(event))
    }

    /// Holds `memory_slices` of the placement's GPU for the session and moves it to
    /// `allocating`, all or nothing. A slice another session holds is refused by the
    /// database itself ([`CoreError::Conflict`]).
    pub async fn hold_slice(
        &self,
        id: &str,
        placement: &SlicePlacement,
        memory_slices: &[u8],
        created_instance: bool,
        detail: &str,
    ) -> Result<Option<SessionEvent>, CoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        for slice in memory_slices {
            let held = sqlx::query(
                "INSERT INTO slice_holds (gpu_uuid, memory_slice, session_id) VALUES ($1, $2, $3)",
            )
            .bind(&placement.gpu_uuid)
            .bind(i64::from(*slice))
            .bind(id)
            .execute(&mut *tx)
            .await;
            if let Err(e) = held {
                return Err(CoreError::Conflict(format!(
                    "memory slice {slice} of GPU {} is already held: {e}",
                    placement.gpu_uuid
                )));
            }
        }
        let from = in_list(SessionState::Allocating.allowed_from());
        let updated: Option<(UserId,)> = sqlx::query_as(&format!(
            "UPDATE gpu_sessions SET state = 'allocating', updated_at = $1, gpu_uuid = $2,
                 gpu_index = $3, profile_id = $4, start_slice = $5, placement = $6,
                 created_instance = $7, released = 0
             WHERE id = $8 AND state IN ({from}) RETURNING user_id"
        ))
        .bind(now)
        .bind(&placement.gpu_uuid)
        .bind(i64::from(placement.gpu_index))
        .bind(i64::from(placement.profile_id))
        .bind(i64::from(placement.start))
        .bind(&placement.label)
        .bind(i64::from(created_instance))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        // Nothing returned: the session moved on; dropping the transaction drops the holds.
        let Some((user_id,)) = updated else {
            return Ok(None);
        };
        let event =
            record_event(&mut tx, id, user_id, now, SessionState::Allocating, detail).await?;
        tx.commit().await?;
        Ok(Some(event))
    }

    /// Gives the session's slice back: its holds are deleted and it is marked released.
    pub async fn release_slice(&self, id: &str) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM slice_holds WHERE session_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE gpu_sessions SET released = 1, updated_at = $2 WHERE id = $1")
            .bind(id)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Every placement an unreleased session holds.
    pub async fn held_slices(&self) -> Result<Vec<HeldSlice>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT id, gpu_uuid, profile_id, start_slice FROM gpu_sessions
             WHERE released = 0 AND gpu_uuid IS NOT NULL",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// Whether the portal ever created a MIG instance at this placement for a session
    /// (so an instance there that nobody holds is the portal's to destroy, never an
    /// admin's).
    pub async fn portal_created_instance_at(
        &self,
        gpu_uuid: &str,
        profile_id: u32,
        start: u8,
    ) -> Result<bool, CoreError> {
        let found: Option<(i64,)> = sqlx::query_as(
            "SELECT 1 FROM gpu_sessions
             WHERE gpu_uuid = $1 AND profile_id = $2 AND start_slice = $3 AND created_instance = 1
             LIMIT 1",
        )
        .bind(gpu_uuid)
        .bind(i64::from(profile_id))
        .bind(i64::from(start))
        .fetch_optional(self.pool())
        .await?;
        Ok(found.is_some())
    }

    pub async fn count_slice_holds(&self) -> Result<i64, CoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM slice_holds")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    pub async fn set_session_mig_uuid(&self, id: &str, mig_uuid: &str) -> Result<(), CoreError> {
        self.set_session_text(id, "mig_uuid", mig_uuid).await
    }

    /// The Slurm job a session became.
    pub async fn set_slurm_job(&self, id: &str, job: i64) -> Result<(), CoreError> {
        sqlx::query("UPDATE gpu_sessions SET slurm_job = $1, updated_at = $2 WHERE id = $3")
            .bind(job)
            .bind(now_ms())
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The node a Slurm session's job started on.
    pub async fn set_slurm_node(&self, id: &str, node: &str) -> Result<(), CoreError> {
        self.set_session_text(id, "slurm_node", node).await
    }

    /// Sessions of the Slurm pool that are not over.
    pub async fn live_slurm_sessions(&self) -> Result<Vec<GpuSession>, CoreError> {
        let rows = sqlx::query(&format!("{SELECT} WHERE s.pool = 'slurm' AND s.live = 1 ORDER BY s.requested_at"))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(session_from).collect()
    }

    pub async fn set_session_container(&self, id: &str, name: &str) -> Result<(), CoreError> {
        self.set_session_text(id, "container", name).await
    }

    async fn set_session_text(&self, id: &str, column: &str, value: &str) -> Result<(), CoreError> {
        sqlx::query(&format!(
            "UPDATE gpu_sessions SET {column} = $1, updated_at = $2 WHERE id = $3"
        ))
        .bind(value)
        .bind(now_ms())
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Where the proxy reaches the session's JupyterLab (`IP:PORT` on the session network).
    pub async fn set_session_address(&self, id: &str, address: &str) -> Result<(), CoreError> {
        sqlx::query("UPDATE gpu_sessions SET notebook_address = $1 WHERE id = $2")
            .bind(address)
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Keeps what the container left behind: its exit code and last log lines.
    pub async fn set_session_outcome(
        &self,
        id: &str,
        exit_code: Option<i64>,
        log_tail: &str,
    ) -> Result<(), CoreError> {
        sqlx::query(
            "UPDATE gpu_sessions SET exit_code = COALESCE($1, exit_code), log_tail = $2 WHERE id = $3",
        )
        .bind(exit_code)
        .bind(log_tail)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every step of a session, oldest first.
    pub async fn session_events(&self, id: &str) -> Result<Vec<SessionEvent>, CoreError> {
        self.events_of_sessions(&[id.to_string()]).await
    }

    /// Records that these sessions' Slurm jobs run at `now_ms`, for each only where the last
    /// record is a minute old or more (the watcher calls this every pass).
    pub async fn mark_slurm_seen_running(&self, ids: &[String], now_ms: i64) -> Result<(), CoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let placeholders: Vec<String> = (3..ids.len() + 3).map(|n| format!("${n}")).collect();
        let sql = format!(
            "UPDATE gpu_sessions SET slurm_seen_running_at = $1
             WHERE (slurm_seen_running_at IS NULL OR slurm_seen_running_at < $2) AND id IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query(&sql).bind(now_ms).bind(now_ms - SEEN_RUNNING_EVERY_MS);
        for id in ids {
            query = query.bind(id);
        }
        query.execute(self.pool()).await?;
        Ok(())
    }

    /// When the watcher last recorded this session's Slurm job running.
    pub async fn slurm_seen_running_at(&self, id: &str) -> Result<Option<i64>, CoreError> {
        let seen: Option<Option<i64>> = sqlx::query_scalar("SELECT slurm_seen_running_at FROM gpu_sessions WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(seen.flatten())
    }

    /// Every step of these sessions in one query, oldest first.
    pub async fn events_of_sessions(&self, ids: &[String]) -> Result<Vec<SessionEvent>, CoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT e.session_id, e.at_ms, e.state, e.detail, s.user_id FROM session_events e
             JOIN gpu_sessions s ON s.id = e.session_id
             WHERE e.session_id IN ({}) ORDER BY e.id",
            placeholders.join(", ")
        );
        let mut query = sqlx::query_as::<_, EventColumns>(&sql);
        for id in ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(self.pool()).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                Some(SessionEvent {
                    state: SessionState::parse(&row.state)?,
                    session_id: row.session_id,
                    user_id: row.user_id,
                    at_ms: row.at_ms,
                    detail: row.detail,
                })
            })
            .collect())
    }
}
