//! LTI 1.3 as a tool: launches from an LMS (Canvas, Moodle, Blackboard, D2L, Sakai) and
//! the course roster read from it (Names and Role Provisioning Services).

mod launch;
mod names_roles;
mod platform_keys;
mod roster_sync;
mod tool_key;

pub use launch::{begin_login, verify_launch, Launch, LoginInitiation, LoginRedirect, LAUNCH_MS};
pub use names_roles::read_members;
pub use platform_keys::PlatformKeys;
pub use roster_sync::sync_course_roster;
pub use tool_key::ToolKey;
