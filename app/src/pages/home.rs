use leptos::prelude::*;
use leptos_meta::Title;
use crate::error::AppError;

use super::sessions::SessionsPage;
use super::{count, LoadError};
use crate::api::home::{operations_summary, teaching_summary};
use crate::api::instance::check_instance;
use crate::components::badge::Badge;
use crate::components::{gpu_card::GpuCard, status_panel::StatusPanel};
use crate::shell::CurrentUser;
use crate::views::{GpuBoard, GpuCapacity, InstanceStatus, Me, OperationsOverview, TeachingCourse};

/// What the home page shows the caller.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Landing {
    /// An administrator: the operations summary.
    Operations,
    /// An instructor: their classes.
    Classes,
    /// A student: their sessions.
    Sessions,
    /// Anyone else (a visitor, or someone who must first change a one-time password).
    Welcome,
}

fn landing(me: Option<&Me>) -> Landing {
    match me {
        Some(me) if me.is_admin => Landing::Operations,
        Some(me) if me.teaches_any() => Landing::Classes,
        Some(me) if !me.must_change_password => Landing::Sessions,
        _ => Landing::Welcome,
    }
}

/// The signed-in user once known; `None` for a visitor or when it cannot be read.
async fn signed_in(user: Option<CurrentUser>) -> Option<Me> {
    match user {
        Some(CurrentUser(me)) => me.await.ok().flatten(),
        None => None,
    }
}

/// The caller's [`Landing`], once the signed-in user is known.
async fn landing_of(user: Option<CurrentUser>) -> Landing {
    let me = signed_in(user).await;
    landing(me.as_ref())
}

/// Something one role's home page reads: `None` for the callers whose page does not show
/// it (it is then not asked for at all).
type ForRole<T> = Resource<Option<Result<T, AppError>>>;

/// Each role lands somewhere of its own: a student on their sessions (launch cards,
/// what runs, what is left of the budget), an instructor on their classes, an
/// administrator on the operations summary; anyone else on what SliceHub is and what is
/// free.
///
/// What the role pages read is created here, once, outside the `<Transition>`, and
/// passed down: never inside the views the `Suspend` below returns. On the server a
/// suspense boundary calls its children more than once (to find their resource reads
/// once `user` is loaded, then to render them), so a resource created in there is
/// created anew each time, with a new hydration id and a fetch of its own, while the
/// browser creates it once. The browser then takes the value of a copy the server
/// threw away, not the one its HTML shows (for the instance check often an error: that
/// copy's owner is gone by the time it reads the request), builds other nodes than the
/// HTML has, and hydration panics.
#[component]
pub fn HomePage() -> impl IntoView {
    let user = use_context::<CurrentUser>();
    let generation = RwSignal::new(0u32);
    let recheck = Callback::new(move |()| generation.update(|n| *n += 1));
    let status: ForRole<InstanceStatus> = Resource::new(
        move || generation.get(),
        move |_| async move {
            match landing_of(user).await {
                Landing::Operations | Landing::Welcome => Some(check_instance().await),
                Landing::Classes | Landing::Sessions => None,
            }
        },
    );
    let summary: ForRole<OperationsOverview> = Resource::new(
        || (),
        move |_| async move {
            match landing_of(user).await {
                Landing::Operations => Some(operations_summary().await),
                _ => None,
            }
        },
    );
    let courses: ForRole<Vec<TeachingCourse>> = Resource::new(
        || (),
        move |_| async move {
            match landing_of(user).await {
                Landing::Classes => Some(teaching_summary().await),
                _ => None,
            }
        },
    );
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                let me = signed_in(user).await;
                match (landing(me.as_ref()), me) {
                    (Landing::Operations, _) => view! { <AdminHome status recheck summary/> }.into_any(),
                    (Landing::Classes, Some(me)) => view! { <InstructorHome me courses/> }.into_any(),
                    // Still creates its resources in here (see above). Each of its
                    // server functions reads the request before its first await, so
                    // the copy the browser takes is a sound read, though a separate one.
                    (Landing::Sessions, _) => view! { <SessionsPage/> }.into_any(),
                    _ => view! { <PublicHome status recheck/> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// What one of the home page's parts read, or nothing where the caller's role does not
/// show it.
fn read_or_error<T>(
    read: Option<Result<T, AppError>>,
    show: impl FnOnce(T) -> AnyView,
) -> AnyView {
    match read {
        Some(Ok(value)) => show(value),
        Some(Err(error)) => view! { <LoadError error/> }.into_any(),
        None => ().into_any(),
    }
}

#[component]
fn PublicHome(status: ForRole<InstanceStatus>, recheck: Callback<()>) -> impl IntoView {
    view! {
        <Title text=""/>
        <section class="hero">
            <p class="eyebrow">"Classroom GPU portal"</p>
            <h1>"A slice of a real GPU for every student."</h1>
            <p class="lede">
                "SliceHub partitions NVIDIA A100, H100, H200 and B200 GPUs into MIG slices, gives each "
                "student their own, and opens JupyterLab on it in the browser. Instructors choose the "
                "images, slice sizes and session lengths their course allows; admins see exactly who "
                "holds which slice."
            </p>
            <ol class="steps">
                <li><b>"Claim"</b>" a slice size your course allows, such as 1g.10gb."</li>
                <li><b>"Work"</b>" in JupyterLab or run a training job on exactly that slice."</li>
                <li><b>"Release"</b>" it, and the slice-hours are counted for your course."</li>
            </ol>
        </section>

        <h2 class="section-title">"This instance"</h2>
        <Transition fallback=|| view! { <div class="card skeleton">"Checking the database, Docker and GPUs…"</div> }>
            {move || Suspend::new(async move {
                read_or_error(status.await, |status| {
                    let capacity = status.capacity.clone();
                    view! {
                        <StatusPanel status on_recheck=recheck/>
                        <CapacitySummary capacity/>
                    }
                    .into_any()
                })
            })}
        </Transition>
    }
}

/// The administrator's operations summary: the checks, sessions and queue, what needs
/// attention, and every GPU.
#[component]
fn AdminHome(
    status: ForRole<InstanceStatus>,
    recheck: Callback<()>,
    summary: ForRole<OperationsOverview>,
) -> impl IntoView {
    view! {
        <Title text="Operations"/>
        <h1 class="page-title">"Operations"</h1>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading sessions and GPUs…"</div> }>
            {move || Suspend::new(async move {
                read_or_error(summary.await, |summary| view! { <OperationsCard summary/> }.into_any())
            })}
        </Transition>
        <Transition fallback=|| view! { <div class="card skeleton">"Checking the database, Docker and GPUs…"</div> }>
            {move || Suspend::new(async move {
                read_or_error(status.await, |status| {
                    let board = status.board.clone();
                    view! {
                        <StatusPanel status on_recheck=recheck/>
                        {board.map(|board| view! { <GpuBoardSummary board/> })}
                    }
                    .into_any()
                })
            })}
        </Transition>
    }
}

#[component]
fn OperationsCard(summary: OperationsOverview) -> impl IntoView {
    let sessions = if summary.sessions.is_empty() {
        "No session is running or waiting.".to_string()
    } else {
        summary.sessions.iter().map(|(word, n)| format!("{n} {word}")).collect::<Vec<_>>().join(" · ")
    };
    let queue = summary
        .queue
        .iter()
        .map(|(profile, n, waited)| view! { <li>{format!("{n} waiting for {profile} ({waited})")}</li> })
        .collect_view();
    let alerts = summary
        .alerts
        .iter()
        .map(|a| view! { <li class="alert-line">{a.clone()}</li> })
        .collect_view();
    let calm = summary.alerts.is_empty();
    view! {
        <section class="card ops-summary">
            <div class="card-head">
                <h2 class="card-title">"Sessions now"</h2>
                <a class="btn btn-secondary btn-small" href="/admin/sessions">"All sessions"</a>
            </div>
            <p class="ops-counts">{sessions}</p>
            {(!summary.queue.is_empty()).then(|| view! { <ul class="ops-queue">{queue}</ul> })}
            <h3 class="ops-alerts-title">"Needs attention"</h3>
            {if calm {
                view! { <p class="muted ops-calm">"Nothing: every GPU reads, none is drained, no stop is stuck."</p> }.into_any()
            } else {
                view! { <ul class="ops-alerts" role="alert">{alerts}</ul> }.into_any()
            }}
        </section>
    }
}

/// An instructor's classes, each with what runs and waits now and the ways in.
#[component]
fn InstructorHome(me: Me, courses: ForRole<Vec<TeachingCourse>>) -> impl IntoView {
    view! {
        <Title text="Your classes"/>
        <h1 class="page-title">{format!("Your classes, {}", me.display_name)}</h1>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading your classes…"</div> }>
            {move || Suspend::new(async move {
                match courses.await {
                    None => ().into_any(),
                    Some(Ok(list)) => {
                        let cards = list
                            .into_iter()
                            .map(|c| view! {
                                <article class="card teaching" data-course=c.code.clone()>
                                    <p class="eyebrow">{c.code.clone()}</p>
                                    <h2 class="card-title">{c.title.clone()}</h2>
                                    <p class="muted">{format!(
                                        "{} · {} running · {} waiting",
                                        count(c.students, "student", "students"),
                                        c.running,
                                        c.waiting
                                    )}</p>
                                    <div class="button-row">
                                        <a class="btn btn-primary btn-small" href=format!("/courses/{}/class", c.code)>"Class dashboard"</a>
                                        <a class="btn btn-secondary btn-small" href=format!("/courses/{}/policy", c.code)>"Policy and quota"</a>
                                        <a class="btn btn-secondary btn-small" href=format!("/reports?course={}", c.code)>"Usage report"</a>
                                    </div>
                                </article>
                            })
                            .collect_view();
                        view! { <div class="course-grid">{cards}</div> }.into_any()
                    }
                    Some(Err(error)) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
        <p class="muted"><a href="/sessions">"Your own GPU sessions →"</a></p>
    }
}

/// For administrators: every GPU with its slices.
#[component]
fn GpuBoardSummary(board: GpuBoard) -> impl IntoView {
    let simulated = board.simulated;
    let count = board.gpus.len();
    let cards = board
        .gpus
        .into_iter()
        .map(|layout| view! { <GpuCard layout simulated/> })
        .collect_view();
    view! {
        <div class="gpu-summary">
            <h3>{format!("{count} GPU{}", if count == 1 { "" } else { "s" })}</h3>
            <span class="muted">{board.backend}</span>
            <a class="more" href="/gpus">"All GPUs and instances →"</a>
        </div>
        <div class="gpu-grid">{cards}</div>
    }
}

/// For everyone else: how many slices of each size are free now, and nothing about who
/// holds the others.
#[component]
fn CapacitySummary(capacity: GpuCapacity) -> impl IntoView {
    let rows = capacity
        .profiles
        .iter()
        .map(|p| {
            let waiting = match p.queued {
                0 => String::new(),
                n => format!(" · {n} waiting"),
            };
            view! {
                <div><dt>{p.name.clone()}</dt><dd class="free-count">{format!("{} free{waiting}", p.free)}</dd></div>
            }
        })
        .collect_view();
    let empty = capacity.profiles.is_empty();
    view! {
        <section class="card capacity">
            <header class="gpu-head">
                <h3>"GPU slices free now"</h3>
                {capacity.simulated.then(|| view! {
                    <Badge kind="sim" text="simulated" title="No NVIDIA driver here: these GPUs exist in configuration only"/>
                })}
            </header>
            {if empty {
                view! { <p class="muted">"No GPU slices can be offered right now."</p> }.into_any()
            } else {
                view! { <dl class="facts">{rows}</dl> }.into_any()
            }}
        </section>
    }
}
