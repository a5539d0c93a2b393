use leptos::prelude::*;
use leptos_meta::Title;

use super::{instance_resource, LoadError};
use crate::components::{gpu_card::GpuCard, status_panel::StatusPanel};

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
                "student their own, and opens JupyterLab on it in the browser. Instructors set quotas, "
                "allowed images and lab sessions; admins see exactly who holds which slice."
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
                        let simulated = status.board.simulated;
                        let backend = status.board.backend.clone();
                        let count = status.board.gpus.len();
                        let admin = status.viewer_is_admin;
                        let cards = status
                            .board
                            .gpus
                            .clone()
                            .into_iter()
                            .map(|layout| view! { <GpuCard layout simulated/> })
                            .collect_view();
                        view! {
                            <StatusPanel status on_recheck=recheck/>
                            <div class="gpu-summary">
                                <h3>{format!("{count} GPU{}", if count == 1 { "" } else { "s" })}</h3>
                                <span class="muted">{backend}</span>
                                {admin.then(|| view! { <a class="more" href="/gpus">"All GPUs and instances →"</a> })}
                            </div>
                            <div class="gpu-grid">{cards}</div>
                        }
                        .into_any()
                    }
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}
