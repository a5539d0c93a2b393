//! Booked lab sessions of a course: list, book, cancel (the course's instructors and
//! admins; only admins may book over sessions running then).

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::BookingsPageView;

#[server(endpoint = "lab_bookings")]
pub async fn lab_bookings(code: String) -> Result<BookingsPageView, AppError> {
    use super::ssr::{require, services, Action, Caller};
    use slicehub_core::courses::policy_of;
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    let caller = require(Action::SetCoursePolicy(course.id)).await?;
    let policy = policy_of(&services.store, &services.config, course.id).await?;
    let known = services.sessions.known_profiles().await?;
    let profiles: Vec<String> = known.into_iter().filter(|p| policy.allows_profile(p)).collect();
    let most_slices = ssr::most_slices(&services, profiles.clone()).await;
    Ok(BookingsPageView {
        code: course.code,
        title: course.title,
        time_zone: policy.time_zone.clone(),
        profiles,
        most_slices,
        bookings: ssr::of_course(&services, course.id).await?,
        admin: matches!(caller, Caller::User { is_admin: true, .. }),
        days_ahead: services.config.limits.booking_days_ahead,
        slice_hours_per_week: services.config.limits.booking_slice_hours_per_week,
    })
}

#[server(endpoint = "book_lab")]
#[allow(clippy::too_many_arguments)]
pub async fn book_lab(
    code: String,
    profile: String,
    slices: String,
    date: String,
    start: String,
    end: String,
    weeks: String,
    override_running: Option<String>,
) -> Result<i64, AppError> {
    use super::ssr::{actor, from_core, require, services, Action, Caller};
    use slicehub_core::sessions::BookingForm;
use slicehub_core::courses::policy_of;
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    let caller = require(Action::SetCoursePolicy(course.id)).await?;
    let admin = matches!(caller, Caller::User { is_admin: true, .. });
    let policy = policy_of(&services.store, &services.config, course.id).await?;
    let form = BookingForm { profile, slices, date, start, end, weeks };
    let request = form
        .parse(course.id, &policy.time_zone, &actor(&caller), admin && override_running.is_some())?;
    services.sessions.book(&request).await.map_err(from_core)
}

#[server(endpoint = "cancel_lab_booking")]
pub async fn cancel_lab_booking(code: String, id: i64) -> Result<(), AppError> {
    use super::ssr::{actor, from_core, require, services, Action};
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    let caller = require(Action::SetCoursePolicy(course.id)).await?;
    services.sessions.cancel_booking(course.id, id, &actor(&caller)).await.map_err(from_core)
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use crate::views::CourseId;
    use crate::error::AppError;
    use slicehub_core::Services;
    use slicehub_core::sessions::Booking;

    use crate::views::BookingView;

    /// A booking as the pages show it (GPUs are counted, never named by UUID).
    pub fn view_of(b: &Booking) -> BookingView {
        use super::super::sessions::ssr_views::clock_of;
        let gpus: std::collections::BTreeSet<&str> = b.slots.iter().map(|(uuid, _)| uuid.as_str()).collect();
        BookingView {
            id: b.row.id,
            course: b.row.code.clone(),
            profile: b.row.profile.clone(),
            slices: b.row.slices,
            starts_at_ms: b.row.starts_at,
            starts_at: clock_of(b.row.starts_at),
            ends_at_ms: b.row.ends_at,
            ends_at: clock_of(b.row.ends_at),
            weeks: b.row.weeks,
            gpus: gpus.len() as i64,
            created_by: b.row.created_by.clone(),
        }
    }

    /// How many slices of each size all the GPUs hold when empty (each GPU's catalog
    /// says how many instances of a profile it takes), so the form need not offer more.
    /// Empty when the GPUs cannot be read; sizes no GPU offers are left out.
    pub async fn most_slices(services: &Services, profiles: Vec<String>) -> Vec<(String, i64)> {
        services
            .on_gpus(move |gpus| {
                let mut most: Vec<(String, i64)> = profiles.into_iter().map(|p| (p, 0)).collect();
                for gpu in gpus.list_gpus()? {
                    let catalog = gpus.catalog(gpu.index)?;
                    for (name, count) in most.iter_mut() {
                        if let Ok(profile) = catalog.profile_by_name(name.as_str()) {
                            *count += i64::from(profile.max_instances);
                        }
                    }
                }
                most.retain(|(_, count)| *count > 0);
                Ok(most)
            })
            .await
            .unwrap_or_default()
    }

    pub async fn of_course(services: &Services, course_id: CourseId) -> Result<Vec<BookingView>, AppError> {
        let all = services.sessions.bookings().await?;
        Ok(all.iter().filter(|b| b.row.course_id == course_id).map(view_of).collect())
    }
}
