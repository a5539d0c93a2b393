use leptos::prelude::*;

/// A moment as the reader's local clock (`14:03`), with UTC on hover. The server renders
/// `utc`; the browser swaps in its own time zone once hydrated.
#[component]
pub fn LocalTime(
    ms: i64,
    #[prop(into)] utc: String,
    #[prop(optional)] seconds: bool,
    /// Also the weekday and date: `Mon 30 Nov, 00:00`.
    #[prop(optional)]
    with_day: bool,
) -> impl IntoView {
    let text = RwSignal::new(utc.clone());
    Effect::new(move |_| {
        if let Some(local) = local_clock(ms, seconds) {
            text.set(match local_day(ms).filter(|_| with_day) {
                Some(day) => format!("{day}, {local}"),
                None => local,
            });
        }
    });
    view! { <time datetime=iso(ms) title=utc>{move || text.get()}</time> }
}

/// When a waiting claim starts, in the reader's time: `about 14:05, at the latest 14:40`
/// (only the latter when they fall in the same minute).
#[component]
pub fn EtaText(eta: crate::views::Eta) -> impl IntoView {
    let same_minute = eta.about_ms / 60_000 == eta.latest_ms / 60_000;
    let about = (!same_minute)
        .then(|| view! { "about " <LocalTime ms=eta.about_ms utc=eta.about.clone()/> ", " });
    view! {
        <span class="eta" data-about-ms=eta.about_ms data-latest-ms=eta.latest_ms>
            {about} "at the latest " <LocalTime ms=eta.latest_ms utc=eta.latest.clone()/>
        </span>
    }
}

/// How many minutes are left until `deadline_ms`, counting down while the page is open.
#[component]
pub fn TimeLeft(deadline_ms: i64, initial: String) -> impl IntoView {
    let text = RwSignal::new(initial);
    Effect::new(move |_| {
        let update = move || {
            if let Some(now) = now_ms() {
                text.set(minutes_left(deadline_ms, now));
            }
        };
        update();
        if let Ok(handle) = set_interval_with_handle(update, std::time::Duration::from_secs(20)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! { <span class="time-left">{move || text.get()}</span> }
}

/// A warning that shows once `deadline_ms` is less than `before_ms` away, checked while
/// the page is open: "Save your work: this session stops in 8 min (…)."
#[component]
pub fn StopWarning(deadline_ms: i64, before_ms: i64, why: &'static str) -> impl IntoView {
    let due = RwSignal::new(false);
    let left = RwSignal::new(String::new());
    Effect::new(move |_| {
        let update = move || {
            if let Some(now) = now_ms() {
                due.set(deadline_ms - now < before_ms);
                left.set(minutes_left(deadline_ms, now).trim_end_matches(" left").to_string());
            }
        };
        update();
        if let Ok(handle) = set_interval_with_handle(update, std::time::Duration::from_secs(20)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <Show when=move || due.get()>
            <p class="stop-warning" role="status">
                "Save your work: this session stops in " {move || left.get()} " (" {why} ")."
            </p>
        </Show>
    }
}

/// How long since `since_ms`, counting up while the page is open: `2 min 5 s`.
#[component]
pub fn Elapsed(since_ms: i64, initial: String) -> impl IntoView {
    let text = RwSignal::new(initial);
    Effect::new(move |_| {
        let update = move || {
            if let Some(now) = now_ms() {
                text.set(duration_words(now - since_ms));
            }
        };
        update();
        if let Ok(handle) = set_interval_with_handle(update, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! { <span class="elapsed">{move || text.get()}</span> }
}

/// `58 min left`, `less than a minute left`.
pub fn minutes_left(deadline_ms: i64, now_ms: i64) -> String {
    let minutes = (deadline_ms - now_ms).max(0) / 60_000;
    match minutes {
        0 => "less than a minute left".to_string(),
        m if m >= 120 => format!("{} h {} min left", m / 60, m % 60),
        m => format!("{m} min left"),
    }
}

/// `2 min 5 s`, `1 h 3 min`, `12 s`.
pub fn duration_words(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// `2026-11-30 00:00 UTC`: what a page shows before the browser swaps in local time.
pub fn utc_text(ms: i64) -> String {
    let iso = iso(ms);
    format!("{} {} UTC", &iso[..10], &iso[11..16])
}

fn iso(ms: i64) -> String {
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        (rest % 3600) / 60,
        rest % 60
    )
}

#[cfg(feature = "hydrate")]
fn local_clock(ms: i64, seconds: bool) -> Option<String> {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    let (h, m, s) = (date.get_hours(), date.get_minutes(), date.get_seconds());
    Some(if seconds {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}")
    })
}

#[cfg(feature = "hydrate")]
fn local_day(ms: i64) -> Option<String> {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    Some(format!(
        "{} {} {}",
        DAYS[date.get_day() as usize % 7],
        date.get_date(),
        MONTHS[date.get_month() as usize % 12]
    ))
}

#[cfg(not(feature = "hydrate"))]
fn local_day(_ms: i64) -> Option<String> {
    None
}

#[cfg(not(feature = "hydrate"))]
fn local_clock(_ms: i64, _seconds: bool) -> Option<String> {
    None
}

#[cfg(feature = "hydrate")]
fn now_ms() -> Option<i64> {
    Some(js_sys::Date::now() as i64)
}

#[cfg(not(feature = "hydrate"))]
fn now_ms() -> Option<i64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc_text(1_700_000_000_000), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn words() {
        assert_eq!(duration_words(12_400), "12 s");
        assert_eq!(duration_words(125_000), "2 min 5 s");
        assert_eq!(minutes_left(10 * 60_000 + 5, 0), "10 min left");
        assert_eq!(minutes_left(0, 5), "less than a minute left");
    }
}
