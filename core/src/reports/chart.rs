//! The report's two charts as SVG, drawn on the server so they need no script: use over
//! time stacked by course, and how much of each GPU's compute slices were held.
//!
//! Written by hand rather than with `plotters`: its text layout needs a font engine
//! (fontconfig and FreeType through `ttf`, or a font file shipped for `ab_glyph`) only to
//! measure labels, while a browser lays out SVG text itself; the charts here are
//! rectangles and a few labels.

use std::fmt::Write;

use super::usage::Series;

/// Colours told apart by people with the common colour-vision deficiencies (Okabe–Ito).
pub const PALETTE: [&str; 8] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#666666"];
const WIDTH: f64 = 720.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 24.0;
const HOUR_MS: f64 = 3_600_000.0;
/// A GPU has seven compute slices.
const GPU_SLICES: f64 = 7.0;

/// A drawn chart and the names its colours stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    pub svg: String,
    pub legend: Vec<(String, &'static str)>,
}

/// Compute-slice-hours per bucket, stacked by series; beyond seven series the smallest
/// are drawn together as "others".
pub fn stacked_use_svg(buckets: &[i64], bucket_ms: i64, series: &[Series], title: &str) -> Chart {
    let shown = fold_small(series);
    let height = 240.0;
    let plot_h = height - TOP - BOTTOM;
    let plot_w = WIDTH - LEFT - RIGHT;
    let stack_max = (0..buckets.len())
        .map(|i| shown.iter().map(|s| s.values[i]).sum::<i64>())
        .max()
        .unwrap_or(0) as f64
        / HOUR_MS;
    let top = nice_ceiling(stack_max);
    let mut svg = open_svg(height, title);
    for step in 0..=4 {
        let value = top * f64::from(step) / 4.0;
        let y = TOP + plot_h - plot_h * value / top;
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="currentColor" stroke-opacity="0.15"/><text x="{}" y="{:.1}" text-anchor="end" font-size="11" fill="currentColor">{}</text>"#,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            number(value)
        );
    }
    let _ = write!(
        svg,
        r#"<text x="4" y="{:.1}" font-size="11" fill="currentColor">slice-hours</text>"#,
        TOP - 8.0
    );
    let slot = plot_w / buckets.len().max(1) as f64;
    for (i, start) in buckets.iter().enumerate() {
        let mut base = TOP + plot_h;
        let x = LEFT + slot * i as f64 + slot * 0.1;
        for (s, colour) in shown.iter().zip(PALETTE) {
            let hours = s.values[i] as f64 / HOUR_MS;
            if hours <= 0.0 {
                continue;
            }
            let h = plot_h * hours / top;
            base -= h;
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{base:.1}" width="{:.1}" height="{h:.1}" fill="{colour}"><title>{}, {}: {} slice-hours</title></rect>"#,
                slot * 0.8,
                escape(&s.name),
                bucket_label(*start, bucket_ms),
                number(hours)
            );
        }
    }
    x_labels(&mut svg, buckets, bucket_ms, height, slot);
    svg.push_str("</svg>");
    let legend = shown.iter().zip(PALETTE).map(|(s, c)| (s.name.clone(), c)).collect();
    Chart { svg, legend }
}

/// One strip per GPU: each bucket shaded by the share of its 7 compute slices held.
pub fn gpu_strips_svg(buckets: &[i64], bucket_ms: i64, end_ms: i64, gpus: &[Series], title: &str) -> Chart {
    let row_h = 22.0;
    let height = TOP + BOTTOM + row_h * gpus.len().max(1) as f64;
    let slot = (WIDTH - LEFT - RIGHT) / buckets.len().max(1) as f64;
    let mut svg = open_svg(height, title);
    for (row, gpu) in gpus.iter().enumerate() {
        let y = TOP + row_h * row as f64;
        let name = short_name(&gpu.name);
        let _ = write!(
            svg,
            r#"<text x="{}" y="{:.1}" text-anchor="end" font-size="11" fill="currentColor">{}</text>"#,
            LEFT - 6.0,
            y + row_h * 0.65,
            escape(&name)
        );
        for (i, start) in buckets.iter().enumerate() {
            let length = (start + bucket_ms).min(end_ms) - start;
            let share = gpu.values[i] as f64 / (GPU_SLICES * length.max(1) as f64);
            let _ = write!(
                svg,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="{:.2}" stroke="currentColor" stroke-opacity="0.08"><title>{}, {}: {:.0}% of its compute slices held</title></rect>"#,
                LEFT + slot * i as f64,
                y + 2.0,
                slot,
                row_h - 4.0,
                PALETTE[0],
                share.clamp(0.0, 1.0),
                escape(&gpu.name),
                bucket_label(*start, bucket_ms),
                share * 100.0
            );
        }
    }
    x_labels(&mut svg, buckets, bucket_ms, height, slot);
    svg.push_str("</svg>");
    Chart { svg, legend: Vec::new() }
}

/// A GPU's name as a row label: whole when short, else its last six characters
/// (a UUID's tail; the tooltip has it whole).
fn short_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= 10 {
        return name.to_string();
    }
    let tail: String = chars[chars.len() - 6..].iter().collect();
    format!("…{tail}")
}

fn open_svg(height: f64, title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" aria-label="{0}" font-family="system-ui, sans-serif"><title>{0}</title>"#,
        escape(title)
    )
}

/// At most eight labels under the buckets.
fn x_labels(svg: &mut String, buckets: &[i64], bucket_ms: i64, height: f64, slot: f64) {
    let every = buckets.len().div_ceil(8).max(1);
    for (i, start) in buckets.iter().enumerate().step_by(every) {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="currentColor">{}</text>"#,
            LEFT + slot * i as f64,
            height - 6.0,
            bucket_label(*start, bucket_ms)
        );
    }
}

fn fold_small(series: &[Series]) -> Vec<Series> {
    if series.len() <= PALETTE.len() {
        return series.to_vec();
    }
    let (kept, rest) = series.split_at(PALETTE.len() - 1);
    let mut others = Series { name: format!("{} others", rest.len()), values: vec![0; rest[0].values.len()] };
    for s in rest {
        for (sum, v) in others.values.iter_mut().zip(&s.values) {
            *sum += v;
        }
    }
    kept.iter().cloned().chain([others]).collect()
}

/// 1, 2 or 5 times a power of ten, at least `value` (1 for nothing).
fn nice_ceiling(value: f64) -> f64 {
    if value <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|c| *c >= value).unwrap_or(10.0 * power)
}

/// Enough decimals to tell small values apart: `12`, `0.5`, `0.0025`.
fn number(value: f64) -> String {
    let decimals = if value > 0.0 && value < 1.0 { (2.0 - value.log10().floor()).min(8.0) as usize } else { 2 };
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// `14:00` for hours, `25 Nov` for days and weeks (UTC).
fn bucket_label(start_ms: i64, bucket_ms: i64) -> String {
    let format = if bucket_ms < 86_400_000 { "%H:%M" } else { "%d %b" };
    chrono::DateTime::from_timestamp_millis(start_ms)
        .map(|t| t.format(format).to_string())
        .unwrap_or_default()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
