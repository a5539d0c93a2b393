//! Host firewall rules for the session networks, beside what Docker does itself
//! (inter-container traffic off, `internal` networks without a route out):
//! - INPUT: a container may not open connections to the portal host itself (the portal,
//!   databases, anything listening on the bridge's address or the host's others); replies
//!   to connections the host opened (the notebook proxy) still pass.
//! - DOCKER-USER (Docker's chain for operators' rules on forwarded traffic): nothing from a
//!   session network to link-local addresses, where clouds answer metadata requests
//!   (169.254.169.254) with the host's credentials, nor to private and shared addresses
//!   (RFC 1918, 100.64/10: the campus LAN) except the ranges the administrator lists in
//!   `sessions.reachable_private_ranges` (a package mirror, say) and DNS (port 53): Docker's
//!   resolver asks the host's name servers from inside the container's network.
//!
//! `iptables` is run with fixed argument lists (never a shell); each rule is checked
//! (`-C`) before it is added, so applying the rules again changes nothing.

use std::process::Command;

pub use crate::config::PRIVATE_RANGES;
use crate::CoreError;

/// The chain the INPUT rules jump to for traffic arriving from a session bridge.
pub const CHAIN: &str = "SLICEHUB-ISOLATION";
pub const LINK_LOCAL: &str = "169.254.0.0/16";

/// Every rule for one bridge, as (table chain, rule) pairs. The chain's own rules apply in
/// this order; rules of the shared chains are each put first, so there the last listed
/// applies first: the link-local drop, then the listed ranges, then the private drops.
pub fn rules_for(bridge: &str, reachable: &[String]) -> Vec<Vec<String>> {
    let words = |text: &str| text.split(' ').map(str::to_string).collect::<Vec<_>>();
    let mut rules = vec![
        words(&format!("{CHAIN} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT")),
        words(&format!("{CHAIN} -j DROP")),
        words(&format!("INPUT -i {bridge} -j {CHAIN}")),
    ];
    for range in PRIVATE_RANGES {
        rules.push(words(&format!("DOCKER-USER -i {bridge} -d {range} -j DROP")));
    }
    for range in reachable {
        rules.push(words(&format!("DOCKER-USER -i {bridge} -d {range} -j RETURN")));
    }
    for protocol in ["udp", "tcp"] {
        rules.push(words(&format!("DOCKER-USER -i {bridge} -p {protocol} -m {protocol} --dport 53 -j RETURN")));
    }
    rules.push(words(&format!("DOCKER-USER -i {bridge} -d {LINK_LOCAL} -j DROP")));
    rules
}

/// One change of the host's rules at a time in this process: a sweep of vanished bridges
/// reads the rules, then deletes some, and must not interleave with another network's
/// rules being put in.
static CHANGING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Seconds `iptables` waits for the xtables lock (held by another program) before failing.
const LOCK_WAIT_SECONDS: &str = "5";

/// Whether the rules can be put in place here: `iptables` runs with the rights it needs and
/// Docker's `DOCKER-USER` chain is there. Lists rules only; changes nothing.
pub fn probe() -> Result<(), CoreError> {
    if iptables(&["-S", "DOCKER-USER"])? {
        Ok(())
    } else {
        Err(CoreError::Engine(
            "the DOCKER-USER chain is missing: is the Docker engine running with its iptables rules on?".into(),
        ))
    }
}

fn iptables(args: &[&str]) -> Result<bool, CoreError> {
    let out = Command::new("iptables")
        .args(["-w", LOCK_WAIT_SECONDS])
        .args(args)
        .output()
        .map_err(|e| CoreError::Engine(format!("cannot run iptables ({e}); is it installed?")))?;
    if out.status.success() {
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("ermission denied") || stderr.contains("must be root") {
        return Err(CoreError::Engine(
            "iptables needs root (or CAP_NET_ADMIN) to keep session containers off the host; \
             run the portal as root, or set sessions.host_firewall = false and add the rules \
             yourself (README, \"Tenant isolation\")"
                .into(),
        ));
    }
    if stderr.contains("xtables lock") {
        return Err(CoreError::Engine(format!(
            "iptables waited {LOCK_WAIT_SECONDS} s for another program holding the firewall's lock"
        )));
    }
    Ok(false)
}

/// Installs the rules for these bridges unless they are there already. Every rule is tried;
/// the first refusal is returned. The rules a bridge has in `DOCKER-USER` only work in their
/// order, so where any of them is missing the whole set is put in again below the ones left,
/// and only then are those removed: no moment has fewer rules than before.
pub fn isolate(bridges: &[&str], reachable: &[String]) -> Result<(), CoreError> {
    let _one = CHANGING.lock().unwrap_or_else(|e| e.into_inner());
    // Creating an existing chain fails harmlessly; the rules below are what matter.
    let _ = iptables(&["-N", CHAIN])?;
    let mut first_error = None;
    let mut keep = |outcome: Result<(), CoreError>| {
        if let Err(e) = outcome {
            first_error.get_or_insert(e);
        }
    };
    for bridge in bridges {
        keep(forget_unlisted_ranges(bridge, reachable));
        let rules = rules_for(bridge, reachable);
        keep(settle_chain(&rules.iter().filter(|rule| rule[0] == CHAIN).cloned().collect::<Vec<_>>()));
        for rule in rules.iter().filter(|rule| rule[0] == "INPUT") {
            keep(put_in_place(rule));
        }
        let shared: Vec<Vec<String>> = rules.into_iter().filter(|rule| rule[0] == "DOCKER-USER").collect();
        keep(restore_in_order(bridge, &shared));
    }
    first_error.map_or(Ok(()), Err)
}

/// The INPUT jump, first in INPUT, if it is missing.
fn put_in_place(rule: &[String]) -> Result<(), CoreError> {
    if present(rule)? {
        return Ok(());
    }
    let words: Vec<&str> = rule.iter().map(String::as_str).collect();
    added(iptables(&[&["-I", words[0], "1"], &words[1..]].concat())?, rule)
}

/// The isolation chain holds exactly its rules (`own`: accept replies, then drop), in that
/// order. Otherwise they are put in again at its top, and whatever is below them (a rule
/// left over, duplicates) is deleted after: at no moment does the chain let more through.
fn settle_chain(own: &[Vec<String>]) -> Result<(), CoreError> {
    let out = Command::new("iptables")
        .args(["-w", LOCK_WAIT_SECONDS, "-S", CHAIN])
        .output()
        .map_err(|e| CoreError::Engine(format!("cannot run iptables ({e}); is it installed?")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|line| line.starts_with("-A ")).collect();
    let in_place = lines.len() == own.len()
        && lines.iter().zip(own).all(|(line, rule)| rule.last().is_some_and(|target| line.ends_with(&format!("-j {target}"))));
    if in_place {
        return Ok(());
    }
    for (k, rule) in own.iter().enumerate() {
        let words: Vec<&str> = rule.iter().map(String::as_str).collect();
        let position = (k + 1).to_string();
        added(iptables(&[&["-I", CHAIN, position.as_str()], &words[1..]].concat())?, rule)?;
    }
    for position in (own.len() + 1..=own.len() + lines.len()).rev() {
        iptables(&["-D", CHAIN, &position.to_string()])?;
    }
    Ok(())
}

/// The bridge's `DOCKER-USER` rules (`shared`, each meant to be put first in turn, so the
/// last listed ends on top), if any is missing: the whole set again in its order right below
/// the bridge's rules that are left, then those old ones deleted (a deletion removes the
/// first match, which is the old copy above).
fn restore_in_order(bridge: &str, shared: &[Vec<String>]) -> Result<(), CoreError> {
    let mut had = Vec::with_capacity(shared.len());
    for rule in shared {
        had.push(present(rule)?);
    }
    if had.iter().all(|&h| h) {
        return Ok(());
    }
    let below = last_position_of(bridge)?;
    for (k, rule) in shared.iter().rev().enumerate() {
        let words: Vec<&str> = rule.iter().map(String::as_str).collect();
        let position = (below + 1 + k).to_string();
        added(iptables(&[&["-I", "DOCKER-USER", position.as_str()], &words[1..]].concat())?, rule)?;
    }
    for (rule, had) in shared.iter().zip(had) {
        if had {
            let words: Vec<&str> = rule.iter().map(String::as_str).collect();
            iptables(&[&["-D"], words.as_slice()].concat())?;
        }
    }
    Ok(())
}

/// The position (from 1) of the bridge's last rule in `DOCKER-USER`; 0 when it has none.
fn last_position_of(bridge: &str) -> Result<usize, CoreError> {
    let out = Command::new("iptables")
        .args(["-w", LOCK_WAIT_SECONDS, "-S", "DOCKER-USER"])
        .output()
        .map_err(|e| CoreError::Engine(format!("cannot run iptables ({e}); is it installed?")))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| line.starts_with("-A "))
        .enumerate()
        .filter(|(_, line)| line.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| w[0] == "-i" && w[1] == bridge))
        .map(|(i, _)| i + 1)
        .max()
        .unwrap_or(0))
}

fn added(done: bool, rule: &[String]) -> Result<(), CoreError> {
    match done {
        true => Ok(()),
        false => Err(CoreError::Engine(format!("iptables refused the rule `{}`", rule.join(" ")))),
    }
}

fn present(rule: &[String]) -> Result<bool, CoreError> {
    let words: Vec<&str> = rule.iter().map(String::as_str).collect();
    iptables(&[&["-C"], words.as_slice()].concat())
}

/// Deletes the bridge's RETURN rules for ranges the administrator no longer lists, so a
/// narrowed `sessions.reachable_private_ranges` takes effect on networks made before.
fn forget_unlisted_ranges(bridge: &str, reachable: &[String]) -> Result<(), CoreError> {
    let out = Command::new("iptables")
        .args(["-w", LOCK_WAIT_SECONDS, "-S", "DOCKER-USER"])
        .output()
        .map_err(|e| CoreError::Engine(format!("cannot run iptables ({e}); is it installed?")))?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(rule) = line.strip_prefix("-A ") else { continue };
        let words: Vec<&str> = rule.split_whitespace().collect();
        let has = |flag: &str, value: &str| words.windows(2).any(|w| w[0] == flag && w[1] == value);
        let range = words.windows(2).find(|w| w[0] == "-d").map(|w| w[1]);
        let unlisted = range.is_some_and(|r| !reachable.iter().any(|listed| listed == r));
        if has("-i", bridge) && has("-j", "RETURN") && unlisted {
            iptables(&[&["-D"], words.as_slice()].concat())?;
        }
    }
    Ok(())
}

/// The rules of [`rules_for`] these bridges lack on this host, in order.
fn missing_rules(bridges: &[&str], reachable: &[String]) -> Result<Vec<Vec<String>>, CoreError> {
    let mut missing = Vec::new();
    for bridge in bridges {
        for rule in rules_for(bridge, reachable) {
            if !present(&rule)? {
                missing.push(rule);
            }
        }
    }
    Ok(missing)
}

/// Deletes the jumps and drops of session bridges (`sh-…`) that no longer exist, so rules
/// do not pile up as portals come and go (their networks removed or pruned).
pub fn forget_vanished_bridges() -> Result<usize, CoreError> {
    let _one = CHANGING.lock().unwrap_or_else(|e| e.into_inner());
    let mut forgotten = 0;
    for chain in ["INPUT", "DOCKER-USER"] {
        let out = Command::new("iptables")
            .args(["-w", LOCK_WAIT_SECONDS, "-S", chain])
            .output()
            .map_err(|e| CoreError::Engine(format!("cannot run iptables ({e}); is it installed?")))?;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Some(rule) = line.strip_prefix("-A ") else { continue };
            let words: Vec<&str> = rule.split_whitespace().collect();
            let bridge = words.windows(2).find(|w| w[0] == "-i").map(|w| w[1]);
            let Some(bridge) = bridge.filter(|b| b.starts_with("sh-")) else { continue };
            if std::path::Path::new("/sys/class/net").join(bridge).exists() {
                continue;
            }
            if iptables(&[&["-D"], words.as_slice()].concat())? {
                forgotten += 1;
            }
        }
    }
    Ok(forgotten)
}

/// The rules of [`rules_for`] that are missing on this host, as `iptables -S` would print
/// them; the isolation tests assert none are.
pub fn missing(bridges: &[&str], reachable: &[String]) -> Result<Vec<String>, CoreError> {
    Ok(missing_rules(bridges, reachable)?
        .into_iter()
        .map(|rule| format!("-A {}", rule.join(" ")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bridge_gets_the_host_link_local_and_lan_rules() {
        let mirror = vec!["10.20.30.0/24".to_string()];
        let rules: Vec<String> = rules_for("sh-abc-i", &mirror).iter().map(|r| r.join(" ")).collect();
        for range in PRIVATE_RANGES {
            assert!(rules.contains(&format!("DOCKER-USER -i sh-abc-i -d {range} -j DROP")), "{range}");
        }
        let allowed = rules.iter().position(|r| r.ends_with("-d 10.20.30.0/24 -j RETURN")).unwrap();
        let lan = rules.iter().position(|r| r.ends_with("-d 10.0.0.0/8 -j DROP")).unwrap();
        let link_local = rules.iter().position(|r| r.contains(LINK_LOCAL)).unwrap();
        assert!(lan < allowed && allowed < link_local, "put first in turn: link-local drop, the mirror, the LAN drop");
        let dns = rules.iter().position(|r| r.contains("--dport 53 -j RETURN")).unwrap();
        assert!(lan < dns && dns < link_local, "name lookups pass the LAN drop, never to link-local");
        assert!(rules.contains(&"INPUT -i sh-abc-i -j SLICEHUB-ISOLATION".to_string()));
        assert!(rules.contains(&"DOCKER-USER -i sh-abc-i -d 169.254.0.0/16 -j DROP".to_string()));
        let accept = rules.iter().position(|r| r.contains("ESTABLISHED")).unwrap();
        let drop = rules.iter().position(|r| r == "SLICEHUB-ISOLATION -j DROP").unwrap();
        assert!(accept < drop, "replies are accepted before the rest is dropped");
    }
}
