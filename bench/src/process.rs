//! What a benchmark reads about a process (the portal) from `/proc`, and the median.

/// CPU seconds (user and system) process `pid` has used so far. `/proc/PID/stat` counts in
/// clock ticks, 100 a second on Linux x86-64.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<f64> = after_name
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    (fields.get(11).unwrap_or(&0.0) + fields.get(12).unwrap_or(&0.0)) / 100.0
}

/// (resident, peak resident) KiB of process `pid`.
pub fn rss_kib(pid: u32) -> (u64, u64) {
    let [rss, peak] = status_kib(pid, ["VmRSS:", "VmHWM:"]);
    (rss, peak)
}

/// Resident KiB in anonymous memory (the heap, stacks) and in file-backed pages (mostly the
/// binary's code and read-only data, and the C library's; mapped from disk, the kernel
/// may drop them and read them again).
pub fn rss_parts_kib(pid: u32) -> (u64, u64) {
    let [anon, file] = status_kib(pid, ["RssAnon:", "RssFile:"]);
    (anon, file)
}

/// The KiB fields `names` of `/proc/PID/status` (0 where one is missing).
fn status_kib<const N: usize>(pid: u32, names: [&str; N]) -> [u64; N] {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    names.map(|name| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    })
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}
