//! Idle sessions come back: each pass (after the slice sampler) works out when every
//! running session was last active, warns ahead of an idle stop and stops those whose
//! warning ran out (`idle_rule` decides). Activity of a notebook is the latest of its
//! kernels and terminals (JupyterLab's API), changes its student made through the proxy,
//! its slice busy above the course's threshold, and "Keep it running"; a job's is its
//! slice alone. What is decided is kept in the database, so a restart keeps the deadline.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::idle_rule::{IdleVerdict, IdleWarning, Judged};
use crate::sessions::jupyter_activity::jupyter_activity;
use crate::sessions::service::Sessions;
use crate::sessions::model::{GpuSession, SessionKind, SessionPool, SessionState};
use crate::sessions::pools::{pool, POOLS};
use crate::courses::{policy_of, CoursePolicy};
use crate::store::IdleRow;
use crate::CoreError;
use crate::CourseId;

/// An idle warning as the pages show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IdleNotice {
    pub idle_since_ms: i64,
    pub stops_at_ms: i64,
    /// The stop comes early because students wait for the session's size.
    pub early: bool,
    /// False for a job the course only reports.
    pub stops: bool,
}

fn notice_of(row: IdleRow) -> Option<IdleNotice> {
    Some(IdleNotice {
        idle_since_ms: row.last_active_at,
        stops_at_ms: row.stops_at?,
        early: row.early,
        stops: row.stops,
    })
}

impl Sessions {
    /// Something the student did through the proxy that a background poll does not do.
    pub fn note_activity(&self, session_id: &str) {
        let mut seen = self.idle.seen_active.lock().unwrap_or_else(|p| p.into_inner());
        seen.insert(session_id.to_string(), self.now_ms());
    }

    /// "Keep it running": counts as activity now and clears the warning. Audited.
    pub async fn keep_running(&self, session: &GpuSession, actor: &str) -> Result<(), CoreError> {
        if session.state != SessionState::Ready {
            return Err(CoreError::Conflict("Only a running session can be kept running.".into()));
        }
        let now = self.now_ms();
        self.note_activity(&session.id);
        let store = &self.ctx.store;
        store.save_idle(&session.id, &IdleRow { last_active_at: now, stops_at: None, early: false, stops: true }).await?;
        store.audit(actor, "session.keep", &session.id, "kept running while idle").await?;
        self.ctx.touch(session);
        Ok(())
    }

    /// The idle warning of every session that has one, by session id.
    pub async fn idle_notices(&self) -> Result<HashMap<String, IdleNotice>, CoreError> {
        let rows = self.ctx.store.idle_rows().await?;
        Ok(rows.into_iter().filter_map(|(id, row)| Some((id, notice_of(row)?))).collect())
    }

    /// The session's idle warning, if it has one.
    pub async fn idle_notice(&self, session_id: &str) -> Result<Option<IdleNotice>, CoreError> {
        Ok(self.ctx.store.idle_row(session_id).await?.and_then(notice_of))
    }

    /// One culling pass at the clock's time; returns how many sessions it stopped.
    pub async fn cull_idle(&self) -> Result<usize, CoreError> {
        let now = self.now_ms();
        // A deadline that passed while no portal ran was never shown to anyone in time.
        let first_pass = !self.idle.culled_before.swap(true, std::sync::atomic::Ordering::SeqCst);
        let store = &self.ctx.store;
        let running = store.gpu_sessions_in(&[SessionState::Ready]).await?;
        let rows = store.idle_rows().await?;
        let live: HashSet<&str> = running.iter().map(|s| s.id.as_str()).collect();
        if rows.keys().any(|id| !live.contains(id.as_str())) {
            store.forget_idle_of_ended().await?;
        }
        self.idle.seen_active.lock().unwrap_or_else(|p| p.into_inner()).retain(|id, _| live.contains(id.as_str()));
        if running.is_empty() {
            return Ok(0);
        }
        // Each pool's own line: a claim waits for a slice of its pool only.
        let mut waiting: HashMap<SessionPool, HashSet<String>> = HashMap::new();
        for which in POOLS {
            waiting.insert(which, pool(which).waiting_profiles(self).await?);
        }
        let proxy_seen = self.idle.seen_active.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut policies: HashMap<CourseId, CoursePolicy> = HashMap::new();
        for session in &running {
            if !policies.contains_key(&session.course_id) {
                policies.insert(session.course_id, policy_of(store, &self.ctx.config, session.course_id).await?);
            }
        }
        let client = &self.idle.jupyter_client;
        let jupyter = futures_util::future::join_all(running.iter().map(|s| async {
            match (&s.kind, &s.notebook_address) {
                (SessionKind::Notebook, Some(address)) => jupyter_activity(client, address, &s.base_url(), &s.token, now).await,
                _ => None,
            }
        }))
        .await;
        let mut stopped = 0;
        for (session, from_jupyter) in running.iter().zip(jupyter) {
            // A job whose pool cannot tell how busy its slice is is never judged idle.
            if session.kind == SessionKind::Job && !pool(session.pool).reports_job_activity() {
                continue;
            }
            // Nor is a job whose slice gives no activity figure at all (MIG slices on GPUs
            // without GPM): no signal is unknown, not idle.
            if session.kind == SessionKind::Job && !self.has_activity_signal(&session.id) {
                continue;
            }
            let idle = policies[&session.course_id].idle;
            let kind = if session.kind == SessionKind::Job { Judged::Job } else { Judged::Notebook };
            let before = rows.get(&session.id).copied();
            let busy_at = self.busy_since(&session.id, idle.gpu_busy_percent);
            let mut last = before.map(|r| r.last_active_at).or(session.ready_at_ms).unwrap_or(now);
            let signals = match kind {
                Judged::Notebook => vec![busy_at, from_jupyter, proxy_seen.get(&session.id).copied()],
                Judged::Job => vec![busy_at],
            };
            last = signals.into_iter().flatten().fold(last, i64::max).min(now);
            let stops = kind == Judged::Notebook || idle.job_idle_stop;
            let lead = idle.warning_minutes.max(0) * 60_000;
            // A warning counts only for the same activity and the same outcome: a job that
            // was only reported gets a warning of its own once the course stops such jobs.
            let warned = before
                .filter(|r| r.last_active_at == last && r.stops == stops)
                .and_then(|r| r.stops_at.map(|stops_at_ms| IdleWarning { stops_at_ms, early: r.early }))
                .map(|w| if first_pass && w.stops_at_ms <= now { IdleWarning { stops_at_ms: now + lead, ..w } } else { w });
            let others_wait = waiting.get(&session.pool).is_some_and(|w| w.contains(&session.profile));
            let verdict = idle.judge(kind, last, warned, others_wait, now);
            let warning = match verdict {
                IdleVerdict::Active => None,
                IdleVerdict::Warn(w) | IdleVerdict::Stop(w) => Some(w),
            };
            let row = IdleRow {
                last_active_at: last,
                stops_at: warning.map(|w| w.stops_at_ms),
                early: warning.is_some_and(|w| w.early),
                stops,
            };
            let stopping = matches!(verdict, IdleVerdict::Stop(_));
            if before != Some(row) || stopping {
                // A "Keep it running" (or a change through the proxy) since this pass read
                // the session wins: it is judged again next pass.
                let kept_meanwhile = self.seen_after(&session.id, last);
                if kept_meanwhile || !store.save_idle_if_unchanged(&session.id, before, &row).await? {
                    continue;
                }
                if before.and_then(|r| r.stops_at) != row.stops_at {
                    self.ctx.touch(session);
                }
            }
            if let IdleVerdict::Stop(w) = verdict {
                let minutes = (now - last) / 60_000;
                let reason = if w.early {
                    format!("idle: no activity for {minutes} min while students waited for a {} slice", session.profile)
                } else {
                    format!("idle: no activity for {minutes} min")
                };
                if self.seen_after(&session.id, last) {
                    continue;
                }
                match self.ctx.stop(&session.id, &reason).await {
                    Ok(_) => {
                        stopped += 1;
                        store.audit("portal", "session.cull", &session.id, &reason).await?;
                    }
                    Err(e) => tracing::warn!(session = %session.id, error = %e, "could not stop an idle session"),
                }
            }
        }
        Ok(stopped)
    }

    /// Whether the proxy or "Keep it running" saw the session active after `ms`.
    fn seen_after(&self, session_id: &str, ms: i64) -> bool {
        let seen = self.idle.seen_active.lock().unwrap_or_else(|p| p.into_inner());
        seen.get(session_id).is_some_and(|&at| at > ms)
    }

    /// Whether the latest sample of the session's slice said how busy it was (a signal
    /// that stopped coming is no signal: the job is not judged on an old one).
    fn has_activity_signal(&self, session_id: &str) -> bool {
        self.slice_samples(session_id).last().is_some_and(|s| s.busy_percent.is_some())
    }

    /// The newest sample of the session's slice at or above `percent` busy.
    fn busy_since(&self, session_id: &str, percent: u32) -> Option<i64> {
        self.slice_samples(session_id)
            .iter()
            .rev()
            .find(|s| s.busy_percent.is_some_and(|b| b >= percent))
            .map(|s| s.at_ms)
    }
}
