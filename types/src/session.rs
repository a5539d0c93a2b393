//! A GPU session's state machine, its kind and the pool it runs in, as words both sides
//! read.

use serde::{Deserialize, Serialize};

use crate::words::UnknownName;

/// The lifecycle of a session (DESIGN.md). Every change is written to the database first,
/// then published as an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Requested,
    /// Waiting for a slice of its profile to become free.
    Queued,
    /// A placement is chosen and held; the MIG instance is being created.
    Allocating,
    /// The container is being created.
    Creating,
    /// The container runs; JupyterLab has not answered yet.
    Starting,
    /// JupyterLab answers (notebook) or the command runs (job).
    Ready,
    Stopping,
    Ended,
    Failed,
}

impl SessionState {
    pub const ALL: [SessionState; 9] = [
        SessionState::Requested,
        SessionState::Queued,
        SessionState::Allocating,
        SessionState::Creating,
        SessionState::Starting,
        SessionState::Ready,
        SessionState::Stopping,
        SessionState::Ended,
        SessionState::Failed,
    ];

    /// Waiting, launching or running: what a stop or a failure may end. (`stopping` is
    /// already being ended by someone.) The first six of [`SessionState::ALL`].
    pub const ACTIVE: &'static [SessionState] = Self::ALL.split_at(6).0;

    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Requested => "requested",
            SessionState::Queued => "queued",
            SessionState::Allocating => "allocating",
            SessionState::Creating => "creating",
            SessionState::Starting => "starting",
            SessionState::Ready => "ready",
            SessionState::Stopping => "stopping",
            SessionState::Ended => "ended",
            SessionState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<SessionState> {
        SessionState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Ended and failed sessions hold nothing and never change again.
    pub fn is_final(self) -> bool {
        matches!(self, SessionState::Ended | SessionState::Failed)
    }

    /// The states a session may be in just before entering `self`.
    pub fn allowed_from(self) -> &'static [SessionState] {
        use SessionState::*;
        match self {
            Requested => &[],
            Queued => &[Requested],
            Allocating => &[Requested, Queued],
            Creating => &[Allocating],
            Starting => &[Creating],
            Ready => &[Starting],
            Stopping => SessionState::ACTIVE,
            Ended | Failed => &[
                Requested, Queued, Allocating, Creating, Starting, Ready, Stopping,
            ],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SessionKind {
    Notebook,
    Job,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Notebook => "notebook",
            SessionKind::Job => "job",
        }
    }

    pub fn parse(text: &str) -> Option<SessionKind> {
        match text {
            "notebook" => Some(SessionKind::Notebook),
            "job" => Some(SessionKind::Job),
            _ => None,
        }
    }
}

/// Where a session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SessionPool {
    /// This machine's Docker engine, on a slice SliceHub's own allocator placed.
    Local,
    /// A job of the Slurm cluster; Slurm places it on a node's MIG GRES.
    Slurm,
}

impl SessionPool {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionPool::Local => "",
            SessionPool::Slurm => "slurm",
        }
    }

    pub fn parse(text: &str) -> Option<SessionPool> {
        match text {
            "" => Some(SessionPool::Local),
            "slurm" => Some(SessionPool::Slurm),
            _ => None,
        }
    }
}

crate::words::words! {
    SessionState, "session state";
    SessionKind, "session kind";
    SessionPool, "session pool";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_from_its_word_and_its_json() {
        for state in SessionState::ALL {
            assert_eq!(SessionState::try_from(state.to_string()), Ok(state));
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(json, format!("\"{}\"", state.as_str()));
            assert_eq!(serde_json::from_str::<SessionState>(&json).unwrap(), state);
        }
    }

    #[test]
    fn a_word_this_build_does_not_know_is_an_error_naming_it() {
        let err = SessionState::try_from("exploded".to_string()).unwrap_err();
        assert_eq!(err.to_string(), "unknown session state \"exploded\"");
        assert!(SessionKind::try_from("gpu".to_string()).is_err());
        assert_eq!(SessionPool::try_from(String::new()), Ok(SessionPool::Local));
        assert!(serde_json::from_str::<SessionState>("\"Ready\"").is_err());
    }
}
