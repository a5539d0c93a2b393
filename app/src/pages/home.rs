use leptos::prelude::*;
use leptos_meta::Title;

use super::{instance_resource, LoadError};
use crate::components::badge::Badge;
use crate::components::{gpu_card::GpuCard, status_panel::StatusPanel};
use crate::views::{GpuBoard, GpuCapacity};

#[component]
pub fn HomePage() -> impl IntoView {
    let (status, recheck) = instance_resource();
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
                <li><b>"Release"</b>" it, and the GPU-hours are counted for your course."</li>
            </ol>
        </section>

        <h2 class="section-title">"This instance"</h2>
        <Transition fallback=|| view! { <div class="card skeleton">"Checking the database, Docker and GPUs…"</div> }>
            {move || Suspend::new(async move {
                match status.await {
                    Ok(status) => {
                        let gpus = match status.board.clone() {
                            Some(board) => view! { <GpuBoardSummary board/> }.into_any(),
                            None => {
                                let capacity = status.capacity.clone();
                                view! { <CapacitySummary capacity/> }.into_any()
                            }
                        };
                        view! {
                            <StatusPanel status on_recheck=recheck/>
                            {gpus}
                        }
                        .into_any()
                    }
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
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
