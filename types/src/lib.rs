//! What the server and the browser both say about a GPU session. `core` keeps its state
//! machine in these words and `app`'s views carry them, so a page compares
//! `SessionState::Ready`, never the string `"ready"`.

mod session;

pub use session::{SessionKind, SessionPool, SessionState, UnknownName};
