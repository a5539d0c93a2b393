//! Serving the queue: waiting sessions are placed oldest first, and each one that must
//! wait keeps a window of slices from its latest start (mig/src/queue.rs). A newer claim
//! starts ahead only if, by its own time limit, it ends before it could delay an older
//! one — so the "at the latest" time a student is shown holds.

use std::collections::HashMap;

use slicehub_mig::{
    serve, Decision, Hold, MigError, Placement, Policy, Replan, Step, Waiting, Window,
};

use super::queue_now::{GpuNow, HoldStart, QueueNow, PLANNED};
use super::launch::LAUNCH_ALLOWANCE_MS;
use super::service::Sessions;
use super::model::{GpuSession, SessionState, SlicePlacement};
use crate::store::{HeldSlice, WaitingClaim};
use crate::CoreError;

/// What a pass did with one waiting session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placed {
    /// It holds a slice and is `allocating`.
    Yes,
    /// It waits in the queue.
    NoRoom,
    /// It was no longer waiting (stopped, or placed by someone else), or it failed.
    NotWaiting,
}

/// Time past a session's limit before its slice is surely back: the reconciler's next
/// pass notices the limit, the container stops, the instance is destroyed.
fn slack_ms(reconcile_seconds: u32) -> i64 {
    i64::from(reconcile_seconds) * 1_000 + 60_000
}

impl Sessions {
    /// How long a waiting session may hold its slice once placed: its limit, plus start-up
    /// and the time a stop at the limit takes.
    pub(super) fn hold_ms(&self, claim: &WaitingClaim) -> i64 {
        self.hold_for_ms(claim.deadline_at - claim.requested_at)
    }

    pub(super) fn hold_for_minutes(&self, minutes: i64) -> i64 {
        self.hold_for_ms(minutes * 60_000)
    }

    fn hold_for_ms(&self, limit_ms: i64) -> i64 {
        let config = &self.ctx.config;
        limit_ms
            + i64::from(config.sessions.ready_timeout_seconds) * 1_000
            + LAUNCH_ALLOWANCE_MS
            + slack_ms(config.sessions.reconcile_seconds)
    }

    /// The latest moment a placed session gives its slice back.
    fn held_until(&self, session: Option<&GpuSession>, now: i64) -> i64 {
        use SessionState::*;
        let slack = slack_ms(self.ctx.config.sessions.reconcile_seconds);
        let Some(s) = session else { return now + slack };
        let until = match s.state {
            Ready => s.deadline_at_ms + slack,
            Allocating | Creating | Starting => {
                s.updated_at_ms + self.hold_for_ms(super::lifecycle::limit_ms(s))
            }
            _ => s.updated_at_ms + slack,
        };
        // One past its end is being stopped now.
        until.max(now + slack)
    }

    /// `with_typical` also reads how long recent sessions ran (for estimates).
    pub(super) async fn queue_now(&self, with_typical: bool) -> Result<QueueNow, CoreError> {
        use SessionState::*;
        let store = &self.ctx.store;
        let now = self.now_ms();
        let fleet = self.fleet_now().await?;
        let held: Vec<HeldSlice> = store.held_slices().await?;
        let placed: HashMap<String, GpuSession> = store
            .gpu_sessions_in(&[Allocating, Creating, Starting, Ready, Stopping])
            .await?
            .into_iter()
            .map(|s| (s.id.clone(), s))
            .collect();
        let mut holds = Vec::with_capacity(held.len());
        let mut hold_starts = Vec::with_capacity(held.len());
        for h in &held {
            let Some(gpu) = fleet.iter().position(|g| g.info.uuid == h.gpu_uuid) else {
                continue;
            };
            let session = placed.get(&h.session_id);
            holds.push(Hold {
                gpu,
                placement: Placement::new(h.profile_id, h.start),
                until_ms: self.held_until(session, now),
                // An administrator's instance on a dynamic GPU stays when its session ends:
                // its slices are planned free only for a claim of its size.
                stays: fleet[gpu].is_dynamic() && session.is_some_and(|s| !s.created_instance),
            });
            hold_starts.push(session.map(|s| HoldStart {
                session_id: s.id.clone(),
                profile: s.profile.clone(),
                started_ms: s.ready_at_ms.unwrap_or(s.updated_at_ms),
                announced_stop_ms: None,
            }));
        }
        let waiting = store.waiting_claims().await?;
        let typical = if !with_typical {
            HashMap::new()
        } else {
            // Stops already announced (idle culls) are known ends, better than history.
            let announced = self.idle_notices().await?;
            for start in hold_starts.iter_mut().flatten() {
                start.announced_stop_ms = announced.get(&start.session_id).filter(|n| n.stops).map(|n| n.stops_at_ms);
            }
            self.typical_lengths(now).await?
        };
        let booked = self.booked_windows(&fleet, now).await?;
        let mut out = QueueNow {
            fleet,
            holds,
            hold_starts,
            waiting,
            windows: HashMap::new(),
            booked,
            typical,
            now_ms: now,
        };
        for stored in store.queue_windows().await? {
            // A window on a GPU that left the fleet (drained) is planned again.
            let Some(gpu) = out.gpu_of(&stored.gpu_uuid) else {
                continue;
            };
            let window = Window {
                gpu,
                mask: stored.mask as u8,
                from_ms: stored.from_at,
                until_ms: stored.until_at,
            };
            out.windows
                .insert(stored.session_id.clone(), (window, stored));
        }
        Ok(out)
    }

    /// One pass over the waiting sessions, oldest first. Places what may start now
    /// (only `own` in a process that never dispatches) and keeps a window for the rest.
    /// A pass for a new claim (`own`) leaves older windows as they are, and behind a long
    /// line just queues it (a later pass plans it as it nears the front); other passes
    /// look for earlier windows.
    pub(super) async fn serve_queue(
        &self,
        own: Option<&str>,
    ) -> Result<Vec<(String, Placed)>, CoreError> {
        let _one_at_a_time = self.ctx.allocation.lock().await;
        let dispatches = self
            .queue
            .enabled
            .load(std::sync::atomic::Ordering::SeqCst);
        if let Some(id) = own {
            // Another pass (for a claim made at the same moment) may have served it.
            if self.session(id).await?.state != SessionState::Requested {
                return Ok(Vec::new());
            }
            let ahead = self.ctx.store.count_queued().await?;
            if ahead >= PLANNED as i64 {
                let detail = format!("waiting in the queue behind {ahead} claims");
                let event = self
                    .ctx
                    .store
                    .transition(id, SessionState::Queued, &detail)
                    .await?;
                self.ctx.publish(event);
                return Ok(vec![(id.to_string(), Placed::NoRoom)]);
            }
        }
        let queue = self.queue_now(false).await?;
        let mut states = queue.states();
        let mut holds = queue.holds.clone();
        let waits: Vec<Waiting<'_>> = queue
            .waiting
            .iter()
            .enumerate()
            .map(|(i, s)| Waiting {
                profile: &s.profile,
                duration_ms: self.hold_ms(s),
                window: queue.windows.get(&s.id).map(|(w, _)| *w),
                may_place: dispatches || own == Some(s.id.as_str()),
                may_plan: i < PLANNED,
                owner: s.course_id.0,
            })
            .collect();
        let replan = if own.is_some() {
            Replan::None
        } else {
            Replan::All
        };
        let steps = serve(
            &mut states,
            &mut holds,
            &waits,
            &queue.booked,
            queue.now_ms,
            replan,
            Policy::default(),
        );
        let mut out = Vec::with_capacity(steps.len());
        for (session, step) in queue.waiting.iter().zip(steps) {
            // Each claim's step stands on its own: one that fails waits for the next pass,
            // and a placed claim is launched at once, so neither an error later in the
            // pass nor a dropped request strands what was already placed.
            let step = async { Ok::<_, CoreError>(match step {
                Step::Place(decision) => match self.budget_refusal(session, own).await? {
                    Some(reason) => {
                        self.ctx.fail(&session.id, &reason).await?;
                        Placed::NotWaiting
                    }
                    None => {
                        self.hold(session, &queue.fleet[decision.gpu_index], &decision)
                            .await?
                    }
                },
                Step::Wait(window) => {
                    self.wait_in_queue(session, "").await?;
                    let same = queue
                        .windows
                        .get(&session.id)
                        .is_some_and(|(w, _)| *w == window);
                    if !same {
                        let uuid = &queue.fleet[window.gpu].info.uuid;
                        self.ctx
                            .store
                            .keep_queue_window(
                                &session.id,
                                uuid,
                                window.mask,
                                window.from_ms,
                                window.until_ms,
                            )
                            .await?;
                        // The shared read of the queue (and its estimates) is stale now.
                        self.ctx.all_changes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    Placed::NoRoom
                }
                Step::WaitUnplanned => {
                    self.wait_in_queue(session, "").await?;
                    Placed::NoRoom
                }
                Step::NoSlot(MigError::NoRoom { reason, .. }) => {
                    self.wait_in_queue(session, &reason).await?;
                    Placed::NoRoom
                }
                // Offered only by GPUs out of service now (drained, or not answering):
                // it waits for one to return, as the drain warned.
                Step::NoSlot(_) if self.known_profiles().await?.contains(&session.profile) => {
                    self.wait_in_queue(session, "no GPU that offers this size takes sessions now").await?;
                    Placed::NoRoom
                }
                Step::NoSlot(e) => {
                    self.ctx.fail(
                        &session.id,
                        &format!("cannot place {}: {e}", session.profile),
                    )
                    .await?;
                    Placed::NotWaiting
                }
            }) };
            let placed = match step.await {
                Ok(Placed::Yes) => {
                    self.ctx.spawn_launch(session.id.clone());
                    Placed::Yes
                }
                Ok(placed) => placed,
                Err(e) => {
                    tracing::warn!(session = %session.id, error = %e, "queue: this claim waits for the next pass");
                    Placed::NoRoom
                }
            };
            out.push((session.id.clone(), placed));
        }
        // Stale rows are never read (the read joins on waiting sessions); a pass for a
        // new claim leaves the clean-up to the queue's own passes.
        if own.is_none() {
            self.ctx.store.drop_stale_queue_windows().await?;
        }
        Ok(out)
    }

    async fn portal_made_instance(&self, at: &SlicePlacement) -> Result<bool, CoreError> {
        let store = &self.ctx.store;
        if store.portal_created_instance_at(&at.gpu_uuid, at.profile_id, at.start).await? {
            return Ok(true);
        }
        let prepared = store.prepared_instances().await?;
        Ok(prepared.iter().any(|(uuid, profile, start)| *uuid == at.gpu_uuid && *profile == at.profile_id && *start == at.start))
    }

    /// Why a claim that waited may not start now its turn has come: its student's budget
    /// no longer pays for the shortest start (it was checked when the claim was made; a
    /// claim being made now is not checked twice).
    async fn budget_refusal(&self, session: &WaitingClaim, own: Option<&str>) -> Result<Option<String>, CoreError> {
        if own == Some(session.id.as_str()) {
            return Ok(None);
        }
        let store = &self.ctx.store;
        let policy = crate::courses::policy_of(store, &self.ctx.config, session.course_id).await?;
        let now = self.now_ms();
        let Some(budget) = crate::quotas::budget_at(store, &policy, session.course_id, session.user_id, now).await? else {
            return Ok(None);
        };
        Ok((!self.budget_starts(&budget, &session.profile)).then(|| {
            format!(
                "not started: while it waited, the slice-hours left stopped covering {} minutes of a {}: {}",
                self.ctx.config.quotas.min_launch_minutes,
                session.profile,
                budget.summary()
            )
        }))
    }

    /// A requested session that cannot start now becomes `queued`.
    async fn wait_in_queue(&self, session: &WaitingClaim, reason: &str) -> Result<(), CoreError> {
        if session.state != SessionState::Requested.as_str() {
            return Ok(());
        }
        let detail = if reason.is_empty() {
            format!("no {} slice is free; waiting in the queue", session.profile)
        } else {
            format!(
                "no {} slice is free ({reason}); waiting in the queue",
                session.profile
            )
        };
        let event = self
            .ctx
            .store
            .transition(&session.id, SessionState::Queued, &detail)
            .await?;
        self.ctx.publish(event);
        Ok(())
    }

    /// Holds the decided slice in the database: the session becomes `allocating`.
    async fn hold(
        &self,
        session: &WaitingClaim,
        gpu: &GpuNow,
        decision: &Decision,
    ) -> Result<Placed, CoreError> {
        let profile = gpu
            .catalog
            .profile_by_id(decision.placement.profile_id)
            .map_err(|e| CoreError::Gpu(e.to_string()))?;
        let mask = profile.mask_at(decision.placement.start).unwrap_or(0);
        let slices: Vec<u8> = (0..8u8).filter(|bit| mask & (1 << bit) != 0).collect();
        let placement = SlicePlacement {
            gpu_uuid: gpu.info.uuid.clone(),
            gpu_index: gpu.info.index,
            profile_id: decision.placement.profile_id,
            start: decision.placement.start,
            label: decision.placement.describe(&gpu.catalog),
        };
        // An existing instance the portal made (prepared for a booked lab, or left by an
        // earlier session) is the portal's to destroy at release too: the queue plans with
        // a dynamic GPU's slices free again once a hold ends. An admin's instance stays.
        let created = decision.action == slicehub_mig::Action::Create
            || (gpu.is_dynamic() && self.portal_made_instance(&placement).await?);
        let detail = format!(
            "GPU {} slice {}: {}",
            gpu.info.index, placement.label, decision.explanation
        );
        let event = self
            .ctx
            .store
            .hold_slice(&session.id, &placement, &slices, created, &detail)
            .await?;
        Ok(if self.ctx.publish(event) {
            Placed::Yes
        } else {
            Placed::NotWaiting
        })
    }
}

impl Sessions {
    /// Tries to place waiting sessions, oldest first, in the background (only in the
    /// serving portal).
    pub(super) fn spawn_dispatch(&self) {
        if !self.queue.enabled.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            if let Err(e) = this.dispatch().await {
                tracing::warn!(error = %e, "could not place queued sessions");
            }
        });
    }

    /// Places every waiting session that may start now (see `queue.rs`) and launches it.
    /// Returns how many were placed.
    pub async fn dispatch(&self) -> Result<usize, CoreError> {
        use std::sync::atomic::Ordering;
        let Ok(_one_pass) = self.queue.one_pass.try_lock() else {
            self.queue.again.store(true, Ordering::SeqCst);
            return Ok(0);
        };
        let mut placed = 0;
        loop {
            self.queue.again.store(false, Ordering::SeqCst);
            // The pass launches what it places.
            placed += self.serve_queue(None).await?.iter().filter(|(_, outcome)| *outcome == Placed::Yes).count();
            if !self.queue.again.load(Ordering::SeqCst) {
                return Ok(placed);
            }
        }
    }
}
