//! Which GRES a Slurm session's job asks for: the one its profile is offered as on the
//! nodes of its partition (`gpu:1g.10gb:1`, `gpu:l40s:1`, `shard:1`).

use super::cluster::SlurmNode;
use super::gres::GresRequest;

/// The `--gres` for one of `profile` in `partition`, or why there is none, in words. Where
/// the partition's nodes offer it under several types (`l40s` on one, `L40S` on another)
/// the first by name is asked for. A shard is asked for only where every shard of the
/// partition is of that profile: `shard:1` cannot name the GPU model.
pub fn gres_for(nodes: &[SlurmNode], partition: &str, profile: &str) -> Result<GresRequest, String> {
    let offered = nodes
        .iter()
        .filter(|n| n.partitions.iter().any(|p| p == partition))
        .flat_map(|n| n.gres.iter())
        .filter(|g| !g.profile.is_empty());
    let mut words: Vec<&str> = offered.clone().filter(|g| g.profile == profile).map(|g| g.gres.as_str()).collect();
    words.sort_unstable();
    words.dedup();
    let Some(word) = words.first().copied() else {
        return Err(format!("no node of the Slurm partition {partition} offers {profile} now"));
    };
    if word == "shard" {
        let mut others: Vec<&str> =
            offered.filter(|g| g.gres == "shard" && g.profile != profile).map(|g| g.profile.as_str()).collect();
        others.sort_unstable();
        others.dedup();
        if !others.is_empty() {
            return Err(format!(
                "a shard of {profile} cannot be asked for alone: the Slurm partition {partition} also has shards of {} (an administrator gives each GPU model with shards its own partition)",
                others.join(", ")
            ));
        }
    }
    GresRequest::one(word).ok_or_else(|| format!("the GRES {word:?} cannot be asked for"))
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
        }
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
        assert_eq!(gres("ada", "l40s.48gb.1of4"), Ok("shard:1".into()));
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
    fn a_crafted_word_on_a_node_never_reaches_the_request() {
        let forged = GresCount { profile: "l40s.48gb".into(), gres: "gpu:l40s;rm -rf /".into(), count: 1 };
        let nodes = vec![node("evil", &["gpu"], vec![forged])];
        let e = gres_for(&nodes, "gpu", "l40s.48gb").unwrap_err();
        assert!(e.contains("cannot be asked for"), "{e}");
    }
}
