//! The Slurm pool on the GPU page: each node's GPU GRES (MIG slices, GPUs, shards), used of total. Read-only: the
//! layout is the site's (gres.conf), like a static mig-parted layout.

use leptos::prelude::*;

use crate::views::SlurmPoolView;

#[component]
pub fn SlurmPool(pool: SlurmPoolView) -> impl IntoView {
    let rows = pool
        .nodes
        .iter()
        .map(|n| {
            let gres = n
                .gres
                .iter()
                .map(|g| view! { <li><b>{g.profile.clone()}</b> " " {format!("{} of {} in use", g.used, g.total)}</li> })
                .collect_view();
            let state_class = if n.available { "node-state" } else { "node-state down" };
            view! {
                <tr data-node=n.name.clone()>
                    <td><b>{n.name.clone()}</b></td>
                    <td class=state_class>{n.state.clone()}</td>
                    <td>{n.partitions.clone()}</td>
                    <td><ul class="gres-list">{gres}</ul></td>
                    <td>{if n.reason.is_empty() { "—".to_string() } else { n.reason.clone() }}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card slurm-pool">
            <h2 class="card-title">"Slurm cluster"</h2>
            <p class="muted">
                {format!("Sessions of {} run here as Slurm jobs; Slurm places them on the nodes' GPU GRES. ", pool.courses)}
                "The layout is the cluster's own and is changed there."
            </p>
            {pool.problem.clone().map(|p| view! { <p class="drained-note">{p}</p> })}
            {(!pool.nodes.is_empty()).then(|| view! {
                <div class="table-wrap" tabindex="0" role="region" aria-label="Slurm nodes">
                <table class="table">
                    <thead><tr><th>"Node"</th><th>"State"</th><th>"Partitions"</th><th>"GPU GRES"</th><th>"Reason"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table></div>
            })}
        </section>
    }
}
