//! The audit log for administrators: who did what and when, filtered, newest first, a
//! hundred at a time, and the same filter as a CSV download. A plain GET form.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::audit::audit_log;
use crate::components::message::ErrorMessage;
use crate::components::time::{utc_text, LocalTime};
use crate::pages::LoadError;
use crate::views::AuditPageView;

#[component]
pub fn AuditPage() -> impl IntoView {
    let query = use_query_map();
    let field = move |name: &str| query.read().get(name).unwrap_or_default();
    let page = Resource::new(
        move || (field("who"), field("what"), field("from"), field("to"), field("before")),
        |(who, what, from, to, before)| audit_log(who, what, from, to, before),
    );
    view! {
        <Title text="Audit log"/>
        <h1 class="page-title">"Audit log"</h1>
        <p class="muted">"Who did what, and when: sign-ins, accounts, rosters and roles, policies and quotas, sessions stopped by others, notebooks opened by administrators."</p>
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(log) => view! { <AuditView log/> }.into_any(),
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn AuditView(log: AuditPageView) -> impl IntoView {
    let kinds = log
        .kinds
        .iter()
        .map(|(prefix, words)| view! { <option value=prefix.clone() selected=*prefix == log.what>{words.clone()}</option> })
        .collect_view();
    let csv = format!("/admin/audit.csv?{}", log.query);
    let older = log.older.map(|before| format!("/admin/audit?{}&before={before}", log.query));
    let rows = log
        .entries
        .iter()
        .map(|e| {
            view! {
                <tr data-action=e.action.clone()>
                    <td data-label="When"><LocalTime ms=e.at_ms utc=utc_text(e.at_ms) with_day=true/></td>
                    <td data-label="Who">{e.actor.clone()}</td>
                    <td data-label="What"><code>{e.action.clone()}</code></td>
                    <td data-label="On">{e.subject.clone()}</td>
                    <td class="audit-detail">{detail_words(&e.detail)}</td>
                </tr>
            }
        })
        .collect_view();
    let empty = log.entries.is_empty() && log.problem.is_none();
    view! {
        <form class="card form audit-form" method="get" action="/admin/audit">
            <div class="field-grid report-fields">
                <div class="field">
                    <label for="audit-who">"Who (username)"</label>
                    <input id="audit-who" name="who" value=log.who.clone() autocomplete="off"/>
                </div>
                <div class="field">
                    <label for="audit-what">"What"</label>
                    <select id="audit-what" name="what">
                        <option value="" selected=log.what.is_empty()>"Everything"</option>
                        {kinds}
                    </select>
                </div>
                <div class="field">
                    <label for="audit-from">"First day"</label>
                    <input id="audit-from" name="from" type="date" value=log.from.clone()/>
                </div>
                <div class="field">
                    <label for="audit-to">"Last day"</label>
                    <input id="audit-to" name="to" type="date" value=log.to.clone()/>
                </div>
            </div>
            <div class="button-row">
                <button class="btn btn-primary" type="submit">"Filter"</button>
                <a class="btn btn-secondary audit-csv" href=csv download="">"Download CSV"</a>
            </div>
        </form>
        {log.problem.clone().map(|m| view! { <ErrorMessage text=m/> })}
        <section class="card">
            {if empty {
                view! { <p class="empty-state muted">"Nothing in the log matches this filter."</p> }.into_any()
            } else {
                view! {
                    <div class="table-wrap">
                        <table class="table table-stack audit-table">
                            <thead><tr><th>"When"</th><th>"Who"</th><th>"What"</th><th>"On"</th><th>"Detail"</th></tr></thead>
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                }.into_any()
            }}
            {older.map(|href| view! { <p><a class="btn btn-secondary btn-small audit-older" href=href>"Older entries"</a></p> })}
        </section>
    }
}

/// An entry's detail as people read it: a JSON object becomes `key: value · key: value`
/// (text without its quotes, nested values as compact JSON); anything else stays as it is.
pub fn detail_words(detail: &str) -> String {
    use leptos::serde_json::{from_str, Map, Value};
    let fields = match from_str::<Map<String, Value>>(detail.trim()) {
        Ok(fields) if !fields.is_empty() => fields,
        _ => return detail.to_string(),
    };
    fields
        .iter()
        .map(|(key, value)| match value {
            Value::String(text) => format!("{key}: {text}"),
            other => format!("{key}: {other}"),
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::detail_words;

    #[test]
    fn a_json_object_reads_as_keys_and_values() {
        assert_eq!(
            detail_words(r#"{"images": "jupyter/scipy", "max_minutes": 90}"#),
            "images: jupyter/scipy · max_minutes: 90"
        );
        assert_eq!(
            detail_words(r#"{"a": null, "b": true, "c": {"d": [1, 2]}, "e": ["x"]}"#),
            r#"a: null · b: true · c: {"d":[1,2]} · e: ["x"]"#
        );
    }

    #[test]
    fn other_details_stay_as_they_are() {
        for detail in [
            "",
            "{}",
            "127.0.0.1",
            "stopped by admin: the lab is over",
            "[1, 2]",
            "42",
            "\"text\"",
            "{broken",
        ] {
            assert_eq!(detail_words(detail), detail);
        }
    }
}
