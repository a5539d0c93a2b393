//! Slurm's GRES strings: `gpu:1g.10gb:4,gpu:3g.40gb:1` (what a node has) and
//! `gpu:1g.10gb:2(IDX:0-1),gpu:3g.40gb:0(IDX:N/A)` (what is allocated).

use serde::Serialize;

/// How many of one typed GPU GRES a node has (or has allocated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GresCount {
    /// The MIG profile as Slurm names it (`1g.10gb`); empty for untyped GPUs.
    pub profile: String,
    pub count: u32,
}

/// The GPU entries of a GRES string; other resources (`shard`, `mps`) are left out, and
/// an entry that cannot be read is skipped rather than guessed.
pub fn parse_gres(text: &str) -> Vec<GresCount> {
    let mut out: Vec<GresCount> = Vec::new();
    for item in split_top_level(text) {
        let item = item.split('(').next().unwrap_or("").trim();
        let mut parts = item.split(':');
        if parts.next() != Some("gpu") {
            continue;
        }
        let rest: Vec<&str> = parts.collect();
        let (profile, count) = match rest.as_slice() {
            [count] => ("", *count),
            [profile, count] => (*profile, *count),
            _ => continue,
        };
        let Ok(count) = count.parse::<u32>() else { continue };
        match out.iter_mut().find(|g| g.profile == profile) {
            Some(g) => g.count += count,
            None => out.push(GresCount { profile: profile.to_string(), count }),
        }
    }
    out
}

/// Splits on commas that are not inside parentheses (`IDX:0,2` lists indices with commas).
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(profile: &str, count: u32) -> GresCount {
        GresCount { profile: profile.into(), count }
    }

    #[test]
    fn a_nodes_mig_gres_are_read_by_profile() {
        assert_eq!(parse_gres("gpu:1g.10gb:4,gpu:3g.40gb:1"), vec![g("1g.10gb", 4), g("3g.40gb", 1)]);
        assert_eq!(
            parse_gres("gpu:1g.10gb:2(IDX:0,2),gpu:3g.40gb:0(IDX:N/A),shard:8"),
            vec![g("1g.10gb", 2), g("3g.40gb", 0)]
        );
        assert_eq!(parse_gres("gpu:2"), vec![g("", 2)]);
        assert_eq!(parse_gres("(null)"), vec![]);
        assert_eq!(parse_gres(""), vec![]);
        assert_eq!(parse_gres("gpu:1g.10gb:x,gpu:1g.10gb:1,gpu:1g.10gb:2"), vec![g("1g.10gb", 3)]);
    }
}
