use leptos::prelude::*;

use super::badge::Badge;
use super::slice_bar::SliceBar;
use crate::views::GpuLayoutView;

/// How every page names a GPU: `GPU 0 · NVIDIA H100 80GB HBM3` when its model is known,
/// else `GPU 0`.
pub fn gpu_label(index: u32, model: Option<&str>) -> String {
    match model.map(str::trim).filter(|m| !m.is_empty()) {
        Some(model) => format!("GPU {index} · {model}"),
        None => format!("GPU {index}"),
    }
}

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
                    <div class="gpu-index">{if gpu.mig == "MIG enabled" { format!("MIG layout: {}", layout.mode) } else { format!("Sharing: {}", layout.mode) }}</div>
                    <h3 class="gpu-name">{gpu_label(gpu.index, Some(&gpu.name))}</h3>
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
                {layout.guarantees.clone().map(|g| view! { <div class="wide"><dt>"Each session gets"</dt><dd class="guarantees">{g}</dd></div> })}
                <div class="wide"><dt>"UUID"</dt><dd class="mono">{gpu.uuid.clone()}</dd></div>
            </dl>
        </article>
    }
}

#[cfg(test)]
mod tests {
    use super::gpu_label;

    #[test]
    fn a_gpu_is_named_by_index_and_model() {
        assert_eq!(
            gpu_label(0, Some("NVIDIA H100 80GB HBM3")),
            "GPU 0 · NVIDIA H100 80GB HBM3"
        );
        assert_eq!(gpu_label(3, None), "GPU 3");
        assert_eq!(gpu_label(1, Some("  ")), "GPU 1");
    }
}
