pub mod admin;
pub mod auth;
pub mod courses;
pub mod gpus;
pub mod home;
pub mod not_found;
pub mod reports;
pub mod sessions;
pub mod status;

use leptos::prelude::*;
use crate::error::AppError;

use crate::api::instance::check_instance;
use crate::views::InstanceStatus;

/// The instance's status, fetched with the page and again on each `recheck` call.
fn instance_resource() -> (
    Resource<Result<InstanceStatus, AppError>>,
    Callback<()>,
) {
    let generation = RwSignal::new(0u32);
    let resource = Resource::new(move || generation.get(), |_| check_instance());
    (
        resource,
        Callback::new(move |()| generation.update(|n| *n += 1)),
    )
}

#[component]
pub fn LoadError(error: AppError) -> impl IntoView {
    view! {
        <div class="card alert" role="alert">
            <strong>"This part of the page could not be loaded. "</strong>
            {crate::api::message(&error)}
            " Reload the page to try again."
        </div>
    }
}

/// `1 member`, `3 members`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
