//! The usage report: slice-hours, GPU-memory-hours, sessions, queue waits and end causes
//! for a period, grouped as chosen, with two charts drawn on the server and a CSV of the
//! same numbers. A plain GET form, so it works before (and without) the wasm bundle.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::reports::usage_report;
use crate::components::message::ErrorMessage;
use crate::components::time::{utc_text, LocalTime};
use crate::api::message;
use crate::views::{ReportPageView, ReportRowView};

const PERIODS: [(&str, &str); 4] = [
    ("day", "Today (UTC)"),
    ("week", "This week (UTC, from Monday)"),
    ("term", "Term (16 weeks)"),
    ("custom", "Custom days"),
];
const GROUPS: [(&str, &str); 5] = [
    ("course", "Course"),
    ("user", "User"),
    ("profile", "Slice size"),
    ("gpu", "GPU"),
    ("image", "Image"),
];

#[component]
pub fn ReportsPage() -> impl IntoView {
    let query = use_query_map();
    let field = move |name: &str| query.read().get(name).unwrap_or_default();
    let page = Resource::new(
        move || (field("period"), field("from"), field("to"), field("group"), field("course")),
        |(period, from, to, group, course)| usage_report(period, from, to, group, course),
    );
    view! {
        <Title text="Usage reports"/>
        <h1 class="page-title">"Usage reports"</h1>
        <p class="muted">
            "Counted from the usage ledger in slice-hours: one compute slice (the "
            <i>"N"</i>"g of a slice size) for one hour, so a 3g slice for an hour is 3. Periods are whole days in UTC; "
            "a week begins on Monday, a term is the last 16 weeks."
        </p>
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(report) => view! { <Report report/> }.into_any(),
                    Err(error) => view! {
                        <ReportForm report=None/>
                        <ErrorMessage text=message(&error)/>
                    }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ReportForm(report: Option<ReportPageView>) -> impl IntoView {
    let query = use_query_map();
    let typed = move |name: &str| query.read_untracked().get(name).unwrap_or_default();
    let (period, from, to, group, course) = match &report {
        Some(r) => (r.period.clone(), r.from.clone(), r.to.clone(), r.group.clone(), r.course.clone()),
        None => (typed("period"), typed("from"), typed("to"), typed("group"), typed("course")),
    };
    let options = |choices: &'static [(&'static str, &'static str)], chosen: String| {
        choices
            .iter()
            .map(|(value, words)| view! { <option value=*value selected=*value == chosen>{*words}</option> })
            .collect_view()
    };
    let (courses, all) = report.as_ref().map(|r| (r.courses.clone(), r.all_courses)).unwrap_or_default();
    let course_options = courses
        .into_iter()
        .map(|code| {
            let selected = code.eq_ignore_ascii_case(&course);
            view! { <option value=code.clone() selected=selected>{code.clone()}</option> }
        })
        .collect_view();
    view! {
        <form class="card form report-form" method="get" action="/reports">
            <div class="field-grid report-fields">
                <div class="field">
                    <label for="report-period">"Period"</label>
                    <select id="report-period" name="period">{options(&PERIODS, period)}</select>
                </div>
                <div class="field">
                    <label for="report-from">"First day (custom)"</label>
                    <input id="report-from" name="from" type="date" value=from/>
                </div>
                <div class="field">
                    <label for="report-to">"Last day (custom)"</label>
                    <input id="report-to" name="to" type="date" value=to/>
                </div>
                <div class="field">
                    <label for="report-group">"Group by"</label>
                    <select id="report-group" name="group">{options(&GROUPS, group)}</select>
                </div>
                <div class="field">
                    <label for="report-course">"Course"</label>
                    <select id="report-course" name="course">
                        <option value="" selected=course.is_empty()>{if all { "All courses" } else { "All my courses" }}</option>
                        {course_options}
                    </select>
                </div>
            </div>
            <button class="btn btn-primary" type="submit">"Show report"</button>
        </form>
    }
}

#[component]
fn Report(report: ReportPageView) -> impl IntoView {
    let csv = format!("/reports/usage.csv?{}", report.csv_query);
    let legend = report
        .use_legend
        .iter()
        .map(|entry| {
            let swatch = format!("<svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" fill=\"{}\"/></svg>", entry.colour);
            view! { <li><span class="swatch" inner_html=swatch></span>{entry.name.clone()}</li> }
        })
        .collect_view();
    let empty = report.rows.is_empty();
    let heading = report.group_heading.clone();
    let bucket = report.bucket.clone();
    view! {
        <ReportForm report=Some(report.clone())/>
        <p class="report-range">
            "From "<LocalTime ms=report.period_start_ms utc=utc_text(report.period_start_ms) with_day=true/>
            " to "<LocalTime ms=report.period_end_ms utc=utc_text(report.period_end_ms) with_day=true/>
        </p>
        <div class="stack">
            <section class="card">
                <div class="card-head">
                    <h2 class="card-title">{report.group_title.clone()}</h2>
                    <a class="btn btn-secondary btn-small report-csv" href=csv download="">"Download CSV"</a>
                </div>
                {if empty {
                    view! { <p class="empty-state muted">"No GPU use in this period."</p> }.into_any()
                } else {
                    view! { <ReportTable heading rows=report.rows.clone() total=report.total.clone()/> }.into_any()
                }}
            </section>
            <section class="card">
                <h2 class="card-title">{format!("Use over time, by course (one bar a {bucket})")}</h2>
                <figure class="chart use-chart" inner_html=report.use_chart.clone()></figure>
                <ul class="legend">{legend}</ul>
            </section>
            <section class="card">
                <h2 class="card-title">"GPU slices held over time"</h2>
                {if report.gpu_chart.is_empty() {
                    view! { <p class="empty-state muted">"No GPU held a slice in this period."</p> }.into_any()
                } else {
                    view! {
                        <figure class="chart gpu-chart" inner_html=report.gpu_chart.clone()></figure>
                        <p class="hint">"Darker is more of the GPU's seven compute slices held; hover for the share."</p>
                    }.into_any()
                }}
            </section>
        </div>
    }
}

#[component]
fn ReportTable(heading: String, rows: Vec<ReportRowView>, total: ReportRowView) -> impl IntoView {
    let line = |r: ReportRowView, total: bool| {
        view! {
            <tr class:report-total=total data-key=r.key.clone()>
                <th scope="row">{if total { "All".to_string() } else { r.key.clone() }}</th>
                <td data-label="Slice-hours" class="slice-hours">{r.slice_hours}</td>
                <td data-label="GPU memory GB-hours">{r.memory_hours}</td>
                <td data-label="Sessions">{r.sessions}</td>
                <td data-label="Wait, median">{r.wait_median}</td>
                <td data-label="Wait, 95th percentile">{r.wait_p95}</td>
                <td data-label="Ended at time limit">{r.ended_time_limit}</td>
                <td data-label="Ended, quota used up">{r.ended_quota}</td>
                <td data-label="Ended idle">{r.ended_idle}</td>
            </tr>
        }
    };
    let body = rows.into_iter().map(|r| line(r, false)).collect_view();
    view! {
        <div class="table-wrap">
            <table class="table table-stack report-table">
                <thead><tr>
                    <th scope="col">{heading}</th>
                    <th scope="col">"Slice-hours"</th>
                    <th scope="col">"GPU memory GB-hours"</th>
                    <th scope="col">"Sessions"</th>
                    <th scope="col">"Wait, median"</th>
                    <th scope="col">"Wait, p95"</th>
                    <th scope="col">"Time limit"</th>
                    <th scope="col">"Quota"</th>
                    <th scope="col">"Idle"</th>
                </tr></thead>
                <tbody>{body}</tbody>
                <tfoot>{line(total, true)}</tfoot>
            </table>
        </div>
    }
}
