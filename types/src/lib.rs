//! What the server and the browser both say: about a GPU session, a course role, and a
//! course policy as typed. `core` keeps its state
//! machine in these words and `app`'s views carry them, so a page compares
//! `SessionState::Ready`, never the string `"ready"`.

mod ids;
mod policy_form;
mod role;
mod session;
mod words;

pub use ids::{CourseId, UserId};
pub use policy_form::PolicyForm;
pub use role::Role;
pub use session::{SessionKind, SessionPool, SessionState};
pub use words::UnknownName;
