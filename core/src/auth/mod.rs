//! Accounts and who may do what: argon2id passwords, login sessions stored in the
//! database, login throttling, the first administrator, account management, and the
//! one authorization rule (`authorize`).

mod api_tokens;
mod bootstrap;
mod callers;
mod external;
mod guard;
mod header_sign_in;
mod login;
mod password;
mod ratelimit;
mod logins;
pub(crate) mod tokens;
mod users;
pub mod validate;

pub use api_tokens::{
    scopes_of, scopes_text, token_from_authorization, NewToken, Scope, TokenCaller, TokenRequest, API_TOKEN_DAYS,
    API_TOKEN_PREFIX, MAX_API_TOKENS,
};
pub use bootstrap::{ensure_first_admin, Bootstrap, FIRST_ADMIN_USERNAME};
pub use external::{account_name_from, apply_group_roles, ExternalIdentity, ExternalSignInError, PasswordDirectory};
pub use guard::{authorize, Action, Caller, Denied};
pub use header_sign_in::{header_text, MAX_GROUPS_HEADER_BYTES, MAX_HEADER_VALUE_BYTES};
pub use login::{Authenticator, LoginError, LoginOk};
pub use password::{
    check_new_password, hash_parameters, PasswordHasher, ARGON2_ITERATIONS, ARGON2_LANES,
    ARGON2_MEMORY_KIB, MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS,
};
pub use ratelimit::{Attempt, Limit, LoginLimiter, LoginLimits, Pace};
pub use logins::{caller_of, LoginPolicy};
pub use tokens::{new_session_token, one_time_password, token_sha256, SESSION_TOKEN_LEN};
pub use users::{
    add_user, reset_password, set_admin, set_disabled, set_password, CreatedUser, NewUser,
};
