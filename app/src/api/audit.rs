//! The audit log for administrators: filtered by who, what and when, a page at a time.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::AuditPageView;

/// Entries on one page.
pub const PAGE: i64 = 100;

#[server(endpoint = "audit_log")]
pub async fn audit_log(
    who: String,
    what: String,
    from: String,
    to: String,
    before: String,
) -> Result<AuditPageView, AppError> {
    use super::ssr::{from_core, require, services, Action};
    use crate::views::AuditRowView;
    use slicehub_core::audit_log::{AuditForm, AUDIT_KINDS};
    require(Action::ReadAuditLog).await?;
    let form = AuditForm { who, what, from, to };
    let before = match before.trim() {
        "" => Some(0),
        text => text.parse::<i64>().ok().filter(|n| *n > 0),
    };
    let (mut rows, problem) = match (form.query(), before) {
        (Ok(query), Some(before)) => (services()?.store.audit_page(&query, before, PAGE + 1).await?, None),
        (Err(slicehub_core::CoreError::InvalidRequest(m)), _) => (Vec::new(), Some(m)),
        (Err(e), _) => return Err(from_core(e)),
        (Ok(_), None) => (Vec::new(), Some("That page of the log does not exist: start again from the newest entries.".to_string())),
    };
    let older = (rows.len() as i64 > PAGE).then(|| {
        rows.truncate(PAGE as usize);
        rows.last().map_or(0, |r| r.id)
    });
    let mut text = form_urlencoded::Serializer::new(String::new());
    text.append_pair("who", form.who.trim());
    text.append_pair("what", form.what.trim());
    text.append_pair("from", form.from.trim());
    text.append_pair("to", form.to.trim());
    Ok(AuditPageView {
        who: form.who.trim().to_string(),
        what: form.what.trim().to_string(),
        from: form.from.trim().to_string(),
        to: form.to.trim().to_string(),
        kinds: AUDIT_KINDS.iter().map(|(p, w)| (p.to_string(), w.to_string())).collect(),
        entries: rows
            .into_iter()
            .map(|e| AuditRowView { id: e.id, at_ms: e.at_ms, actor: e.actor, action: e.action, subject: e.subject, detail: e.detail })
            .collect(),
        older,
        query: text.finish(),
        problem,
    })
}
