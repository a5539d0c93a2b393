use std::time::Duration;

use leptos::prelude::*;
use leptos_meta::Title;

use super::LoadError;
use leptos::form::ActionForm;

use crate::api::instance::{read_gpus, SetGpuDrained};
use crate::api::message;
use crate::components::confirm::ConfirmButton;
use crate::components::message::ErrorMessage;
use crate::components::gpu_card::{gpu_label, GpuCard};
use crate::components::slurm_pool::SlurmPool;
use crate::components::time::LocalTime;
use crate::views::GpuLayoutView;

const REFRESH: Duration = Duration::from_secs(5);

/// Every GPU with its MIG instances and who holds them, refreshed while the page is open.
#[component]
pub fn GpusPage() -> impl IntoView {
    let generation = RwSignal::new(0u32);
    let drain = ServerAction::<SetGpuDrained>::new();
    let board = Resource::new(move || (generation.get(), drain.version().get()), |_| read_gpus());
    Effect::new(move |_| {
        if let Ok(handle) =
            // Not while a confirmation is open: the refresh would draw its GPU afresh and
            // close the dialog under the administrator's pointer.
            set_interval_with_handle(
                move || {
                    let asking = document().query_selector(".confirm-dialog").ok().flatten().is_some();
                    if !asking {
                        generation.update(|n| *n += 1);
                    }
                },
                REFRESH,
            )
        {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <Title text="GPUs"/>
        <h1 class="page-title">"GPUs"</h1>
        <p class="muted">
            "Each GPU is drawn as its 8 memory slices with the MIG instances placed on them. "
            "Refreshes every 5 seconds. A drained GPU takes no new sessions; those on it run to their end."
        </p>
        <div aria-live="polite">
            {move || drain.value().get().and_then(Result::err).map(|e| view! { <ErrorMessage text=message(&e)/> })}
        </div>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading the GPUs…"</div> }>
            {move || Suspend::new(async move {
                match board.await {
                    Ok(board) => {
                        let simulated = board.simulated;
                        let serving = board.gpus.iter().filter(|g| g.drained_by.is_none() && g.error.is_none()).count();
                        let bookings = board.bookings.len();
                        let sections = board
                            .gpus
                            .into_iter()
                            .map(|layout| view! { <GpuSection layout simulated drain serving bookings/> })
                            .collect_view();
                        view! {
                            <div class="board-meta">
                                <span>{board.backend}</span>
                                <span class="muted refreshed-at">"Read at " <LocalTime ms=board.refreshed_at_ms utc=board.refreshed_at.clone() seconds=true/></span>
                            </div>
                            {sections}
                            {board.cluster.clone().map(|pool| view! { <SlurmPool pool/> })}
                            <section class="card gpu-bookings">
                                <h2 class="card-title">"Booked lab sessions"</h2>
                                <crate::pages::courses::bookings::BookingList code=String::new() bookings=board.bookings.clone() show_course=true/>
                            </section>
                        }
                        .into_any()
                    }
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn GpuSection(
    layout: GpuLayoutView,
    simulated: bool,
    drain: ServerAction<SetGpuDrained>,
    /// GPUs taking sessions now, this one included if it does.
    serving: usize,
    /// Booked lab sessions to come on any GPU.
    bookings: usize,
) -> impl IntoView {
    let index = layout.gpu.index;
    let name = gpu_label(index, Some(&layout.gpu.name));
    let drained = layout.drained_by.is_some();
    let running = layout.instances.iter().filter(|i| i.holder.is_some()).count();
    let consequences = drain_consequences(running, serving, bookings);
    let rows = layout
        .instances
        .iter()
        .map(|i| {
            view! {
                <tr>
                    <td><b>{i.profile.clone()}</b></td>
                    <td>{if i.size <= 1 { i.start.to_string() } else { format!("{}–{}", i.start, i.start + i.size - 1) }}</td>
                    <td>{i.holder.clone().unwrap_or_else(|| "free".to_string())}</td>
                    <td>{i.memory_used.clone().unwrap_or_else(|| "—".to_string())}</td>
                    <td class="busy">{i.busy.clone().unwrap_or_else(|| "—".to_string())}</td>
                    <td class="mono">{i.mig_uuid.clone().unwrap_or_else(|| "—".to_string())}</td>
                </tr>
            }
        })
        .collect_view();
    let empty = layout.instances.is_empty();
    view! {
        <section class="gpu-section">
            <GpuCard layout=layout.clone() simulated/>
            <div class="card instances">
                <div class="card-head">
                    <h3>"Instances"</h3>
                    {if drained {
                        view! {
                            <ActionForm action=drain attr:class="inline-form drain-form">
                                <input type="hidden" name="index" value=index.to_string()/>
                                <input type="hidden" name="drained" value="false"/>
                                <button class="btn btn-primary btn-small undrain" type="submit">"Return to service"</button>
                            </ActionForm>
                        }
                        .into_any()
                    } else {
                        view! {
                            <ConfirmButton label="Drain" class="btn-secondary btn-small drain"
                                question=format!("Drain {name}?")
                                warning=consequences
                                confirm="Drain GPU"
                                on_confirm=Callback::new(move |()| { drain.dispatch(SetGpuDrained { index, drained: true }); })/>
                        }
                        .into_any()
                    }}
                </div>
                {layout.drained_by.clone().map(|by| view! {
                    <p class="drained-note">{format!("Drained by {by}: no new sessions are placed here; those running go on to their end.")}</p>
                })}
                {if empty {
                    view! { <p class="muted">"No MIG instances on this GPU."</p> }.into_any()
                } else {
                    view! {
                        <div class="table-wrap" tabindex="0" role="region" aria-label="MIG instances">
                        <table class="table">
                            <thead>
                                <tr>
                                    <th>"Profile"</th>
                                    <th>"Memory slices"</th>
                                    <th>"Held by"</th>
                                    <th>"Memory used"</th>
                                    <th>"Activity"</th>
                                    <th>"Device"</th>
                                </tr>
                            </thead>
                            <tbody>{rows}</tbody>
                        </table></div>
                    }
                    .into_any()
                }}
            </div>
        </section>
    }
}

/// What draining a GPU does, said before it is done.
fn drain_consequences(running: usize, serving: usize, bookings: usize) -> String {
    let mut words = vec![match running {
        0 => "No session runs on it now; it takes no new ones until you return it to service.".to_string(),
        1 => "The 1 session on it runs on to its end; it takes no new ones until you return it to service.".to_string(),
        n => format!("The {n} sessions on it run on to their end; it takes no new ones until you return it to service."),
    }];
    if serving <= 1 {
        words.push("It is the only GPU taking sessions: every claim waits, with no start time, until a GPU returns to service.".to_string());
    }
    if bookings > 0 {
        words.push(format!(
            "{bookings} booked lab session{} to come may find too few slices.",
            if bookings == 1 { "" } else { "s" }
        ));
    }
    words.join(" ")
}
