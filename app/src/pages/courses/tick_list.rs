//! A policy field the portal knows the choices of (the administrator's images, the sizes
//! these GPUs offer): a box for each, and the one comma-separated field the save reads,
//! kept in the list's order. Without the browser code the field keeps what the course has,
//! so a save changes nothing about it.

use leptos::prelude::*;

use crate::components::badge::Badge;

/// One choice, with a warning word when it cannot be used as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tick {
    pub value: String,
    pub warning: Option<&'static str>,
    /// Said beside the value, e.g. what an hour of a slice size counts.
    pub note: Option<String>,
}

#[component]
pub fn TickList(field: &'static str, choices: Vec<Tick>, chosen: String) -> impl IntoView {
    let picked = RwSignal::new(
        chosen
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(String::from)
            .collect::<Vec<_>>(),
    );
    let order: Vec<String> = choices.iter().map(|c| c.value.clone()).collect();
    let joined = move || {
        let picked = picked.get();
        order
            .iter()
            .filter(|i| picked.contains(i))
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let boxes = choices
        .into_iter()
        .map(|choice| {
            let value = choice.value;
            let checked = picked.with_untracked(|p| p.contains(&value));
            let toggled = value.clone();
            view! {
                <label class="check-row tick">
                    <input type="checkbox" value=value.clone() checked=checked
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            picked.update(|list| {
                                list.retain(|i| i != &toggled);
                                if on {
                                    list.push(toggled.clone());
                                }
                            });
                        }/>
                    <code>{value}</code>
                    {choice.note.map(|n| view! { <span class="muted tick-note">{n}</span> })}
                    {choice.warning.map(|w| view! { <Badge kind="warn" text=w/> })}
                </label>
            }
        })
        .collect_view();
    view! {
        <div id=format!("policy-{field}") class=format!("tick-list {field}-ticks") role="group" tabindex="-1">{boxes}</div>
        <input type="hidden" name=field value=joined/>
    }
}
