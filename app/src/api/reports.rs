//! Usage reports: admins for every course, instructors for the courses they teach.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::ReportPageView;

#[server(endpoint = "usage_report")]
pub async fn usage_report(
    period: String,
    from: String,
    to: String,
    group: String,
    course: String,
) -> Result<ReportPageView, AppError> {
    use super::ssr::{now_ms, request_auth, services, Action};
    use crate::views::{LegendEntry, ReportRowView};
    use slicehub_core::auth::authorize;
    use slicehub_core::quotas::hours;
    use slicehub_core::reports::{gpu_strips_svg, memory_hours, report_for, stacked_use_svg, ReportForm, ReportRow};

    let services = services()?;
    let caller = request_auth().await?.caller;
    let form = ReportForm { period, from, to, group, course: course.trim().to_string() };
    let report = report_for(&services.store, &caller, &form, now_ms()).await?;

    let all_courses = authorize(&caller, &Action::ListAllCourses).is_ok();
    let courses = if all_courses {
        services.store.list_courses().await?.into_iter().map(|c| c.code).collect()
    } else {
        let slicehub_core::auth::Caller::User { id, .. } = &caller else { return Err(AppError::internal("no caller")) };
        services
            .store
            .courses_of_user(*id)
            .await?
            .into_iter()
            .filter(|(c, _)| authorize(&caller, &Action::ReportOn(c.id)).is_ok())
            .map(|(c, _)| c.code)
            .collect()
    };
    let row = |r: &ReportRow| ReportRowView {
        key: r.key.clone(),
        slice_hours: hours(r.slice_ms),
        memory_hours: memory_hours(r.memory_gb_s),
        sessions: r.sessions,
        wait_median: wait_words(r.wait_p50_ms),
        wait_p95: wait_words(r.wait_p95_ms),
        ended_time_limit: r.ended_time_limit,
        ended_quota: r.ended_quota,
        ended_idle: r.ended_idle,
    };
    let q = &report.query;
    let (from, to) = q.dates();
    let usage = stacked_use_svg(&report.buckets, report.bucket_ms, &report.by_course, "Slice-hours by course");
    let gpus = gpu_strips_svg(&report.buckets, report.bucket_ms, q.to_ms, &report.by_gpu, "Share of each GPU's compute slices held");
    let csv_query = {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.append_pair("period", q.period.as_str());
        query.append_pair("from", &from);
        query.append_pair("to", &to);
        query.append_pair("group", q.group.as_str());
        query.append_pair("course", &form.course);
        query.finish()
    };
    Ok(ReportPageView {
        period: q.period.as_str().to_string(),
        from,
        to,
        group: q.group.as_str().to_string(),
        course: form.course.clone(),
        courses,
        all_courses,
        period_start_ms: q.from_ms,
        period_end_ms: q.to_ms,
        group_heading: q.group.heading().to_string(),
        group_title: q.group.title().to_string(),
        rows: report.rows.iter().map(row).collect(),
        total: row(&report.total),
        bucket: match report.bucket_ms {
            ms if ms < 86_400_000 => "hour",
            ms if ms == 86_400_000 => "day",
            _ => "week",
        }
        .to_string(),
        use_chart: usage.svg,
        use_legend: usage.legend.into_iter().map(|(name, colour)| LegendEntry { name, colour: colour.to_string() }).collect(),
        gpu_chart: if report.by_gpu.is_empty() { String::new() } else { gpus.svg },
        csv_query,
    })
}

/// `—`, `45 s`, `4 min 10 s`, `2 h 5 min`.
#[cfg(feature = "ssr")]
fn wait_words(ms: Option<i64>) -> String {
    let Some(ms) = ms else { return "—".to_string() };
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}
