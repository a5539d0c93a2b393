use std::time::Duration;

use leptos::prelude::*;
use leptos_meta::Title;

use super::LoadError;
use leptos::form::ActionForm;

use crate::api::instance::{read_gpus, SetGpuDrained};
use crate::api::message;
use crate::components::message::ErrorMessage;
use crate::components::gpu_card::GpuCard;
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
            set_interval_with_handle(move || generation.update(|n| *n += 1), REFRESH)
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
                        let sections = board
                            .gpus
                            .into_iter()
                            .map(|layout| view! { <GpuSection layout simulated drain/> })
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
fn GpuSection(layout: GpuLayoutView, simulated: bool, drain: ServerAction<SetGpuDrained>) -> impl IntoView {
    let index = layout.gpu.index;
    let drained = layout.drained_by.is_some();
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
                    <ActionForm action=drain attr:class="inline-form drain-form">
                        <input type="hidden" name="index" value=index.to_string()/>
                        <input type="hidden" name="drained" value=(!drained).to_string()/>
                        <button class={if drained { "btn btn-primary btn-small undrain" } else { "btn btn-secondary btn-small drain" }} type="submit">
                            {if drained { "Return to service" } else { "Drain" }}
                        </button>
                    </ActionForm>
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
                                    <th>"MIG device"</th>
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
