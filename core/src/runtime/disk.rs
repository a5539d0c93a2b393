//! How full the engine's disk is (images, containers' layers, volumes all live under its
//! root directory), when the engine runs on this host and the portal can look.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DiskSpace {
    pub free_bytes: u64,
    pub total_bytes: u64,
}

const GIB: u64 = 1 << 30;

impl DiskSpace {
    /// The file system holding `dir`, as an unprivileged process sees its free space.
    pub fn of(dir: &str) -> Option<DiskSpace> {
        let stat = rustix::fs::statvfs(dir).ok()?;
        let block = stat.f_frsize;
        Some(DiskSpace {
            free_bytes: stat.f_bavail.saturating_mul(block),
            total_bytes: stat.f_blocks.saturating_mul(block),
        })
    }

    /// Less than a tenth, or less than 5 GiB, left: new sessions and images may fail.
    pub fn low(&self) -> bool {
        self.free_bytes < self.total_bytes / 10 || self.free_bytes < 5 * GIB
    }

    /// `12.3 GiB free of 250.0 GiB`, with what to do when it is low.
    pub fn words(&self) -> String {
        let gib = |bytes: u64| bytes as f64 / GIB as f64;
        let space = format!("{:.1} GiB free of {:.1} GiB", gib(self.free_bytes), gib(self.total_bytes));
        if self.low() {
            format!("disk low: {space}; sessions may fail to start (remove unused images with docker image prune)")
        } else {
            format!("disk {space}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_is_low_below_a_tenth_or_five_gib() {
        let roomy = DiskSpace { free_bytes: 100 * GIB, total_bytes: 250 * GIB };
        assert!(!roomy.low());
        assert_eq!(roomy.words(), "disk 100.0 GiB free of 250.0 GiB");
        let tenth = DiskSpace { free_bytes: 20 * GIB, total_bytes: 250 * GIB };
        assert!(tenth.low());
        assert!(tenth.words().starts_with("disk low: 20.0 GiB free"), "{}", tenth.words());
        assert!(DiskSpace { free_bytes: 4 * GIB, total_bytes: 20 * GIB }.low());
    }

    #[test]
    fn the_root_file_system_can_be_read() {
        let root = DiskSpace::of("/").expect("statvfs of /");
        assert!(root.total_bytes > 0 && root.free_bytes <= root.total_bytes);
        assert_eq!(DiskSpace::of("/no/such/dir"), None);
    }
}
