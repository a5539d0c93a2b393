use leptos::prelude::*;

use crate::views::InstanceView;

/// A GPU's 8 memory slices: placed instances span their slices, the rest are free.
#[component]
pub fn SliceBar(instances: Vec<InstanceView>) -> impl IntoView {
    let mut covered = [false; 8];
    for instance in &instances {
        for slice in instance.start..(instance.start + instance.size).min(8) {
            covered[slice as usize] = true;
        }
    }
    let free = (0..8u8)
        .filter(|s| !covered[*s as usize])
        .map(|s| {
            view! {
                <span
                    class="slice free"
                    style=format!("grid-column: {} / span 1", s + 1)
                    title=format!("memory slice {s}: free")
                ></span>
            }
        })
        .collect_view();
    let placed = instances
        .into_iter()
        .map(|i| {
            let held = i.holder.is_some();
            let title = format!(
                "{} at slice {}{}{}",
                i.profile,
                i.start,
                i.mig_uuid
                    .as_deref()
                    .map(|u| format!(" · {u}"))
                    .unwrap_or_default(),
                i.memory_used
                    .as_deref()
                    .map(|m| format!(" · {m} used"))
                    .unwrap_or_default(),
            );
            view! {
                <span
                    class=if held { "instance held" } else { "instance idle" }
                    style=format!("grid-column: {} / span {}", i.start + 1, i.size)
                    title=title
                >
                    <b>{i.profile.clone()}</b>
                    <small>{i.holder.clone().unwrap_or_else(|| "free".to_string())}</small>
                </span>
            }
        })
        .collect_view();
    view! { <div class="slicebar" role="group" aria-label="8 memory slices">{free}{placed}</div> }
}
