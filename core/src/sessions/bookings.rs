//! Booked lab sessions: a course keeps N slices of a profile for a time window (once or
//! weekly). Booking checks that the slices can be guaranteed; while a window is near, the
//! queue keeps those slices from other courses' sessions that would still run then, and
//! the course's own students may use them besides the free pool.

use std::collections::HashMap;

use slicehub_mig::{allocate_avoiding, Booked, GpuState, Placement, Policy, Window};

use super::queue_now::{allocator_states, GpuNow};
use super::booking_model::{Booking, BookingRequest};
use super::service::Sessions;
use crate::store::{BookingRow, NewBooking, WEEK_MS};
use crate::CoreError;
use crate::CourseId;

/// Windows this far ahead are kept by the queue (a session's limit is at most a week).
const HORIZON_MS: i64 = WEEK_MS + 24 * 3_600_000;
/// A booking window lasts at most this long.
const MAX_WINDOW_MS: i64 = 12 * 3_600_000;

impl Sessions {
    /// Live bookings with their slots, soonest first.
    pub async fn bookings(&self) -> Result<Vec<Booking>, CoreError> {
        let now = self.now_ms();
        let store = &self.ctx.store;
        let rows = store.live_bookings(now).await?;
        let mut slots: HashMap<i64, Vec<(String, u8)>> = HashMap::new();
        let mut placements: HashMap<i64, Vec<(String, Placement)>> = HashMap::new();
        for s in store.live_booking_slots(now).await? {
            let at = Placement::new(s.profile_id as u32, s.start_slice as u8);
            placements.entry(s.booking_id).or_default().push((s.gpu_uuid.clone(), at));
            slots.entry(s.booking_id).or_default().push((s.gpu_uuid, s.mask as u8));
        }
        Ok(rows
            .into_iter()
            .map(|row| Booking {
                slots: slots.remove(&row.id).unwrap_or_default(),
                placements: placements.remove(&row.id).unwrap_or_default(),
                row,
            })
            .collect())
    }

    /// The windows the queue keeps for bookings from now to the horizon, each with the
    /// course it is kept for.
    pub(super) async fn booked_windows(&self, fleet: &[GpuNow], now_ms: i64) -> Result<Vec<Booked>, CoreError> {
        let mut out = Vec::new();
        // Each course's time limit, read once however many of its bookings are near.
        let mut tails: HashMap<CourseId, i64> = HashMap::new();
        for booking in self.bookings().await? {
            let near: Vec<(i64, i64)> = booking.windows().filter(|&(s, e)| e > now_ms && s < now_ms + HORIZON_MS).collect();
            if near.is_empty() {
                continue;
            }
            let course = booking.row.course_id;
            let tail_ms = match tails.get(&course) {
                Some(&tail) => tail,
                None => {
                    let policy = crate::courses::policy_of(&self.ctx.store, &self.ctx.config, course).await?;
                    *tails.entry(course).or_insert(self.hold_for_minutes(policy.max_minutes))
                }
            };
            for (from_ms, until_ms) in near {
                for (uuid, mask) in &booking.slots {
                    if let Some(gpu) = fleet.iter().position(|g| &g.info.uuid == uuid) {
                        let window = Window { gpu, mask: *mask, from_ms, until_ms };
                        out.push(Booked { window, owner: booking.row.course_id.0, tail_ms });
                    }
                }
            }
        }
        Ok(out)
    }

    /// Books the slices if they can be guaranteed, and says why not otherwise.
    pub async fn book(&self, req: &BookingRequest) -> Result<i64, CoreError> {
        let now = self.now_ms();
        check_request(req, now)?;
        self.require_known_profile(&req.profile).await?;
        let _one_at_a_time = self.ctx.allocation.lock().await;
        // Labs of the course earlier in the request's first week count too, ended or not.
        let since = super::booking_limits::week_start_ms(req.starts_at_ms);
        let course_bookings: Vec<Booking> = self
            .ctx
            .store
            .live_bookings(since)
            .await?
            .into_iter()
            .filter(|row| row.course_id == req.course_id)
            .map(|row| Booking { row, slots: Vec::new(), placements: Vec::new() })
            .collect();
        let limits = &self.ctx.config.limits;
        super::booking_limits::check_booking_limits(
            req,
            &course_bookings,
            limits.booking_days_ahead,
            limits.booking_slice_hours_per_week,
            now,
        )?;
        let queue = self.queue_now(false).await?;
        let asked = Booking {
            row: BookingRow {
                id: 0,
                course_id: req.course_id,
                code: String::new(),
                profile: req.profile.clone(),
                slices: i64::from(req.slices),
                starts_at: req.starts_at_ms,
                ends_at: req.ends_at_ms,
                weeks: i64::from(req.weeks),
                created_by: req.by.clone(),
                created_at: now,
            },
            slots: Vec::new(),
            placements: Vec::new(),
        };
        let mut avoid = vec![0u8; queue.fleet.len()];
        let mut booked_by_others = vec![0u8; queue.fleet.len()];
        for other in self.bookings().await? {
            if other.windows().any(|(s, e)| asked.overlaps(s, e)) {
                for (uuid, mask) in &other.slots {
                    if let Some(g) = queue.fleet.iter().position(|f| &f.info.uuid == uuid) {
                        booked_by_others[g] |= mask;
                    }
                }
            }
        }
        let mut in_use = vec![0u8; queue.fleet.len()];
        if !req.override_running {
            let states = queue.states();
            // An instance that outlives its session (an administrator's) is in use for good.
            for hold in queue.holds.iter().filter(|h| h.stays || asked.overlaps(queue.now_ms, h.until_ms)) {
                let mask = states[hold.gpu]
                    .catalog
                    .profile_by_id(hold.placement.profile_id)
                    .ok()
                    .and_then(|p| p.mask_at(hold.placement.start))
                    .unwrap_or(0xff);
                in_use[hold.gpu] |= mask;
            }
            // The course's sessions started late in the window may run their limit past it.
            let policy = crate::courses::policy_of(&self.ctx.store, &self.ctx.config, req.course_id).await?;
            let tail = self.hold_for_minutes(policy.max_minutes);
            for (window, _) in queue.windows.values().filter(|(w, _)| asked.overlaps(w.from_ms - tail, w.until_ms)) {
                in_use[window.gpu] |= window.mask;
            }
        }
        for g in 0..avoid.len() {
            avoid[g] = booked_by_others[g] | in_use[g];
        }
        let mut future: Vec<GpuState<'_>> = queue.fleet.iter().map(future_state).collect();
        let mut slots = Vec::new();
        while slots.len() < req.slices as usize {
            let Ok(decision) = allocate_avoiding(&future, &req.profile, Policy::default(), &avoid) else { break };
            let gpu = &queue.fleet[decision.gpu_index];
            let mask = gpu
                .catalog
                .profile_by_id(decision.placement.profile_id)
                .ok()
                .and_then(|p| p.mask_at(decision.placement.start))
                .unwrap_or(0);
            if future[decision.gpu_index].apply(&decision).is_err() {
                break;
            }
            slots.push((gpu.info.uuid.clone(), decision.placement.profile_id, decision.placement.start, mask));
        }
        if slots.len() < req.slices as usize {
            return Err(CoreError::InvalidRequest(shortfall(req, slots.len(), &booked_by_others, &in_use)));
        }
        let id = self
            .ctx
            .store
            .insert_booking(&NewBooking {
                course_id: req.course_id,
                profile: &req.profile,
                starts_at: req.starts_at_ms,
                ends_at: req.ends_at_ms,
                weeks: i64::from(req.weeks),
                created_by: &req.by,
                slots: &slots,
            })
            .await?;
        let detail = format!(
            "{} × {} from {} to {}{}{}",
            req.slices,
            req.profile,
            crate::clock::iso_utc(req.starts_at_ms),
            crate::clock::iso_utc(req.ends_at_ms),
            if req.weeks > 1 { format!(", weekly for {} weeks", req.weeks) } else { String::new() },
            if req.override_running { " (admin override)" } else { "" }
        );
        self.ctx.store.audit(&req.by, "booking.create", &format!("course {} booking {id}", req.course_id), &detail).await?;
        drop(_one_at_a_time);
        self.spawn_dispatch();
        Ok(id)
    }

    /// Cancels a live booking of the course; the slices return at once.
    pub async fn cancel_booking(&self, course_id: CourseId, id: i64, by: &str) -> Result<(), CoreError> {
        if !self.ctx.store.cancel_booking(course_id, id).await? {
            return Err(CoreError::NotFound(format!("no booking {id} of this course is still to come")));
        }
        self.ctx.store.audit(by, "booking.cancel", &format!("course {course_id} booking {id}"), "").await?;
        self.spawn_dispatch();
        Ok(())
    }
}

/// A GPU as it will be when a window opens: a dynamic one empty (the portal creates
/// instances as needed), a static one with its instances.
fn future_state(gpu: &GpuNow) -> GpuState<'_> {
    let mut state = allocator_states(std::slice::from_ref(gpu)).remove(0);
    state.held.clear();
    if state.mode == slicehub_mig::Mode::Dynamic {
        state.layout = slicehub_mig::Layout::new();
    }
    state
}

fn check_request(req: &BookingRequest, now: i64) -> Result<(), CoreError> {
    let bad = |text: String| Err(CoreError::InvalidRequest(text));
    if req.slices == 0 || req.slices > 64 {
        return bad(format!("A booking keeps 1 to 64 slices, not {}.", req.slices));
    }
    if req.ends_at_ms <= req.starts_at_ms {
        return bad("The window must end after it starts.".into());
    }
    if req.ends_at_ms - req.starts_at_ms > MAX_WINDOW_MS {
        return bad("A booked window lasts at most 12 hours.".into());
    }
    if req.starts_at_ms <= now {
        return bad("That time has passed: a booking starts in the future.".into());
    }
    if req.weeks == 0 || req.weeks > 26 {
        return bad(format!("A weekly booking repeats 1 to 26 times, not {}.", req.weeks));
    }
    Ok(())
}

fn shortfall(req: &BookingRequest, found: usize, booked: &[u8], in_use: &[u8]) -> String {
    let mut why = Vec::new();
    if booked.iter().any(|&m| m != 0) {
        why.push("other bookings keep slices then");
    }
    if in_use.iter().any(|&m| m != 0) {
        why.push("sessions running or promised a start then would still hold slices (an admin may override; they are never stopped)");
    }
    if why.is_empty() {
        why.push("the GPUs do not have that many");
    }
    format!(
        "Only {found} of the {} {} slices can be guaranteed for that time: {}. Nothing was booked.",
        req.slices,
        req.profile,
        why.join("; ")
    )
}
