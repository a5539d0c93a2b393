//! Which cluster account each portal user's jobs run as, in per-student mode. A portal
//! username is something an instructor can invent (a roster import creates accounts), so it
//! never becomes a Unix identity by itself: only the administrator's file
//! (`slurm.users_file`) links a portal user to a cluster user.
//!
//! The file: one portal user a line, `PORTAL_NAME CLUSTER_NAME`, or `PORTAL_NAME` alone for
//! the same name on the cluster; `#` starts a comment.

use std::collections::HashMap;

/// Accounts no student's jobs may run as, whatever the file says.
const RESERVED: &[&str] = &["root", "slurm", "slurmrestd", "munge", "daemon", "nobody", "bin", "sys"];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterUsers {
    by_portal_name: HashMap<String, String>,
}

impl ClusterUsers {
    /// Reads the administrator's file; lines naming a cluster account no student may be
    /// (see [`refusal`]) are left out and returned as problems to log.
    pub fn parse(text: &str, portal_user: &str) -> (ClusterUsers, Vec<String>) {
        let mut users = ClusterUsers::default();
        let mut problems = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let (portal, cluster) = match words.as_slice() {
                [portal] => (*portal, *portal),
                [portal, cluster] => (*portal, *cluster),
                _ => {
                    problems.push(format!("line {}: expected PORTAL_NAME [CLUSTER_NAME]", number + 1));
                    continue;
                }
            };
            match refusal(cluster, portal_user) {
                Some(why) => problems.push(format!("line {}: {cluster:?} {why}", number + 1)),
                None => {
                    users.by_portal_name.insert(portal.to_string(), cluster.to_string());
                }
            }
        }
        (users, problems)
    }

    pub fn portal_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.by_portal_name.keys().cloned().collect();
        names.sort();
        names
    }

    /// The cluster account `portal_name`'s jobs run as, if the administrator linked one.
    pub fn cluster_name(&self, portal_name: &str) -> Option<&str> {
        self.by_portal_name.get(portal_name).map(String::as_str)
    }
}

/// Why `cluster_name` may not be a student's identity on the cluster: all digits (Slurm
/// reads those as a uid: `0` is root), a system account, the portal's own account, or not
/// a plain Unix name.
pub fn refusal(cluster_name: &str, portal_user: &str) -> Option<&'static str> {
    if cluster_name.is_empty() || cluster_name.len() > 32 {
        return Some("is not a Unix user name");
    }
    if cluster_name.chars().all(|c| c.is_ascii_digit()) {
        return Some("is all digits, which Slurm would read as a uid");
    }
    if !cluster_name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        || cluster_name.starts_with('-')
    {
        return Some("is not a Unix user name");
    }
    if RESERVED.contains(&cluster_name) {
        return Some("is a system account");
    }
    if cluster_name == portal_user {
        return Some("is the portal's own account (slurm.user)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_users_map_and_dangerous_names_are_left_out() {
        let text = "# students of CS-101\nalice\nbob   b.jones\n0\nmallory slicehub\neve root\nzed 1000\n\ncarol carol extra\n";
        let (users, problems) = ClusterUsers::parse(text, "slicehub");
        assert_eq!(users.cluster_name("alice"), Some("alice"));
        assert_eq!(users.cluster_name("bob"), Some("b.jones"));
        for left_out in ["0", "mallory", "eve", "zed", "carol", "dave"] {
            assert_eq!(users.cluster_name(left_out), None, "{left_out}");
        }
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems[0].contains("all digits"), "{problems:?}");
        assert!(problems[1].contains("portal's own"), "{problems:?}");
        assert!(problems[2].contains("system account"), "{problems:?}");
    }

    #[test]
    fn names_slurm_would_read_as_a_uid_or_a_flag_are_refused() {
        assert!(refusal("0", "slicehub").is_some());
        assert!(refusal("00123", "slicehub").is_some());
        assert!(refusal("-x", "slicehub").is_some());
        assert!(refusal("a b", "slicehub").is_some());
        assert!(refusal("Alice", "slicehub").is_some());
        assert!(refusal("alice2", "slicehub").is_none());
    }
}
