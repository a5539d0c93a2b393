//! Personal access tokens on the account page: list, make (shown once), revoke.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// One of the caller's tokens; the secret itself is never shown again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TokenView {
    pub id: i64,
    pub name: String,
    pub scopes: Vec<String>,
    pub created: String,
    pub expires: String,
    /// When and from where it was last used; `never` before its first use.
    pub last_used: String,
}

/// A token just made: the secret, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeToken {
    pub secret: String,
    pub token: TokenView,
}

/// A scope the caller may give a token, with what it allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeChoice {
    pub name: String,
    /// The form field's name (`course:manage` is `course_manage`).
    pub field: String,
    pub meaning: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokensOverview {
    pub tokens: Vec<TokenView>,
    pub scopes: Vec<ScopeChoice>,
}

#[server(endpoint = "my_tokens")]
pub async fn my_tokens() -> Result<TokensOverview, AppError> {
    use super::ssr::{require, services, Action};
    use slicehub_core::auth::Scope;
    let caller = require(Action::ViewOwnAccount).await?;
    let slicehub_core::auth::Caller::User { id, .. } = &caller else {
        return Err(AppError::internal("not signed in"));
    };
    let services = services()?;
    let rows = services.auth.api_tokens_of(*id).await?;
    let scopes = Scope::ALL
        .into_iter()
        .filter(|s| s.fits(&caller))
        .map(|s| ScopeChoice { name: s.name().into(), field: s.name().replace(':', "_"), meaning: s.describe().into() })
        .collect();
    Ok(TokensOverview { tokens: rows.into_iter().map(ssr::token_view).collect(), scopes })
}

/// Makes a token; each scope is a checkbox (`read`, `sessions`, `course_manage`, `admin`).
#[server(endpoint = "create_token")]
pub async fn create_token(
    name: String,
    days: u32,
    read: Option<String>,
    sessions: Option<String>,
    course_manage: Option<String>,
    admin: Option<String>,
) -> Result<MadeToken, AppError> {
    use super::ssr::{require, services, Action};
    use slicehub_core::auth::TokenRequest;
    let caller = require(Action::ViewOwnAccount).await?;
    let picked = [("read", read), ("sessions", sessions), ("course:manage", course_manage), ("admin", admin)];
    let scopes = picked.into_iter().filter(|(_, on)| on.is_some()).map(|(s, _)| s.to_string()).collect();
    let made = services()?
        .auth
        .create_api_token(&caller, &TokenRequest { name, scopes, days, made_by: None })
        .await?;
    Ok(MadeToken { secret: made.secret, token: ssr::token_view(made.row) })
}

#[server(endpoint = "revoke_token")]
pub async fn revoke_token(id: i64) -> Result<(), AppError> {
    use super::ssr::{require, services, Action};
    let caller = require(Action::ViewOwnAccount).await?;
    services()?.auth.revoke_api_token(&caller, id).await?;
    Ok(())
}

#[cfg(feature = "ssr")]
pub mod ssr {
    use super::TokenView;
    use crate::components::time::utc_text as day_of;

    pub fn token_view(row: slicehub_core::store::ApiTokenRow) -> TokenView {
        TokenView {
            id: row.id,
            name: row.name,
            scopes: row.scopes.split_whitespace().map(str::to_string).collect(),
            created: day_of(row.created_at),
            expires: row.expires_at.map_or_else(|| "never".to_string(), day_of),
            last_used: match (row.last_used_at, row.last_used_from) {
                (Some(at), Some(from)) => format!("{} from {from}", day_of(at)),
                (Some(at), None) => day_of(at),
                _ => "never".to_string(),
            },
        }
    }
}
