use leptos::prelude::*;

use crate::api::courses::{check_roster, import_roster};
use crate::error::AppError;
use crate::api::message;
use crate::components::badge::Badge;
use crate::components::message::ErrorMessage;
use crate::views::{RosterAppliedView, RosterPreviewView, RosterRowView};

type Preview = Result<RosterPreviewView, AppError>;
type Applied = Result<RosterAppliedView, AppError>;

/// The import's state. It lives with the course page, so it survives the roster
/// reloading after an import.
#[derive(Clone, Copy)]
pub struct RosterImportState {
    file: RwSignal<Option<(String, String)>>,
    check: Action<(String, String), Preview>,
    pub apply: Action<(String, String), Applied>,
}

impl RosterImportState {
    pub fn new() -> Self {
        RosterImportState {
            file: RwSignal::new(None),
            check: Action::new(|(code, csv): &(String, String)| {
                let (code, csv) = (code.clone(), csv.clone());
                async move { check_roster(code, csv).await }
            }),
            apply: Action::new(|(code, csv): &(String, String)| {
                let (code, csv) = (code.clone(), csv.clone());
                async move { import_roster(code, csv).await }
            }),
        }
    }
}

/// Choose a CSV file, see what it would change, then apply it.
#[component]
pub fn RosterImport(code: String, state: RosterImportState) -> impl IntoView {
    let RosterImportState { file, check, apply } = state;
    let course = StoredValue::new(code);
    let on_file = move |ev: leptos::ev::Event| {
        apply.value().set(None);
        read_file(ev, move |name, csv| {
            file.set(Some((name, csv.clone())));
            check.dispatch((course.get_value(), csv));
        });
    };
    let apply_now = move |_| {
        if let Some((_, csv)) = file.get_untracked() {
            apply.dispatch((course.get_value(), csv));
        }
    };
    view! {
        <section class="card import">
            <h2 class="card-title">"Import students"</h2>
            <p class="muted small">
                "A CSV file with a header row: " <code>"username,display name,email"</code>
                " and optionally " <code>"password"</code> ". New usernames become accounts; existing "
                "accounts are invited as they are (they join when they accept; an administrator's import "
                "enrols them at once; their name, email and password are not changed). "
                "Nothing changes until you apply it; importing the same file again changes nothing, "
                "and nobody is removed."
            </p>
            <label class="file-label">"Roster CSV file"
                <input class="file" type="file" accept=".csv,text/csv" on:change=on_file/>
            </label>
            {move || check.pending().get().then(|| view! { <p class="muted">"Checking…"</p> })}
            {move || match check.value().get() {
                Some(Ok(preview)) => {
                    let can_apply = preview.errors.is_empty() && !preview.rows.is_empty();
                    view! {
                        <Preview preview/>
                        {move || match apply.value().get() {
                            Some(Ok(done)) => view! { <AppliedNotice done code=course.get_value()/> }.into_any(),
                            Some(Err(e)) => view! { <ErrorMessage text=message(&e)/> }.into_any(),
                            None => view! {
                                <button class="btn btn-primary apply-roster" disabled=move || !can_apply || apply.pending().get() on:click=apply_now>
                                    {move || if apply.pending().get() { "Applying…" } else { "Apply import" }}
                                </button>
                            }.into_any(),
                        }}
                    }.into_any()
                }
                Some(Err(e)) => view! { <ErrorMessage text=message(&e)/> }.into_any(),
                None => ().into_any(),
            }}
        </section>
    }
}

#[component]
fn Preview(preview: RosterPreviewView) -> impl IntoView {
    let count = |what: &str| preview.rows.iter().filter(|r| r.action == what).count();
    let summary = format!(
        "{} new, {} to enroll, {} to invite, {} unchanged",
        count("create"),
        count("enroll"),
        count("invite"),
        count("unchanged")
    );
    let errors = preview
        .errors
        .iter()
        .map(|e| view! { <li><b>{format!("Line {}", e.line)}</b>": "{e.message.clone()}</li> })
        .collect_view();
    let has_errors = !preview.errors.is_empty();
    let rows = preview
        .rows
        .iter()
        .take(200)
        .map(|r| {
            view! {
                <tr>
                    <td class="muted">{r.line}</td>
                    <td>{r.username.clone()}</td>
                    <td>{row_name(r)}</td>
                    <td><Badge kind=r.action.clone() text=r.action.clone()/></td>
                </tr>
            }
        })
        .collect_view();
    let more = preview.rows.len().saturating_sub(200);
    view! {
        <div class="preview">
            <p class="preview-summary"><b>{summary}</b></p>
            {has_errors.then(|| view! {
                <div class="row-errors" role="alert">
                    <p><b>"Fix these rows and choose the file again:"</b></p>
                    <ul>{errors}</ul>
                </div>
            })}
            <div class="table-wrap" tabindex="0" role="region" aria-label="What the import would change">
                <table class="table compact">
                    <thead><tr><th>"Line"</th><th>"Username"</th><th>"Name"</th><th>"Change"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {(more > 0).then(|| view! { <p class="muted small">{format!("…and {more} more rows")}</p> })}
        </div>
    }
}

/// A new account's name from the file; an existing account's stored details are not
/// known here, so the row says what will happen instead.
fn row_name(row: &RosterRowView) -> String {
    match (&row.display_name, row.action.as_str()) {
        (Some(name), _) => name.clone(),
        (None, "enroll") => "existing account — will be enrolled".to_string(),
        (None, "invite") => "existing account — will be invited".to_string(),
        (None, _) => "already in the course or invited".to_string(),
    }
}

#[component]
fn AppliedNotice(done: RosterAppliedView, code: String) -> impl IntoView {
    let download = done.passwords_csv.clone().map(|csv| {
        let href = format!("data:text/csv;charset=utf-8,{}", percent_encode(&csv));
        view! {
            <a class="btn btn-primary download-passwords" href=href download=format!("{code}-one-time-passwords.csv")>
                "Download one-time passwords (CSV)"
            </a>
            <p class="muted small">"This is the only time they are shown. New students must choose their own password when they first sign in."</p>
        }
    });
    view! {
        <div class="card notice applied" role="status">
            <b>"Imported. "</b>
            {format!("{} created, {} enrolled, {} invited, {} unchanged.", done.created, done.enrolled, done.invited, done.unchanged)}
            {download}
        </div>
    }
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b',' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Reads the chosen file's bytes in the browser and hands them on as base64.
#[cfg(feature = "hydrate")]
fn read_file(ev: leptos::ev::Event, then: impl FnOnce(String, String) + 'static) {
    use base64::Engine;
    use wasm_bindgen::JsCast;
    let Some(input) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return;
    };
    let Some(file) = input.files().and_then(|files| files.get(0)) else {
        return;
    };
    let name = file.name();
    wasm_bindgen_futures::spawn_local(async move {
        if let Ok(buffer) = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
            let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
            then(
                name,
                base64::engine::general_purpose::STANDARD.encode(bytes),
            );
        }
    });
}

#[cfg(not(feature = "hydrate"))]
fn read_file(_ev: leptos::ev::Event, _then: impl FnOnce(String, String) + 'static) {}
