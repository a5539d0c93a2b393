//! Which GRES a Slurm session's job asks for: the one its profile is offered as on the
//! nodes of its partition (`gpu:1g.10gb:1`, `gpu:l40s:1`, `shard:l40s:1`, `shard:1`).

use super::cluster::SlurmNode;
use super::gres::GresRequest;

/// The `--gres` for one of `profile` in `partition`, or why there is none, in words. Where
/// the partition's nodes offer it under several types (`l40s` on one, `L40S` on another)
/// the first by name is asked for. A shard is asked for only where no other shard of the
/// partition could serve the request: one of another profile, or one left out, under the
/// same type (any case) or untyped; an untyped request (`shard:1`) could land on any shard.
pub fn gres_for(nodes: &[SlurmNode], partition: &str, profile: &str) -> Result<GresRequest, String> {
    let in_partition = nodes.iter().filter(|n| n.partitions.iter().any(|p| p == partition));
    let offered = in_partition.clone().flat_map(|n| n.gres.iter()).filter(|g| !g.profile.is_empty());
    let mut words: Vec<&str> = offered.clone().filter(|g| g.profile == profile).map(|g| g.gres.as_str()).collect();
    words.sort_unstable();
    words.dedup();
    let Some(word) = words.first().copied() else {
        return Err(format!("no node of the Slurm partition {partition} offers {profile} now"));
    };
    if is_shard_word(word) {
        let serves = |other: &str| is_shard_word(other) && (word == "shard" || other == "shard" || other.eq_ignore_ascii_case(word));
        let mut others: Vec<&str> =
            offered.filter(|g| g.profile != profile && serves(&g.gres)).map(|g| g.profile.as_str()).collect();
        others.sort_unstable();
        others.dedup();
        if !others.is_empty() {
            return Err(format!(
                "a shard of {profile} cannot be asked for alone: the Slurm partition {partition} also has shards of {} under the same type (an administrator gives each GPU model with shards its own partition)",
                others.join(", ")
            ));
        }
        let mut left_out: Vec<&str> = in_partition
            .filter(|n| n.left_out_shards.iter().any(|w| serves(w)))
            .map(|n| n.name.as_str())
            .collect();
        left_out.sort_unstable();
        left_out.dedup();
        if !left_out.is_empty() {
            return Err(format!(
                "a shard of {profile} cannot be asked for alone: the Slurm partition {partition} also has shards SliceHub does not offer that it could land on (on {}; an administrator keeps such nodes out of the partition)",
                left_out.join(", ")
            ));
        }
    }
    GresRequest::one(word).ok_or_else(|| format!("the GRES {word:?} cannot be asked for"))
}

/// `shard` or `shard:<type>`.
fn is_shard_word(word: &str) -> bool {
    word == "shard" || word.starts_with("shard:")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::{node_gres, GresCount};

    fn node(name: &str, partitions: &[&str], gres: Vec<GresCount>) -> SlurmNode {
        SlurmNode {
            name: name.into(),
            address: String::new(),
            state: "idle".into(),
            flags: vec![],
            reason: String::new(),
            partitions: partitions.iter().map(|p| p.to_string()).collect(),
            gres,
            used: vec![],
            left_out_shards: vec![],
        }
    }

    /// A node as the client reads it from its `gres`, shards left out included.
    fn read(name: &str, partitions: &[&str], gres: &str) -> SlurmNode {
        let read = node_gres(gres, "");
        SlurmNode { left_out_shards: read.left_out_shards, ..node(name, partitions, read.offered) }
    }

    fn cluster() -> Vec<SlurmNode> {
        vec![
            node("n1", &["gpu"], node_gres("gpu:1g.10gb:4,gpu:3g.40gb:1", "").offered),
            node("n2", &["gpu", "ada"], node_gres("gpu:l40s:2,shard:8", "").offered),
            node("n3", &["gpu"], node_gres("gpu:a100:1,shard:2", "").offered),
            node("n4", &["gpu", "old"], node_gres("gpu:V100:2", "").offered),
        ]
    }

    fn gres(partition: &str, profile: &str) -> Result<String, String> {
        gres_for(&cluster(), partition, profile).map(|g| g.as_str().to_string())
    }

    #[test]
    fn each_profile_asks_for_the_gres_it_is_offered_as() {
        assert_eq!(gres("gpu", "1g.10gb"), Ok("gpu:1g.10gb:1".into()));
        assert_eq!(gres("gpu", "l40s.48gb"), Ok("gpu:l40s:1".into()));
        assert_eq!(gres("gpu", "a100"), Ok("gpu:a100:1".into()));
        assert_eq!(gres("old", "v100"), Ok("gpu:V100:1".into()), "the type exactly as Slurm names it");
        assert_eq!(gres("ada", "l40s.48gb.1of4"), Ok("shard:1".into()), "untyped shards: untyped request");
    }

    #[test]
    fn a_profile_the_partition_lacks_is_refused_with_words() {
        let e = gres("ada", "1g.10gb").unwrap_err();
        assert_eq!(e, "no node of the Slurm partition ada offers 1g.10gb now");
        assert!(gres("nowhere", "l40s.48gb").is_err());
        assert!(gres("gpu", "").is_err(), "untyped GPUs are never asked for");
    }

    #[test]
    fn a_shard_that_could_land_on_another_model_is_refused() {
        let e = gres("gpu", "l40s.48gb.1of4").unwrap_err();
        assert!(e.contains("also has shards of a100.1of2"), "{e}");
    }

    #[test]
    fn a_typed_shard_asks_for_its_own_type() {
        // The test cluster's node 1 as Slurm 22.05 reports it.
        let nodes = vec![read("n1", &["gpu"], "gpu:1g.10gb:4,gpu:3g.40gb:1,gpu:l40s:2,shard:1g.10gb:0,shard:3g.40gb:0,shard:l40s:8")];
        assert_eq!(gres_for(&nodes, "gpu", "l40s.48gb.1of4").map(|g| g.as_str().to_string()), Ok("shard:l40s:1".into()));
        // Shards of two models in one partition, typed: each asks for its own.
        let nodes = vec![
            read("n1", &["gpu"], "gpu:l40s:2,shard:l40s:8"),
            read("n2", &["gpu"], "gpu:a100:1,shard:a100:2"),
            read("n3", &["gpu"], "gpu:l40s:1,gpu:a10:1,shard:l40s:4,shard:a10:2"),
        ];
        let ask = |profile: &str| gres_for(&nodes, "gpu", profile).map(|g| g.as_str().to_string());
        assert_eq!(ask("l40s.48gb.1of4"), Ok("shard:l40s:1".into()));
        assert_eq!(ask("a100.1of2"), Ok("shard:a100:1".into()));
        assert_eq!(ask("a10.24gb.1of2"), Ok("shard:a10:1".into()));
    }

    #[test]
    fn a_shard_request_that_could_land_on_shards_left_out_is_refused() {
        // Node 2's L40S shards do not divide evenly: a `shard:l40s:1` job could land there.
        let mut nodes = vec![read("n1", &["gpu", "ada"], "gpu:l40s:2,shard:l40s:8"), read("n2", &["gpu"], "gpu:l40s:3,shard:l40s:8")];
        let e = gres_for(&nodes, "gpu", "l40s.48gb.1of4").unwrap_err();
        assert!(e.contains("does not offer that it could land on (on n2"), "{e}");
        assert_eq!(gres_for(&nodes, "ada", "l40s.48gb.1of4").unwrap().as_str(), "shard:l40s:1", "n2 is not in ada");
        // Left-out shards of another type cannot take a typed request; untyped ones can.
        nodes[1] = read("n2", &["gpu"], "gpu:a10:3,shard:a10:8");
        assert_eq!(gres_for(&nodes, "gpu", "l40s.48gb.1of4").unwrap().as_str(), "shard:l40s:1");
        nodes[1] = read("n2", &["gpu"], "gpu:l40s:1,gpu:a10:1,shard:4");
        assert!(gres_for(&nodes, "gpu", "l40s.48gb.1of4").is_err());
        // An untyped request could land on any left-out shard.
        let nodes = vec![read("n1", &["gpu"], "gpu:l40s:2,shard:8"), read("n2", &["gpu"], "gpu:a10:3,shard:a10:8")];
        assert!(gres_for(&nodes, "gpu", "l40s.48gb.1of4").unwrap_err().contains("on n2"));
        // Another profile under the same type (whatever its case) is refused as before.
        let nodes = vec![read("n1", &["gpu"], "gpu:l40s:2,shard:l40s:8"), read("n2", &["gpu"], "gpu:L40S:1,shard:L40S:2")];
        let e = gres_for(&nodes, "gpu", "l40s.48gb.1of4").unwrap_err();
        assert!(e.contains("also has shards of l40s.48gb.1of2"), "{e}");
    }

    #[test]
    fn a_crafted_word_on_a_node_never_reaches_the_request() {
        let forged = GresCount { profile: "l40s.48gb".into(), gres: "gpu:l40s;rm -rf /".into(), count: 1 };
        let nodes = vec![node("evil", &["gpu"], vec![forged])];
        let e = gres_for(&nodes, "gpu", "l40s.48gb").unwrap_err();
        assert!(e.contains("cannot be asked for"), "{e}");
    }
}
