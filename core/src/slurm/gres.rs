//! Slurm's GRES strings, word by word: `gpu:1g.10gb:4,gpu:l40s:2,shard:8` (what a node has)
//! and `gpu:1g.10gb:2(IDX:0-1),gpu:3g.40gb:0(IDX:N/A),shard:3(2/4,1/4)` (what is allocated).
//! What SliceHub offers them as is `gres_profiles.rs`.

use serde::Serialize;

/// The resources SliceHub reads; every other GRES (`mps`, licences) is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GresName {
    Gpu,
    Shard,
}

/// One entry of a GRES string: `gpu:l40s:2` is `{Gpu, Some("l40s"), 2}`, `shard:8`
/// `{Shard, None, 8}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresItem {
    pub name: GresName,
    /// The type as the administrator (or AutoDetect) named it; `None` when untyped.
    pub kind: Option<String>,
    pub count: u32,
}

/// How many of one GRES, offered as one SliceHub profile, a node has (or has allocated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GresCount {
    /// The profile SliceHub offers it as: `1g.10gb`, `l40s.48gb`, `l40s.48gb.1of4`.
    pub profile: String,
    /// What a job asks Slurm for to get one, without the count: `gpu:1g.10gb`, `gpu:l40s`,
    /// `shard:l40s` (shards Slurm reports typed), `shard` (untyped).
    pub gres: String,
    pub count: u32,
}

/// The `--gres` of a job: one of a GRES read from a node, its words checked again here so
/// that nothing but a plain name reaches Slurm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresRequest(String);

impl GresRequest {
    /// `gpu:l40s:1` for `gpu:l40s`, `shard:l40s:1` for `shard:l40s`, `shard:1` for
    /// `shard`; `None` for any other word. A shard's type has a letter: `shard:4` is a count.
    pub fn one(gres: &str) -> Option<GresRequest> {
        let mut parts = gres.split(':');
        let valid = match (parts.next(), parts.next(), parts.next()) {
            (Some("gpu"), Some(kind), None) => is_plain_type(kind),
            (Some("shard"), Some(kind), None) => is_plain_type(kind) && kind.bytes().any(|b| b.is_ascii_alphabetic()),
            (Some("shard"), None, None) => true,
            _ => false,
        };
        valid.then(|| GresRequest(format!("{gres}:1")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A type name as Slurm and a `--gres` word can carry it: letters, digits and `.` `_` `-`
/// `+` (`1g.10gb+me`), starting with a letter or digit, at most 64 characters.
pub fn is_plain_type(kind: &str) -> bool {
    kind.len() <= 64
        && kind.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && kind.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'))
}

/// The GPU and shard entries of a GRES string. An entry that cannot be read (no count, a
/// count that is not a number or too large, a type with characters no type has) is
/// skipped rather than guessed; entries of the same name and type are added up.
pub fn parse_gres_items(text: &str) -> Vec<GresItem> {
    let mut out: Vec<GresItem> = Vec::new();
    for item in split_top_level(text) {
        let item = item.split('(').next().unwrap_or("").trim();
        let mut parts = item.split(':');
        let name = match parts.next() {
            Some("gpu") => GresName::Gpu,
            Some("shard") => GresName::Shard,
            _ => continue,
        };
        let rest: Vec<&str> = parts.collect();
        let (kind, count) = match rest.as_slice() {
            [count] => (None, *count),
            [kind, count] if is_plain_type(kind) => (Some(kind.to_string()), *count),
            _ => continue,
        };
        let Ok(count) = count.parse::<u32>() else { continue };
        match out.iter_mut().find(|g| g.name == name && g.kind == kind) {
            Some(g) => g.count = g.count.saturating_add(count),
            None => out.push(GresItem { name, kind, count }),
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
            ')' => depth = (depth - 1).max(0),
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

    fn gpu(kind: &str, count: u32) -> GresItem {
        GresItem { name: GresName::Gpu, kind: Some(kind.into()).filter(|k: &String| !k.is_empty()), count }
    }

    fn shard(count: u32) -> GresItem {
        GresItem { name: GresName::Shard, kind: None, count }
    }

    #[test]
    fn a_nodes_gpu_and_shard_entries_are_read_by_type() {
        assert_eq!(parse_gres_items("gpu:1g.10gb:4,gpu:3g.40gb:1"), vec![gpu("1g.10gb", 4), gpu("3g.40gb", 1)]);
        assert_eq!(
            parse_gres_items("gpu:1g.10gb:2(IDX:0,2),gpu:3g.40gb:0(IDX:N/A),shard:8,mps:200"),
            vec![gpu("1g.10gb", 2), gpu("3g.40gb", 0), shard(8)]
        );
        assert_eq!(parse_gres_items("gpu:l40s:2(S:0-1),shard:3(2/4,1/4)"), vec![gpu("l40s", 2), shard(3)]);
        assert_eq!(parse_gres_items("gpu:2"), vec![gpu("", 2)]);
        assert_eq!(
            parse_gres_items("gpu:l40s:2,shard:1g.10gb:0,shard:l40s:8"),
            vec![
                gpu("l40s", 2),
                GresItem { name: GresName::Shard, kind: Some("1g.10gb".into()), count: 0 },
                GresItem { name: GresName::Shard, kind: Some("l40s".into()), count: 8 },
            ]
        );
        assert_eq!(parse_gres_items("(null)"), vec![]);
        assert_eq!(parse_gres_items(""), vec![]);
        assert_eq!(parse_gres_items("gpu:1g.10gb:x,gpu:1g.10gb:1,gpu:1g.10gb:2"), vec![gpu("1g.10gb", 3)]);
    }

    #[test]
    fn odd_entries_are_skipped_and_nothing_panics() {
        let odd = [
            "gpu:l40s:x",
            "gpu:(null)",
            "gpu:(null):2",
            "gpu:l40s:99999999999",
            "gpu:l40s:-1",
            "gpu::2",
            "gpu:l40s;rm -rf /:1",
            "gpu:l40s rm:1",
            "gpu:l40s$(id):1",
            "gpu:l'40s:1",
            "gpu:a:b:1",
            "gpu:.hidden:1",
            "gpu:é40s:1",
            "shard:x",
            "shard:",
            "gpu",
            ":::",
            ")))",
            "(((",
            "gpu:l40s:1)",
        ];
        for text in odd {
            assert_eq!(parse_gres_items(text), vec![], "{text:?}");
        }
        let long = format!("gpu:{}:1", "a".repeat(65));
        assert_eq!(parse_gres_items(&long), vec![]);
        assert_eq!(parse_gres_items("shard:0"), vec![shard(0)]);
        // Counts add up without overflowing.
        assert_eq!(parse_gres_items("gpu:l40s:4294967295,gpu:l40s:4294967295"), vec![gpu("l40s", u32::MAX)]);
        // A comma in the middle of a crafted type splits it into two entries, neither valid.
        assert_eq!(parse_gres_items("gpu:l40s,rm:1"), vec![]);
        // Unbalanced parentheses end nothing early and hide nothing.
        assert_eq!(parse_gres_items("gpu:l40s:1),gpu:a10:1"), vec![gpu("a10", 1)]);
    }

    #[test]
    fn a_jobs_gres_is_one_of_a_plain_word() {
        assert_eq!(GresRequest::one("gpu:l40s").unwrap().as_str(), "gpu:l40s:1");
        assert_eq!(GresRequest::one("gpu:1g.10gb+me").unwrap().as_str(), "gpu:1g.10gb+me:1");
        assert_eq!(GresRequest::one("shard").unwrap().as_str(), "shard:1");
        assert_eq!(GresRequest::one("shard:l40s").unwrap().as_str(), "shard:l40s:1");
        assert_eq!(GresRequest::one("shard:nvidia_a100-sxm4-80gb").unwrap().as_str(), "shard:nvidia_a100-sxm4-80gb:1");
        for bad in [
            "gpu:l40s;rm", "gpu:l40s,shard", "gpu:l40s:2", "gpu:", "gpu", "gpu:a b", "mps", "shard:1", "gpu:l40s\n", "",
            "shard:", "shard:l40s:1", "shard:l40s;rm", "shard:l40s,gpu", "shard:$(id)", "shard:l40s\n", "shard:.x", "shard:12",
        ] {
            assert_eq!(GresRequest::one(bad), None, "{bad:?}");
        }
    }
}
