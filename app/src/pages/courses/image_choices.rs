//! The policy form's images: a box for each image of the administrator's list, and the
//! one `images` field the save reads, kept in the list's order. Without the browser code
//! the field keeps what the course has, so a save changes nothing about images.

use leptos::prelude::*;

use crate::components::badge::Badge;
use crate::views::ImageChoice;

#[component]
pub fn ImageChoices(offered: Vec<ImageChoice>, chosen: String) -> impl IntoView {
    let picked = RwSignal::new(
        chosen
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(String::from)
            .collect::<Vec<_>>(),
    );
    let order: Vec<String> = offered.iter().map(|c| c.image.clone()).collect();
    let joined = move || {
        let picked = picked.get();
        order
            .iter()
            .filter(|i| picked.contains(i))
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let boxes = offered
        .into_iter()
        .map(|choice| {
            let image = choice.image;
            let checked = picked.with_untracked(|p| p.contains(&image));
            let toggled = image.clone();
            view! {
                <label class="check-row image-choice">
                    <input type="checkbox" value=image.clone() checked=checked
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            picked.update(|list| {
                                list.retain(|i| i != &toggled);
                                if on {
                                    list.push(toggled.clone());
                                }
                            });
                        }/>
                    <code>{image}</code>
                    {(!choice.on_server).then(|| view! { <Badge kind="warn" text="not on this server"/> })}
                </label>
            }
        })
        .collect_view();
    view! {
        <div id="policy-images" class="image-choices" role="group" tabindex="-1">{boxes}</div>
        <input type="hidden" name="images" value=joined/>
    }
}
