//! The host firewall rules of the session networks, checked again on every reconcile pass:
//! a firewall reload (`firewall-cmd --reload`, `ufw reload`, an `iptables-restore`) drops
//! them silently, and from then on containers would reach the host and the metadata
//! address. Missing rules are put back and logged as an error; rules that cannot be put
//! back make the next launch on that network set them up again, and fail if it cannot.

use super::manager::Sessions;
use crate::runtime::firewall;
use crate::CoreError;

impl Sessions {
    /// Puts back the missing rules of the session networks this process made sure of;
    /// how many were missing.
    pub(super) async fn keep_host_firewall(&self) -> Result<usize, CoreError> {
        if !self.inner.config.sessions_host_firewall {
            return Ok(0);
        }
        let bridges: Vec<String> = self
            .inner
            .networks_ready
            .lock()
            .await
            .iter()
            .filter(|bridge| std::path::Path::new("/sys/class/net").join(bridge).exists())
            .cloned()
            .collect();
        if bridges.is_empty() {
            return Ok(0);
        }
        let reachable = self.inner.config.sessions_reachable_private_ranges.clone();
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
        .map_err(|e| CoreError::Engine(format!("firewall check crashed: {e}")))?;
        match restored {
            Ok(missing) if missing.is_empty() => Ok(0),
            Ok(missing) => {
                tracing::error!(rules = ?missing, "session network firewall rules were missing (a firewall reload?); put back");
                Ok(missing.len())
            }
            Err(e) => {
                let mut ready = self.inner.networks_ready.lock().await;
                for bridge in &bridges {
                    ready.remove(bridge);
                }
                Err(e)
            }
        }
    }
}
