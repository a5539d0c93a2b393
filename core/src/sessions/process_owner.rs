//! Which container a GPU process belongs to, from its control group: the driver reports
//! host process ids, and the engine puts each container's processes in a cgroup named
//! after the container's id.

/// The container id a `/proc/PID/cgroup` text names: the last path part that is, or
/// wraps, 64 hex digits (`/docker/ID`, `/system.slice/docker-ID.scope`,
/// `cri-containerd-ID.scope`); `None` for a process outside any container.
pub fn container_in_cgroup(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        let last = path.trim().rsplit('/').next()?;
        let id = last.strip_suffix(".scope").unwrap_or(last);
        let id = id.rsplit('-').next().unwrap_or(id);
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
    })
}

/// [`container_in_cgroup`] of process `pid` on this host; `None` if it is gone or
/// unreadable.
pub fn container_of_pid(pid: u32) -> Option<String> {
    container_in_cgroup(&std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c";

    #[test]
    fn the_container_is_read_from_each_cgroup_layout() {
        assert_eq!(container_in_cgroup(&format!("0::/system.slice/docker-{ID}.scope\n")).as_deref(), Some(ID));
        assert_eq!(container_in_cgroup(&format!("0::/docker/{ID}\n")).as_deref(), Some(ID));
        let v1 = format!("12:pids:/docker/{ID}\n11:memory:/docker/{ID}\n1:name=systemd:/docker/{ID}\n");
        assert_eq!(container_in_cgroup(&v1).as_deref(), Some(ID));
        let k8s = format!("0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-{ID}.scope\n");
        assert_eq!(container_in_cgroup(&k8s).as_deref(), Some(ID));
    }

    #[test]
    fn a_process_outside_containers_or_a_crafted_name_belongs_to_none() {
        assert_eq!(container_in_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), None);
        assert_eq!(container_in_cgroup("0::/\n"), None);
        assert_eq!(container_in_cgroup(""), None);
        assert_eq!(container_in_cgroup(&format!("0::/docker/{}\n", &ID[..63])), None);
        assert_eq!(container_in_cgroup(&format!("0::/docker/{ID}zz\n")), None);
        assert_eq!(container_of_pid(u32::MAX), None);
    }
}
