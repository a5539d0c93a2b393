use leptos::prelude::*;

use super::badge::Badge;
use super::slice_bar::SliceBar;
use crate::views::GpuLayoutView;

/// One GPU: its name, backend badge, mode, and its 8 memory slices with placed instances.
#[component]
pub fn GpuCard(layout: GpuLayoutView, simulated: bool) -> impl IntoView {
    let gpu = layout.gpu.clone();
    let placeable = if layout.placeable.is_empty() {
        "nothing".to_string()
    } else {
        layout.placeable.join(", ")
    };
    view! {
        <article class="card gpu-card">
            <header class="gpu-head">
                <div>
                    <div class="gpu-index">{format!("GPU {} · {}", gpu.index, layout.mode)}</div>
                    <h3 class="gpu-name">{gpu.name.clone()}</h3>
                </div>
                {layout.drained_by.is_some().then(|| view! { <Badge kind="warn" text="drained" title="No new sessions are placed on this GPU"/> })}
                {if simulated {
                    view! { <Badge kind="sim" text="simulated" title="No NVIDIA driver here: this GPU exists in configuration only"/> }.into_any()
                } else {
                    view! { <Badge kind="real" text="NVML"/> }.into_any()
                }}
            </header>
            {layout.error.clone().map(|e| view! { <p class="inline-error">{e}</p> })}
            <SliceBar instances=layout.instances.clone()/>
            <dl class="facts">
                <div><dt>"Memory"</dt><dd>{gpu.memory.clone()}</dd></div>
                <div><dt>"Partitioning"</dt><dd>{gpu.mig.clone()}</dd></div>
                <div><dt>"Free"</dt><dd class="free-slices">{layout.free.clone()}</dd></div>
                <div><dt>"Could place now"</dt><dd class="placeable">{placeable}</dd></div>
                <div class="wide"><dt>"UUID"</dt><dd class="mono">{gpu.uuid.clone()}</dd></div>
            </dl>
        </article>
    }
}
