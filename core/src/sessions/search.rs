//! The administrators' view of every course's sessions: what is live and what ended in
//! the last week, filtered by course, user, GPU and state.

use super::SessionState;
use super::GpuSession;
use crate::store::SessionSearch;
use crate::{CoreError, Services};

/// The "State" choices: the word in the form and its meaning.
pub const STATE_FILTERS: [(&str, &str); 5] = [
    ("live", "Live: waiting, starting, running, stopping"),
    ("queued", "Waiting for a slice"),
    ("ready", "Running"),
    ("ended", "Ended"),
    ("failed", "Failed"),
];
/// Ended and failed sessions are listed for this long.
pub const RECENT_DAYS: i64 = 7;
const LIMIT: i64 = 200;

/// The filter form's fields as typed; every one may be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionFilter {
    /// A course code.
    pub course: String,
    pub user: String,
    /// A GPU index.
    pub gpu: String,
    /// One of [`STATE_FILTERS`]' words.
    pub state: String,
}

/// The sessions `filter` asks for at `now_ms`, live ones first, at most 200.
pub async fn find_sessions(services: &Services, filter: &SessionFilter, now_ms: i64) -> Result<Vec<GpuSession>, CoreError> {
    let states: Vec<SessionState> = match filter.state.trim() {
        "" => SessionState::ALL.to_vec(),
        "live" => SessionState::ALL.into_iter().filter(|s| !s.is_final()).collect(),
        word => match STATE_FILTERS.iter().find(|(w, _)| *w == word).and_then(|(w, _)| SessionState::parse(w)) {
            Some(state) => vec![state],
            None => {
                return Err(CoreError::InvalidRequest(format!(
                    "Unknown state “{}”: choose one from the list.",
                    word.chars().take(40).collect::<String>()
                )))
            }
        },
    };
    let user = filter.user.trim();
    if user.chars().count() > 64 {
        return Err(CoreError::InvalidRequest("A username has at most 64 characters.".into()));
    }
    crate::auth::validate::check_text("the username", user, 64, crate::auth::validate::Lines::One)
        .map_err(CoreError::InvalidRequest)?;
    let course_id = match filter.course.trim() {
        "" => None,
        code => Some(
            services
                .store
                .course_by_code(code)
                .await?
                .ok_or_else(|| CoreError::InvalidRequest(format!("There is no course {}.", code.chars().take(40).collect::<String>())))?
                .id,
        ),
    };
    let gpu_uuid = match filter.gpu.trim() {
        "" => String::new(),
        text => {
            let index: Option<u32> = text.parse().ok();
            let gpus = services.on_gpus(|b| b.list_gpus()).await?;
            gpus.into_iter()
                .find(|g| Some(g.index) == index)
                .map(|g| g.uuid)
                .ok_or_else(|| CoreError::InvalidRequest(format!("There is no GPU {}.", text.chars().take(12).collect::<String>())))?
        }
    };
    let search = SessionSearch {
        course_id,
        username: user.to_string(),
        gpu_uuid,
        states,
        since_ms: now_ms - RECENT_DAYS * 86_400_000,
        limit: LIMIT,
    };
    services.store.search_sessions(&search).await
}
