//! What SliceHub offers a node's GRES as.
//!
//! - A MIG-typed GPU GRES keeps its name: `gpu:1g.10gb` is `1g.10gb`.
//! - A GPU GRES of another type is a whole GPU. A type that names one built-in model
//!   (`l40s`, `L4`, `a100_80gb`, AutoDetect's `nvidia_a100-sxm4-80gb`) is that model's
//!   whole profile (`l40s.48gb`); a type that leaves the memory open (`a100`, `v100`) or
//!   names no built-in model keeps its own name, lowercased (`a100`, `rtx3090`).
//! - A node's shards are shares of a GPU model without MIG: `gpu:l40s:2,shard:l40s:8` is
//!   4 shards a GPU, `l40s.48gb.1of4`, asked for as `shard:l40s` (Slurm 22.05 types the
//!   shards tied to a GPU's file after it; a typed request lands on that model's shards
//!   only). Typed shards of each model are offered apart. Untyped shards (`shard:8`) are
//!   shares of the node's one GPU model, asked for as `shard`. Shards that do not divide
//!   evenly over their GPUs, that make fewer than 2 or more than 7 a GPU, or that sit beside
//!   no such GPU (or, untyped, several models) are not offered (and logged once); their
//!   words are kept (`left_out_shards`) so that no request can land on them.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use slicehub_mig::{mig_compute_slices, share_of, share_profile_name, Catalog, MAX_SHARES, MIN_SHARES};

use super::gres::{parse_gres_items, GresCount, GresItem, GresName, GresRequest};

/// A node's GRES as SliceHub offers them, and the entries it leaves out, in words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeGres {
    pub offered: Vec<GresCount>,
    pub used: Vec<GresCount>,
    pub skipped: Vec<String>,
    /// The request words of shards the node has but does not offer (`shard:l40s`, `shard`):
    /// a shard request that could land on them is refused (`gres_for`).
    pub left_out_shards: Vec<String>,
}

/// `1g.10gb`, `3g.40gb`, `1g.10gb+me`: a MIG profile as NVML and Slurm name it.
pub fn is_mig_type(kind: &str) -> bool {
    let kind = kind.strip_suffix("+me").unwrap_or(kind);
    let Some((compute, memory)) = kind.split_once("g.") else { return false };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let memory = memory.strip_suffix("gb").unwrap_or("");
    digits(compute) && digits(memory)
}

/// The profile a GPU GRES of type `kind` is offered as, or why it is not offered.
pub fn gpu_type_profile(kind: &str) -> Result<String, String> {
    if is_mig_type(kind) {
        return Ok(kind.to_string());
    }
    if let Some(whole) = Catalog::whole_for_model(kind).ok().and_then(|c| c.profiles().first()) {
        return Ok(whole.name.clone());
    }
    let own = kind.to_ascii_lowercase();
    if share_of(&own).is_some() {
        return Err("named like a share of a GPU (only shards are offered as shares)".into());
    }
    // Quotas read `Ng…` as a MIG slice of N compute slices.
    if mig_compute_slices(&own).is_some() {
        return Err("named like a MIG slice but not one".into());
    }
    Ok(own)
}

/// What a node offers, from its `gres` and `gres_used` as slurmrestd gives them.
pub fn node_gres(gres: &str, used: &str) -> NodeGres {
    let mut out = NodeGres::default();
    let items = parse_gres_items(gres);
    for item in items.iter().filter(|i| i.name == GresName::Gpu) {
        let Some(kind) = &item.kind else {
            out.offered.push(GresCount { profile: String::new(), gres: "gpu".into(), count: item.count });
            continue;
        };
        match gpu_type_profile(kind) {
            Ok(profile) => out.offered.push(GresCount { profile, gres: format!("gpu:{kind}"), count: item.count }),
            Err(why) => out.skipped.push(format!("gpu:{kind} is not offered: {why}")),
        }
    }
    let shard_items: Vec<&GresItem> = items.iter().filter(|i| i.name == GresName::Shard && i.count > 0).collect();
    let untyped = shard_items.iter().any(|i| i.kind.is_none());
    let typed = shard_items.iter().any(|i| i.kind.is_some());
    for item in &shard_items {
        let (word, share) = match &item.kind {
            _ if typed && untyped => (shard_word(item), Err("the node has typed and untyped shards".to_string())),
            None => ("shard".to_string(), share_profile(&whole_gpus(&out.offered, None), item.count)),
            Some(kind) => {
                let word = format!("shard:{kind}");
                let whole = whole_gpus(&out.offered, Some(kind));
                let share = if GresRequest::one(&word).is_none() {
                    Err(format!("the type {kind} cannot be asked for"))
                } else if whole.is_empty() {
                    Err(format!("no GPU of type {kind} without MIG on the node to share"))
                } else {
                    share_profile(&whole, item.count)
                };
                (word, share)
            }
        };
        match share {
            Ok(profile) => out.offered.push(GresCount { profile, gres: word, count: item.count }),
            Err(why) => {
                out.skipped.push(format!("{}:{} is not offered: {why}", shard_word(item), item.count));
                if !out.left_out_shards.contains(&word) {
                    out.left_out_shards.push(word);
                }
            }
        }
    }
    let used_items = parse_gres_items(used);
    for item in used_items.iter().filter(|i| i.name == GresName::Gpu) {
        let gres = match &item.kind {
            Some(kind) => format!("gpu:{kind}"),
            None => "gpu".to_string(),
        };
        if let Some(offered) = out.offered.iter().find(|o| o.gres == gres) {
            out.used.push(GresCount { profile: offered.profile.clone(), gres, count: item.count });
        }
    }
    let shares: Vec<GresCount> = out.offered.iter().filter(|o| o.gres.starts_with("shard")).cloned().collect();
    for offered in shares {
        let kind = offered.gres.strip_prefix("shard:");
        let count = used_items
            .iter()
            .filter(|i| i.name == GresName::Shard && (kind.is_none() || i.kind.as_deref() == kind))
            .fold(0u32, |n, i| n.saturating_add(i.count));
        out.used.push(GresCount { profile: offered.profile, gres: offered.gres, count });
    }
    out
}

/// `shard:l40s` for shards of type `l40s`, `shard` for untyped ones.
fn shard_word(item: &GresItem) -> String {
    match &item.kind {
        Some(kind) => format!("shard:{kind}"),
        None => "shard".to_string(),
    }
}

/// The node's offered whole GPUs without MIG: of type `kind` (exactly as Slurm names it),
/// or of any type.
fn whole_gpus<'a>(offered: &'a [GresCount], kind: Option<&str>) -> Vec<&'a GresCount> {
    offered
        .iter()
        .filter(|g| g.gres.starts_with("gpu:") && !is_mig_type(&g.profile) && g.count > 0)
        .filter(|g| kind.is_none_or(|k| g.gres.strip_prefix("gpu:") == Some(k)))
        .collect()
}

/// The share profile of `shards` spread over whole GPUs of one model.
fn share_profile(whole: &[&GresCount], shards: u32) -> Result<String, String> {
    let mut models: Vec<&str> = whole.iter().map(|g| g.profile.as_str()).collect();
    models.sort_unstable();
    models.dedup();
    let model = match models.as_slice() {
        [one] => *one,
        [] => return Err("no typed GPU without MIG on the node to share".into()),
        _ => return Err(format!("the node has GPUs of several models ({})", models.join(", "))),
    };
    let gpus = whole.iter().fold(0u32, |n, g| n.saturating_add(g.count));
    if !shards.is_multiple_of(gpus) {
        return Err(format!("{shards} shards do not divide evenly over {gpus} GPUs"));
    }
    let per_gpu = shards / gpus;
    if !(u32::from(MIN_SHARES)..=u32::from(MAX_SHARES)).contains(&per_gpu) {
        return Err(format!("{per_gpu} shards a GPU; SliceHub shares a GPU {MIN_SHARES} to {MAX_SHARES} ways"));
    }
    Ok(share_profile_name(model, per_gpu as u8))
}

/// Logs each node's left-out entries once per process (the nodes are read every second).
pub fn log_skipped(node: &str, skipped: &[String]) {
    static SEEN: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
    let Ok(mut seen) = SEEN.lock() else { return };
    for why in skipped {
        let line = format!("{node}: {why}");
        if seen.len() < 1000 && seen.insert(line) {
            tracing::warn!(node = %node, "slurm: {why}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(profile: &str, gres: &str, count: u32) -> GresCount {
        GresCount { profile: profile.into(), gres: gres.into(), count }
    }

    fn offered(gres: &str) -> Vec<GresCount> {
        node_gres(gres, "").offered
    }

    #[test]
    fn mig_types_keep_their_names() {
        assert_eq!(offered("gpu:1g.10gb:4,gpu:3g.40gb:1"), vec![g("1g.10gb", "gpu:1g.10gb", 4), g("3g.40gb", "gpu:3g.40gb", 1)]);
        assert!(is_mig_type("1g.10gb") && is_mig_type("7g.80gb") && is_mig_type("1g.10gb+me"));
        assert!(!is_mig_type("l40s") && !is_mig_type("1g.") && !is_mig_type("g.10gb") && !is_mig_type("1g.10"));
    }

    #[test]
    fn a_type_naming_one_built_in_model_is_its_whole_gpu() {
        assert_eq!(gpu_type_profile("l40s"), Ok("l40s.48gb".into()));
        assert_eq!(gpu_type_profile("L40S"), Ok("l40s.48gb".into()));
        assert_eq!(gpu_type_profile("l4"), Ok("l4.24gb".into()));
        assert_eq!(gpu_type_profile("a10"), Ok("a10.24gb".into()));
        assert_eq!(gpu_type_profile("t4"), Ok("t4.16gb".into()));
        assert_eq!(gpu_type_profile("a100_80gb"), Ok("a100.80gb".into()));
        assert_eq!(gpu_type_profile("nvidia_a100-sxm4-40gb"), Ok("a100.40gb".into()));
        assert_eq!(gpu_type_profile("tesla_v100-sxm2-32gb"), Ok("v100.32gb".into()));
        assert_eq!(offered("gpu:l40s:2"), vec![g("l40s.48gb", "gpu:l40s", 2)]);
    }

    #[test]
    fn a_type_that_leaves_the_model_open_keeps_its_own_name() {
        assert_eq!(gpu_type_profile("a100"), Ok("a100".into()));
        assert_eq!(gpu_type_profile("V100"), Ok("v100".into()));
        assert_eq!(gpu_type_profile("rtx3090"), Ok("rtx3090".into()));
        // Shaped as `gpu.weights` names a whole GPU, so an administrator can weigh it.
        assert_eq!(gpu_type_profile("RTX3090.24gb"), Ok("rtx3090.24gb".into()));
        assert_eq!(offered("gpu:a100:1"), vec![g("a100", "gpu:a100", 1)]);
    }

    #[test]
    fn a_type_named_like_a_share_or_a_slice_is_not_offered() {
        // Quotas would charge these as a part of a GPU or a small slice.
        assert!(gpu_type_profile("foo.1of4").is_err());
        assert!(gpu_type_profile("1gpu").is_err());
        // One that names a model is that model, whole, whatever else it says.
        assert_eq!(gpu_type_profile("l40s.48gb.1of4"), Ok("l40s.48gb".into()));
        let node = node_gres("gpu:foo.1of7:2,gpu:1gpu:1,gpu:a10:1", "");
        assert_eq!(node.offered, vec![g("a10.24gb", "gpu:a10", 1)]);
        assert_eq!(node.skipped.len(), 2, "{:?}", node.skipped);
    }

    #[test]
    fn shards_are_shares_of_the_nodes_one_gpu_model() {
        let node = node_gres("gpu:l40s:2,shard:8", "gpu:l40s:1(IDX:0),shard:3(0/4,3/4)");
        assert_eq!(node.offered, vec![g("l40s.48gb", "gpu:l40s", 2), g("l40s.48gb.1of4", "shard", 8)]);
        assert_eq!(node.used, vec![g("l40s.48gb", "gpu:l40s", 1), g("l40s.48gb.1of4", "shard", 3)]);
        assert!(node.skipped.is_empty());
        assert_eq!(offered("gpu:a100:1,shard:7")[1], g("a100.1of7", "shard", 7));
        assert_eq!(offered("gpu:l4:3,shard:6")[1], g("l4.24gb.1of2", "shard", 6));
    }

    #[test]
    fn typed_shards_are_shares_of_their_own_gpu_type() {
        // The test cluster's node 1 as Slurm 22.05 reports it: shards typed after their GPU.
        let gres = "gpu:1g.10gb:4,gpu:3g.40gb:1,gpu:l40s:2,shard:1g.10gb:0,shard:3g.40gb:0,shard:l40s:8";
        let used = "gpu:1g.10gb:1(IDX:0),gpu:3g.40gb:0(IDX:N/A),gpu:l40s:1(IDX:5),shard:1g.10gb:0(IDX:N/A),shard:3g.40gb:0(IDX:N/A),shard:l40s:1(IDX:6)";
        let node = node_gres(gres, used);
        assert_eq!(
            node.offered,
            vec![
                g("1g.10gb", "gpu:1g.10gb", 4),
                g("3g.40gb", "gpu:3g.40gb", 1),
                g("l40s.48gb", "gpu:l40s", 2),
                g("l40s.48gb.1of4", "shard:l40s", 8)
            ]
        );
        assert_eq!(node.used.last(), Some(&g("l40s.48gb.1of4", "shard:l40s", 1)));
        assert!(node.skipped.is_empty() && node.left_out_shards.is_empty(), "{node:?}");
        // Several models, each with its own typed shards: each its own share.
        let node = node_gres("gpu:l40s:1,gpu:a10:2,shard:l40s:4,shard:a10:4", "shard:l40s:1(IDX:0),shard:a10:2(IDX:1-2)");
        assert_eq!(node.offered[2..], [g("l40s.48gb.1of4", "shard:l40s", 4), g("a10.24gb.1of2", "shard:a10", 4)]);
        assert_eq!(node.used, vec![g("l40s.48gb.1of4", "shard:l40s", 1), g("a10.24gb.1of2", "shard:a10", 2)]);
        // One model's shards left out leave the other's offered.
        let node = node_gres("gpu:l40s:1,gpu:a10:2,shard:l40s:4,shard:a10:3", "");
        assert_eq!(node.offered[2..], [g("l40s.48gb.1of4", "shard:l40s", 4)]);
        assert_eq!(node.left_out_shards, vec!["shard:a10".to_string()]);
        assert!(node.skipped[0].contains("shard:a10:3 is not offered: 3 shards do not divide evenly"), "{:?}", node.skipped);
    }

    #[test]
    fn typed_shards_that_make_no_share_profile_are_left_out_with_words() {
        let cases = [
            ("gpu:l40s:2,shard:l40s:2", "1 shards a GPU"),
            ("gpu:l40s:4,shard:l40s:10", "do not divide evenly"),
            ("gpu:a10:1,shard:l40s:4", "no GPU of type l40s without MIG"),
            ("gpu:1g.10gb:4,shard:1g.10gb:8", "no GPU of type 1g.10gb without MIG"),
            ("gpu:L40S:1,shard:l40s:4", "no GPU of type l40s without MIG"),
            ("gpu:12:1,shard:12:4", "the type 12 cannot be asked for"),
            ("gpu:l40s:1,shard:l40s:4,shard:4", "typed and untyped shards"),
        ];
        for (gres, why) in cases {
            let node = node_gres(gres, "shard:l40s:1");
            assert!(node.offered.iter().all(|o| !o.gres.starts_with("shard")), "{gres}: {:?}", node.offered);
            assert!(node.used.iter().all(|o| !o.gres.starts_with("shard")), "{gres}");
            assert!(node.skipped.iter().any(|s| s.contains(why)), "{gres}: {:?}", node.skipped);
            assert!(!node.left_out_shards.is_empty(), "{gres}");
        }
    }

    #[test]
    fn shards_that_make_no_share_profile_are_left_out_with_words() {
        let cases = [
            ("gpu:l40s:2,shard:2", "1 shards a GPU"),
            ("gpu:l40s:1,shard:8", "8 shards a GPU"),
            ("gpu:l40s:4,shard:10", "do not divide evenly"),
            ("gpu:2,shard:8", "no typed GPU without MIG"),
            ("gpu:1g.10gb:4,shard:8", "no typed GPU without MIG"),
            ("shard:8", "no typed GPU without MIG"),
            ("gpu:l40s:0,shard:8", "no typed GPU without MIG"),
            ("gpu:l40s:1,gpu:a10:1,shard:4", "several models"),
            ("gpu:l40s:1,shard:4294967295", "shards a GPU"),
        ];
        for (gres, why) in cases {
            let node = node_gres(gres, "shard:1");
            assert!(node.offered.iter().all(|o| o.gres != "shard"), "{gres}: {:?}", node.offered);
            assert!(node.used.iter().all(|o| o.gres != "shard"), "{gres}");
            assert!(node.skipped.iter().any(|s| s.contains(why)), "{gres}: {:?}", node.skipped);
            assert_eq!(node.left_out_shards, vec!["shard".to_string()], "{gres}");
        }
        assert_eq!(node_gres("gpu:l40s:2,shard:0", ""), node_gres("gpu:l40s:2", ""), "no shards, nothing to say");
        assert_eq!(node_gres("gpu:1g.10gb:2,shard:1g.10gb:0", ""), node_gres("gpu:1g.10gb:2", ""), "none of a type");
    }

    #[test]
    fn quotas_charge_what_each_offered_profile_is() {
        let weights = crate::quotas::weights::Weights::default();
        let charged: Vec<(String, i64)> = offered("gpu:1g.10gb:1,gpu:3g.40gb:1,gpu:l40s:2,gpu:a100:1,shard:12")
            .into_iter()
            .map(|o| (o.profile.clone(), weights.milli_slices(&o.profile)))
            .collect();
        let expected = [("1g.10gb", 1000), ("3g.40gb", 3000), ("l40s.48gb", 7000), ("a100", 7000)];
        assert_eq!(charged, expected.map(|(p, m)| (p.to_string(), m)).to_vec(), "shards beside two models: none");
        let share = &offered("gpu:l40s:2,shard:8")[1];
        assert_eq!(weights.milli_slices(&share.profile), 7000 / 4);
    }

    #[test]
    fn crafted_gres_never_becomes_a_request_word() {
        let hostile = "gpu:l40s;rm:1,gpu:l40s rm:1,gpu:a10 --wrap=id:1,gpu:$(id):1,gpu:`id`:1,gpu:l40s\n:1,gpu:a:b:1,gpu:(null),shard:l40s;x:4";
        let node = node_gres(hostile, hostile);
        assert_eq!(node.offered, vec![], "{node:?}");
        for word in ["gpu:l40s;rm", "gpu:l40s rm", "gpu:$(id)", "gpu:l40s,rm"] {
            assert!(crate::slurm::GresRequest::one(word).is_none(), "{word}");
        }
    }

    #[test]
    fn every_offered_entry_has_a_request_word() {
        let typed = node_gres("gpu:1g.10gb:4,gpu:l40s:2,shard:1g.10gb:0,shard:l40s:8", "");
        for o in &typed.offered {
            assert!(crate::slurm::GresRequest::one(&o.gres).is_some(), "{o:?}");
        }
        let node = node_gres("gpu:1g.10gb:4,gpu:l40s:2,gpu:nvidia_a100-sxm4-80gb:1,shard:8", "");
        for o in &node.offered {
            assert!(crate::slurm::GresRequest::one(&o.gres).is_some(), "{o:?}");
        }
        assert_eq!(node.skipped, vec!["shard:8 is not offered: the node has GPUs of several models (a100.80gb, l40s.48gb)".to_string()]);
    }
}
