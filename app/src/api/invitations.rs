//! Invitations to courses: an instructor's roster named the caller's existing account.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::InvitationView;

/// The courses the caller is invited to.
#[server(endpoint = "my_invitations")]
pub async fn my_invitations() -> Result<Vec<InvitationView>, AppError> {
    use super::ssr::{require, services, Action, Caller};
    let caller = require(Action::ListOwnCourses).await?;
    let Caller::User { id, .. } = caller else {
        return Ok(Vec::new());
    };
    let invitations = services()?.store.invitations_of_user(id).await?;
    Ok(invitations
        .into_iter()
        .map(|i| InvitationView {
            code: i.course.code,
            title: i.course.title,
            invited_by: i.invited_by,
        })
        .collect())
}

/// Joins the course (`join`) or declines; either way the invitation is answered.
#[server(endpoint = "answer_invitation")]
pub async fn answer_invitation(code: String, join: bool) -> Result<(), AppError> {
    use super::ssr::{actor, from_core, require, services, Action, Caller};
    let caller = require(Action::ListOwnCourses).await?;
    let Caller::User { id, .. } = &caller else {
        return Ok(());
    };
    slicehub_core::courses::answer_invitation(&services()?.store, code.trim(), *id, join, &actor(&caller))
        .await
        .map_err(from_core)
}
