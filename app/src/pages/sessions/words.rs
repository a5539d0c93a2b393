//! A session's state and ending in plain words.

use crate::views::{SessionKind, SessionState, SessionView};

/// The badge's word and colour.
pub fn badge(s: &SessionView) -> (&'static str, &'static str) {
    badge_of(s.state, s.kind, s.exit_code)
}

/// The badge of a session in `state` of `kind`.
pub fn badge_of(state: SessionState, kind: SessionKind, exit_code: Option<i64>) -> (&'static str, &'static str) {
    use SessionKind::Job;
    use SessionState::*;
    match (state, kind) {
        (Requested | Queued, _) => ("waiting", "warn"),
        (Allocating | Creating | Starting, _) => ("starting", "warn"),
        (Ready, Job) => ("running", "ok"),
        (Ready, _) => ("ready", "ok"),
        (Stopping, _) => ("stopping", "warn"),
        (Ended, Job) if exit_code == Some(0) => ("finished", "ok"),
        (Failed, _) => ("failed", "down"),
        (Ended, _) => ("ended", "off"),
    }
}

/// Said to a student waiting in line when the queue can promise no start time.
pub const NO_PROMISE: &str = "No start time can be promised right now: the GPUs that offer this size are busy with booked labs or taken out of service by an administrator. Your place in line is kept.";

/// What is happening now and what to do, for a session that has not ended.
pub fn now(s: &SessionView) -> String {
    use SessionState::*;
    let job = s.kind == SessionKind::Job;
    match s.state {
        Requested | Queued => {
            let place = match s.queue_position {
                Some(1) => ": you are next in line".to_string(),
                Some(n) => format!(
                    ": {} ahead of you in line",
                    crate::pages::count((n as usize).saturating_sub(1), "claim is", "claims are")
                ),
                None => String::new(),
            };
            // In line for this machine's GPUs, yet the queue can promise no start (a wait
            // on the Slurm cluster has Slurm's own words instead).
            let unpromised = s.state == Queued
                && s.queue_position.is_some()
                && s.eta.is_none()
                && s.cluster_wait.is_none();
            let next = if unpromised {
                NO_PROMISE
            } else {
                "It starts by itself when one frees up; you can leave this page."
            };
            format!("Waiting for a free {} slice{place}. {next}", s.profile)
        }
        Allocating | Creating | Starting if job => "Setting up the GPU slice and starting your command…".into(),
        Allocating | Creating | Starting => "Setting up the GPU slice and starting JupyterLab, usually a few seconds…".into(),
        Ready if job => "Running. Its output appears below as it prints.".into(),
        Ready => "JupyterLab is ready. Files you save in your home folder are kept after the session ends.".into(),
        Stopping => "Stopping and giving the slice back…".into(),
        Ended | Failed => String::new(),
    }
}

/// One line on why it ended.
pub fn ending(s: &SessionView) -> String {
    match (s.kind, s.state, s.exit_code) {
        (SessionKind::Job, SessionState::Ended, Some(0)) => "Finished without errors.".into(),
        (SessionKind::Job, SessionState::Failed, Some(code)) => format!(
            "The command failed with exit code {code}. Its output, under Details, says why; if a file is missing, put it in your home folder first."
        ),
        _ => sentence(&s.reason),
    }
}

fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
        None => return "Ended.".into(),
    };
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{now, NO_PROMISE};
    use crate::views::{Eta, SessionKind, SessionState, SessionView};

    fn waiting(place: Option<u32>, eta: Option<Eta>) -> SessionView {
        SessionView {
            id: "s-1".into(),
            course_id: crate::views::CourseId(1),
            course: "CS-101".into(),
            kind: SessionKind::Job,
            profile: "1g.10gb".into(),
            image: "busybox".into(),
            command: "sleep 60".into(),
            state: SessionState::Queued,
            live: true,
            reason: String::new(),
            placement: None,
            mig_uuid: None,
            exit_code: None,
            requested_at: "10:00:00 UTC".into(),
            requested_at_ms: 0,
            ends_at: None,
            ends_at_ms: None,
            time_left: None,
            stops_for: "time limit".into(),
            warn_before_ms: 0,
            ran_for: None,
            ready_at_ms: None,
            end_to_tell: false,
            command_text: "sleep 60".into(),
            steps: Vec::new(),
            log_tail: String::new(),
            open_url: None,
            queue_position: place,
            eta,
            cluster_wait: None,
            idle: None,
        }
    }

    #[test]
    fn a_wait_without_a_promise_says_why_and_keeps_the_place() {
        let text = now(&waiting(Some(1), None));
        assert!(
            text.starts_with("Waiting for a free 1g.10gb slice: you are next in line. "),
            "{text}"
        );
        assert!(text.ends_with(NO_PROMISE), "{text}");
        let text = now(&waiting(Some(3), None));
        assert!(
            text.contains("2 claims are ahead of you in line. No start time can be promised"),
            "{text}"
        );
    }

    #[test]
    fn a_wait_with_a_promise_reads_as_before() {
        let eta = Eta {
            about_ms: 1,
            about: "10:01:00 UTC".into(),
            latest_ms: 2,
            latest: "10:02:00 UTC".into(),
        };
        assert_eq!(
            now(&waiting(Some(1), Some(eta))),
            "Waiting for a free 1g.10gb slice: you are next in line. It starts by itself when one frees up; you can leave this page."
        );
        assert_eq!(
            now(&waiting(None, None)),
            "Waiting for a free 1g.10gb slice. It starts by itself when one frees up; you can leave this page."
        );
    }
}
