//! Booked lab sessions of a course: what is booked, a form to book more (times in the
//! course's time zone), and cancelling.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::api::bookings::{lab_bookings, BookLab, CancelLabBooking};
use crate::api::message;
use crate::components::confirm::ConfirmButton;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::components::time::{utc_text, LocalTime};
use crate::pages::LoadError;
use crate::views::{BookingView, BookingsPageView};

#[component]
pub fn BookingsPage() -> impl IntoView {
    let params = use_params_map();
    let code = move || params.read().get("code").unwrap_or_default();
    let book = ServerAction::<BookLab>::new();
    let cancel = ServerAction::<CancelLabBooking>::new();
    let page = Resource::new(
        move || (code(), book.version().get(), cancel.version().get()),
        |(code, ..)| lab_bookings(code),
    );
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(view) => view! { <BookingsView page=view book cancel/> }.into_any(),
                    Err(error) => view! { <Title text="Lab bookings"/><LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn BookingsView(page: BookingsPageView, book: ServerAction<BookLab>, cancel: ServerAction<CancelLabBooking>) -> impl IntoView {
    let feedback = move || match (book.value().get(), cancel.value().get()) {
        (Some(Err(e)), _) | (_, Some(Err(e))) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
        (Some(Ok(_)), _) => Some(view! { <SuccessMessage>"Booked. The slices are kept for the course during the window."</SuccessMessage> }.into_any()),
        (_, Some(Ok(()))) => Some(view! { <SuccessMessage>"Booking cancelled; its slices are free again."</SuccessMessage> }.into_any()),
        _ => None,
    };
    let options = page
        .profiles
        .iter()
        .map(|p| view! { <option value=p.clone()>{p.clone()}</option> })
        .collect_view();
    // The size picked (the first until another is chosen) and the most of it the GPUs hold.
    let picked = RwSignal::new(page.profiles.first().cloned().unwrap_or_default());
    let most_slices = page.most_slices.clone();
    let most = Memo::new(move |_| {
        picked.with(|p| {
            most_slices
                .iter()
                .find(|(name, _)| name == p)
                .map(|(_, n)| (*n).min(64))
        })
    });
    view! {
        <Title text=format!("Lab bookings · {}", page.code)/>
        <p class="eyebrow"><a href=format!("/courses/{}", page.code)>{page.code.clone()}</a></p>
        <h1 class="page-title">"Lab bookings"</h1>
        <p class="muted">
            "Keep GPU slices for the whole class during a lab. During the window only the course's "
            "students get the booked slices (besides the free pool); other courses' sessions that would "
            "still run then are not placed on them, and nothing running is ever stopped."
        </p>
        <div class="stack">
            <div aria-live="polite">{feedback}</div>
            <section class="card">
                <h2 class="card-title">"Booked"</h2>
                <BookingList code=page.code.clone() bookings=page.bookings.clone() cancel/>
            </section>
            <section class="card">
                <h2 class="card-title">"Book a lab session"</h2>
                <ActionForm action=book attr:class="form booking-form">
                    <input type="hidden" name="code" value=page.code.clone()/>
                    <div class="field-grid">
                        <label>"Slice size" <select name="profile" on:change=move |ev| picked.set(event_target_value(&ev))>{options}</select></label>
                        <label>"How many slices" {move || most.get().map(|n| format!(" (at most {n})"))}
                            <input name="slices" type="number" inputmode="numeric" value="1" min="1" max=move || most.get().map(|n| n.to_string()) required/></label>
                        <label>"Date" <input name="date" type="date" required/></label>
                        <label>"From" <input name="start" type="time" value="14:00" required/></label>
                        <label>"Until" <input name="end" type="time" value="16:00" required/></label>
                        <label>"Weeks" <input name="weeks" inputmode="numeric" value="1" aria-describedby="weeks-help"/></label>
                    </div>
                    <p class="hint" id="weeks-help">
                        "Times are in the course's time zone (" {page.time_zone.clone()} "). Weeks: 1 books once; "
                        "up to 26 repeats it every week. A window lasts at most 12 hours."
                    </p>
                    <p class="hint booking-limits">{format!(
                        "On this portal a course books at most {} days ahead, and its labs keep at most {} compute-slice-hours a week, Monday to Sunday in UTC (a 1g slice for an hour is 1, a 3g slice for an hour is 3).",
                        page.days_ahead, page.slice_hours_per_week
                    )}</p>
                    {page.admin.then(|| view! {
                        <label class="check-row"><input type="checkbox" name="override_running" value="on"/>
                            " Book even where sessions running or promised a start then are in the way (administrators)"</label>
                    })}
                    <button class="btn btn-primary" type="submit">"Book"</button>
                </ActionForm>
            </section>
        </div>
    }
}

/// The course's bookings, soonest first, each with a cancel button. Rows are keyed by the
/// booking's id, so a row's controls always act on its own booking.
#[component]
pub fn BookingList(
    code: String,
    bookings: Vec<BookingView>,
    #[prop(optional)] cancel: Option<ServerAction<CancelLabBooking>>,
    /// Name the course on each row (the GPU page lists every course's).
    #[prop(optional)]
    show_course: bool,
) -> impl IntoView {
    if bookings.is_empty() {
        return view! { <p class="empty-state muted">"No lab session is booked."</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="table table-stack bookings">
                <thead><tr>
                    <th>"Slices"</th><th>"When (your time)"</th><th>"Repeats"</th><th>"Where"</th><th>"Booked"</th>
                    <th><span class="sr-only">"Actions"</span></th>
                </tr></thead>
                <tbody>
                    <For
                        each=move || bookings.clone()
                        key=|b: &BookingView| b.id
                        children=move |b: BookingView| view! { <BookingRow booking=b code=code.clone() cancel show_course/> }
                    />
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
fn BookingRow(
    booking: BookingView,
    code: String,
    cancel: Option<ServerAction<CancelLabBooking>>,
    show_course: bool,
) -> impl IntoView {
    let b = booking;
    let repeat = if b.weeks > 1 { format!("weekly, {} times", b.weeks) } else { "once".to_string() };
    let what = format!("{} × {}", b.slices, b.profile);
    let action = cancel.map(|cancel| {
        let id = b.id;
        view! {
            <ConfirmButton label="Cancel" class="btn-secondary btn-small cancel-booking"
                question=format!("Cancel the booking of {what} from {}?", utc_text(b.starts_at_ms))
                warning="Its slices go back to everyone. Sessions already running stay."
                confirm="Cancel booking"
                on_confirm=Callback::new(move |()| { cancel.dispatch(CancelLabBooking { code: code.clone(), id }); })/>
        }
    });
    view! {
        <tr data-booking=b.id>
            <td><b>{what}</b>
                {show_course.then(|| view! { <br/><span class="muted small">{b.course.clone()}</span> })}</td>
            <td><LocalTime ms=b.starts_at_ms utc=b.starts_at.clone() with_day=true/> " – " <LocalTime ms=b.ends_at_ms utc=b.ends_at.clone()/></td>
            <td>{repeat}</td>
            <td>{format!("on {} GPU{}", b.gpus, if b.gpus == 1 { "" } else { "s" })}</td>
            <td class="muted">{format!("by {}", b.created_by)}</td>
            <td class="actions">{action}</td>
        </tr>
    }
}
