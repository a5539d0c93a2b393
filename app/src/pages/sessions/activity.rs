//! A running session's slice as a small live chart: how busy it was over the last
//! readings, and how much memory it uses now.

use std::time::Duration;

use leptos::prelude::*;

use crate::api::sessions::slice_activity;
use crate::views::ActivityPoint;

const WIDTH: f64 = 160.0;
const HEIGHT: f64 = 32.0;

#[component]
pub fn SliceActivity(id: String) -> impl IntoView {
    let points = RwSignal::new(Vec::<ActivityPoint>::new());
    let tick = RwSignal::new(0u32);
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(move || tick.update(|n| *n += 1), Duration::from_secs(10)) {
            on_cleanup(move || handle.clear());
        }
    });
    Effect::new(move |_| {
        tick.track();
        let id = id.clone();
        leptos::task::spawn_local(async move {
            if let Ok(latest) = slice_activity(id).await {
                points.try_set(latest);
            }
        });
    });
    let line = move || polyline(&points.get());
    let now = move || summary(points.get().last());
    view! {
        <div class="slice-activity">
            <svg class="sparkline" viewBox=format!("0 0 {WIDTH} {HEIGHT}") width=WIDTH height=HEIGHT role="img"
                aria-label="How busy the slice has been over the last readings">
                <rect width=WIDTH height=HEIGHT rx="4" fill="currentColor" fill-opacity="0.06"/>
                <polyline points=line fill="none" stroke="currentColor" stroke-width="1.5"/>
            </svg>
            <span class="activity-now">{now}</span>
        </div>
    }
}

/// Busy percent, left (oldest) to right; readings without one are left out.
fn polyline(points: &[ActivityPoint]) -> String {
    let n = points.len().max(2) - 1;
    points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let busy = f64::from(p.busy_percent?.min(100));
            Some(format!("{:.1},{:.1}", WIDTH * i as f64 / n as f64, HEIGHT - 2.0 - (HEIGHT - 4.0) * busy / 100.0))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn summary(latest: Option<&ActivityPoint>) -> String {
    let Some(p) = latest else { return "Slice activity: measuring…".to_string() };
    let busy = p.busy_percent.map(|b| format!("{b}% busy")).unwrap_or_else(|| "activity not read yet".to_string());
    match p.memory_mib {
        Some(mib) if mib >= 1024 => format!("{busy} · {:.1} GB memory", mib as f64 / 1024.0),
        Some(mib) => format!("{busy} · {mib} MB memory"),
        None => busy,
    }
}
