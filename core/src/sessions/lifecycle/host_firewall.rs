//! The host firewall rules of the session networks, checked again on every reconcile pass:
//! a firewall reload (`firewall-cmd --reload`, `ufw reload`, an `iptables-restore`) drops
//! them silently, and from then on containers would reach the host and the metadata
//! address. Every bridge of this portal instance that exists is checked, whoever made it
//! (a portal restarted after a deploy has running sessions on networks it did not make).
//! Missing rules are put back and logged as an error; rules that cannot be put back are
//! reported by `/healthz` and tried again each pass, and the next launch on that network
//! sets them up again or fails.

use crate::sessions::service::Sessions;
use crate::runtime::{firewall, SessionNetwork};
use crate::CoreError;

impl Sessions {
    /// Puts back the missing rules of this instance's session networks; how many were
    /// missing.
    pub(super) async fn keep_host_firewall(&self) -> Result<usize, CoreError> {
        if !self.ctx.config.sessions.host_firewall {
            return Ok(0);
        }
        let instance = self.instance_id().await?;
        let bridges: Vec<String> = [true, false]
            .into_iter()
            .map(|internet| SessionNetwork::of(&instance, internet).bridge)
            .filter(|bridge| std::path::Path::new("/sys/class/net").join(bridge).exists())
            .collect();
        if bridges.is_empty() {
            self.set_firewall_problem(None);
            return Ok(0);
        }
        let reachable = self.ctx.config.sessions.reachable_private_ranges.clone();
        let checked = bridges.clone();
        let restored = tokio::task::spawn_blocking(move || {
            let bridges: Vec<&str> = checked.iter().map(String::as_str).collect();
            let missing = firewall::missing(&bridges, &reachable)?;
            if !missing.is_empty() {
                firewall::isolate(&bridges, &reachable)?;
            }
            Ok::<_, CoreError>(missing)
        })
        .await
        .map_err(|e| CoreError::Engine(format!("firewall check crashed: {e}")))
        .and_then(|r| r);
        match restored {
            Ok(missing) => {
                self.set_firewall_problem(None);
                if !missing.is_empty() {
                    tracing::error!(rules = ?missing, "session network firewall rules were missing (a firewall reload?); put back");
                }
                Ok(missing.len())
            }
            Err(e) => {
                self.set_firewall_problem(Some(e.to_string()));
                // The next launch on these networks sets the rules up again, or fails.
                let mut ready = self.ctx.networks_ready.lock().await;
                for bridge in &bridges {
                    ready.remove(bridge);
                }
                Err(e)
            }
        }
    }

    /// Why session networks lack firewall rules the last pass could not put back.
    pub fn firewall_problem(&self) -> Option<String> {
        self.ctx.firewall_problem.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_firewall_problem(&self, problem: Option<String>) {
        *self.ctx.firewall_problem.lock().unwrap_or_else(|e| e.into_inner()) = problem;
    }
}
