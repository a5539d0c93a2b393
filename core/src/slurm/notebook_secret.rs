//! What a Slurm notebook is given instead of its token, and how the portal checks that the
//! listener on the node is that notebook before it sends the token there.
//!
//! Slurm keeps a job's environment (state files, and accounting where a site stores job
//! environments), so the job gets only the token's SHA-256: enough for JupyterLab to check
//! the token the portal presents (`docker/common/slicehub_auth.py`), useless for opening it.
//! The port is drawn from the token, so it cannot be read off a job id in advance.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::auth::token_sha256;

/// The range a Slurm notebook's first port is drawn from: several share a node.
const FIRST_PORT: u32 = 20_000;
const PORTS: u32 = 20_000;

/// How many ports from the drawn one a notebook tries (JupyterLab's `port_retries` + 1,
/// taken one after another up to five): another notebook drawing the same port moves it on.
pub const NOTEBOOK_PORTS_TRIED: u16 = 5;

/// The first port a session's notebook tries, drawn from its token.
pub fn notebook_port(token: &str) -> u16 {
    let digest = token_sha256(&format!("slicehub-notebook-port\n{token}"));
    let drawn = u32::from_str_radix(&digest[..8], 16).unwrap_or(0);
    (FIRST_PORT + drawn % PORTS) as u16
}

/// Every port the session's notebook may be listening on, in the order it tries them.
pub fn notebook_ports(token: &str) -> impl Iterator<Item = u16> {
    let first = notebook_port(token);
    (0..NOTEBOOK_PORTS_TRIED).map(move |i| first + i)
}

/// The answer a listener on `port` gives to `nonce` when it holds the session's token hash:
/// bound to its own port, so it cannot be fetched from a notebook listening elsewhere.
pub fn listener_proof(token: &str, port: u16, nonce: &str) -> String {
    let key = token_sha256(token);
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).expect("HMAC takes any key length");
    mac.update(format!("{port}:{nonce}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_stays_in_range_and_differs_between_tokens() {
        let ports: std::collections::HashSet<u16> =
            (0..200).map(|i| notebook_port(&format!("token-{i}"))).collect();
        assert!(ports.iter().all(|p| (20_000..40_000).contains(p)));
        let tried: Vec<u16> = notebook_ports("a").collect();
        assert_eq!(tried, (0..5).map(|i| notebook_port("a") + i).collect::<Vec<_>>());
        assert!(ports.len() > 190, "ports drawn from tokens rarely collide: {}", ports.len());
        assert_eq!(notebook_port("a"), notebook_port("a"));
    }

    /// The value `slicehub_auth.proof(sha256("t1"), 23456, "00ff")` gives in Python on the node.
    #[test]
    fn the_proof_matches_the_notebook_side() {
        assert_eq!(
            listener_proof("t1", 23456, "00ff"),
            "60ffdcfa34c9256d67270e3563fa65273741fc521b818580ee10edd77fb633eb"
        );
        assert_ne!(listener_proof("t2", 23456, "00ff"), listener_proof("t1", 23456, "00ff"));
        assert_ne!(listener_proof("t1", 23456, "00fe"), listener_proof("t1", 23456, "00ff"));
        assert_ne!(listener_proof("t1", 23457, "00ff"), listener_proof("t1", 23456, "00ff"), "bound to the port");
    }
}
