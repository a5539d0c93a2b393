//! When a waiting session will start: "about" (if the sessions now running last as long
//! as recent ones of their size did) and "at the latest" (the window kept for it, which
//! holds if every session runs to its limit; see `queue.rs`).

use std::collections::HashMap;
use std::sync::OnceLock;

use slicehub_mig::{earliest_start, expected_starts, Hold, Policy};

use super::service::Sessions;
use super::queue_state::QueueEstimate;
use super::queue_now::{ExpectedPlan, HoldStart, QueueNow, TypicalLengths, PLANNED};
use crate::CoreError;
use crate::CourseId;

/// Sessions that ended in the last two weeks, at most this many, make the typical lengths.
const RECENT_SESSIONS: i64 = 2_000;
const RECENT_MS: i64 = 14 * 24 * 3_600_000;
/// Fewer recent sessions of a size than this say nothing about the next one: no "about".
const ENOUGH_HISTORY: usize = 5;
/// How long typical lengths are reused: a minute more of history hardly moves a median
/// of two weeks.
const TYPICAL_FRESH: std::time::Duration = std::time::Duration::from_secs(60);

impl Sessions {
    /// How long recent sessions of each profile ran, read again at most once per
    /// [`TYPICAL_FRESH`] of real time (a test clock that jumps days ahead sees lengths
    /// read up to a minute before).
    pub(super) async fn typical_lengths(&self, now_ms: i64) -> Result<TypicalLengths, CoreError> {
        let remembered = self.queue.typical.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some((at, typical)) = remembered {
            if at.elapsed() < TYPICAL_FRESH {
                return Ok(typical);
            }
        }
        let typical = self.read_typical_lengths(now_ms).await?;
        *self.queue.typical.lock().unwrap_or_else(|p| p.into_inner()) = Some((std::time::Instant::now(), typical.clone()));
        Ok(typical)
    }

    async fn read_typical_lengths(&self, now_ms: i64) -> Result<TypicalLengths, CoreError> {
        let mut by_profile: HashMap<String, Vec<i64>> = HashMap::new();
        for (profile, ms) in self
            .ctx
            .store
            .recent_session_lengths(now_ms - RECENT_MS, RECENT_SESSIONS)
            .await?
        {
            by_profile.entry(profile).or_default().push(ms);
        }
        Ok(by_profile
            .into_iter()
            .filter(|(_, lengths)| lengths.len() >= ENOUGH_HISTORY)
            .map(|(profile, mut lengths)| {
                lengths.sort_unstable();
                (profile, lengths[lengths.len() / 2])
            })
            .collect())
    }

    /// The estimate of every waiting session that has a window. Every student waiting
    /// reads this: it comes from the queue's shared read (`shared_queue.rs`), made once
    /// per read.
    pub async fn queue_estimates(&self) -> Result<HashMap<String, QueueEstimate>, CoreError> {
        let shared = self.shared_queue().await?;
        Ok(shared.estimates.get_or_init(|| self.estimates_of(&shared.queue, &shared.plan)).clone())
    }

    fn estimates_of(&self, queue: &QueueNow, plan: &OnceLock<ExpectedPlan>) -> HashMap<String, QueueEstimate> {
        if queue.waiting.is_empty() {
            return HashMap::new();
        }
        let abouts = &plan.get_or_init(|| self.expected(queue)).starts;
        queue
            .waiting
            .iter()
            .zip(abouts)
            .filter_map(|(s, about)| {
                let (window, _) = queue.windows.get(&s.id)?;
                let latest_ms = window.from_ms;
                Some((
                    s.id.clone(),
                    QueueEstimate {
                        about_ms: about.unwrap_or(latest_ms).min(latest_ms),
                        latest_ms,
                    },
                ))
            })
            .collect()
    }

    /// The waiting sessions' expected plan: each one's "about" start, the windows they
    /// take, and the holds as expected to end (running sessions lasting as long as recent
    /// ones of their size; never past their limit).
    pub(super) fn expected(&self, queue: &QueueNow) -> ExpectedPlan {
        let now = queue.now_ms;
        let holds: Vec<Hold> = queue
            .holds
            .iter()
            .zip(&queue.hold_starts)
            .map(|(h, start)| {
                let expected = start.as_ref().and_then(|s| expected_end(s, &queue.typical, now));
                Hold {
                    until_ms: expected.map_or(h.until_ms, |e| e.clamp(now + 60_000, h.until_ms.max(now + 60_000))),
                    ..*h
                }
            })
            .collect();
        let claims: Vec<(&str, i64)> = queue
            .waiting
            .iter()
            .take(PLANNED)
            .map(|s| (s.profile.as_str(), typical_hold(queue, &s.profile, self.hold_ms(s))))
            .collect();
        let (starts, taken) = expected_starts(&queue.states(), &holds, &claims, now, Policy::default());
        ExpectedPlan { starts, taken, holds }
    }

    /// For a claim of `profile` made now that would hold its slice for `hold_ms`: when it
    /// would start, if it must wait (None when it would start now or never). `plan` is
    /// the waiting sessions' [`Sessions::expected`] plan, made once for every profile.
    pub(super) fn wait_in(
        &self,
        queue: &QueueNow,
        plan: &ExpectedPlan,
        profile: &str,
        hold_ms: i64,
        course: Option<CourseId>,
    ) -> Option<QueueEstimate> {
        // Claims behind the planned ones have no window yet: a bound would ignore them.
        if queue.waiting.len() >= PLANNED {
            return None;
        }
        // Planned as the claim would be: booked windows with their tails, and behind the
        // claims of its size already waiting.
        let states = queue.states();
        let windows = queue.windows_promising(course);
        let from = queue.same_size_not_before(profile).unwrap_or(queue.now_ms).max(queue.now_ms);
        let slot = earliest_start(&states, &queue.holds, &windows, profile, from, hold_ms, Policy::default())?;
        if slot.at_ms <= queue.now_ms {
            return None;
        }
        let about = earliest_start(
            &states,
            &plan.holds,
            &plan.taken,
            profile,
            queue.now_ms,
            typical_hold(queue, profile, hold_ms),
            Policy::default(),
        )
        .map(|s| s.at_ms);
        Some(QueueEstimate { about_ms: about.unwrap_or(slot.at_ms).min(slot.at_ms), latest_ms: slot.at_ms })
    }
}

/// When a running session is expected to end: at a stop already announced, or when recent
/// sessions of its size ended, whichever is first. One that has outlived its size's typical
/// length is expected at its limit (None), not a minute from now again and again: that made
/// "about" slip a minute at a time.
fn expected_end(start: &HoldStart, typical: &TypicalLengths, now_ms: i64) -> Option<i64> {
    let typical_end = typical
        .get(&start.profile)
        .map(|t| start.started_ms + t)
        .filter(|end| *end > now_ms);
    match (typical_end, start.announced_stop_ms) {
        (Some(t), Some(a)) => Some(t.min(a)),
        (t, a) => t.or(a),
    }
}

/// How long a claim of `profile` is expected to hold its slice: as long as recent ones
/// did, at most `hold_ms`.
fn typical_hold(queue: &QueueNow, profile: &str, hold_ms: i64) -> i64 {
    queue.typical.get(profile).map_or(hold_ms, |t| (*t).min(hold_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(started_ms: i64, announced_stop_ms: Option<i64>) -> HoldStart {
        HoldStart { session_id: "s-a".into(), profile: "1g.10gb".into(), started_ms, announced_stop_ms }
    }

    #[test]
    fn a_session_past_its_typical_length_is_expected_at_a_known_end_not_a_minute_later() {
        let typical: TypicalLengths = [("1g.10gb".to_string(), 3_600_000)].into();
        let now = 10 * 3_600_000;
        // Within its typical length: then.
        assert_eq!(expected_end(&start(now - 600_000, None), &typical, now), Some(now + 3_000_000));
        // Past it, nothing announced: its limit (the caller keeps the hold's own end), the
        // same answer a minute later.
        assert_eq!(expected_end(&start(now - 7_200_000, None), &typical, now), None);
        assert_eq!(expected_end(&start(now - 7_200_000, None), &typical, now + 60_000), None);
        // An idle stop announced for it: that moment, whichever comes first.
        assert_eq!(expected_end(&start(now - 7_200_000, Some(now + 900_000)), &typical, now), Some(now + 900_000));
        assert_eq!(expected_end(&start(now - 600_000, Some(now + 9_000_000)), &typical, now), Some(now + 3_000_000));
        // No history for its size: only an announced stop says anything.
        assert_eq!(expected_end(&start(now, None), &TypicalLengths::new(), now), None);
    }
}
