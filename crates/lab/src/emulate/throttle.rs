//! Slow storage: a router's L2 reads capped at so many per second by the kernel's block
//! throttle (a cgroup-v1 `blkio` group with `blkio.throttle.read_iops_device` on the disk that
//! holds its files), which the router reaches with `O_DIRECT` (`store.direct`) so that every
//! read goes to the device. The router's process joins the group once it has started (the
//! start-up scan of its files is not throttled). The group is removed when dropped.

use std::path::{Path, PathBuf};

/// Where cgroup v1 mounts the `blkio` controller.
const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A `blkio` group capping reads on one disk.
#[derive(Debug)]
pub struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    /// A group `name` capping reads of the disk holding `path` at `iops` per second.
    pub fn create(name: &str, path: &Path, iops: u64) -> Result<Throttle, String> {
        let root = Path::new(BLKIO);
        if !root.join("blkio.throttle.read_iops_device").exists() {
            return Err(format!("no cgroup-v1 blkio throttle at {BLKIO}"));
        }
        let (major, minor) = whole_disk(path)?;
        let dir = root.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let t = Throttle { dir };
        let rule = format!("{major}:{minor} {iops}");
        let f = t.dir.join("blkio.throttle.read_iops_device");
        std::fs::write(&f, &rule).map_err(|e| format!("{} <- {rule}: {e}", f.display()))?;
        Ok(t)
    }

    /// Moves process `pid` (all its threads) into the group.
    pub fn add(&self, pid: u32) -> Result<(), String> {
        let f = self.dir.join("cgroup.procs");
        std::fs::write(&f, pid.to_string()).map_err(|e| format!("{}: {e}", f.display()))
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // A group can be removed once its processes have gone; they may take a moment.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("cascade emulate: cannot remove {}", self.dir.display());
    }
}

/// Removes the groups an emulator that no longer runs left behind (named `<prefix><pid>-…`).
pub fn remove_stale(prefix: &str) {
    let Ok(list) = std::fs::read_dir(BLKIO) else {
        return;
    };
    for e in list.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = super::net::stale_pid(&name, prefix) {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

/// The `major:minor` of the whole disk holding `path` (the throttle applies to disks, not
/// partitions).
fn whole_disk(path: &Path) -> Result<(u64, u64), String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .dev();
    let (major, minor) = split_dev(dev);
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.exists() {
        return Err(format!(
            "{} is not on a block device ({major}:{minor})",
            path.display()
        ));
    }
    if !sys.join("partition").exists() {
        return Ok((major, minor));
    }
    let parent = std::fs::read_to_string(sys.join("../dev"))
        .map_err(|e| format!("the disk of partition {major}:{minor}: {e}"))?;
    parse_dev(parent.trim()).ok_or_else(|| format!("bad device number {parent:?}"))
}

/// glibc's `major()` and `minor()` of a `dev_t`.
fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

fn parse_dev(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_split_as_glibc_does() {
        // makedev(254, 0), makedev(8, 17), makedev(259, 70000).
        assert_eq!(split_dev(0xfe00), (254, 0));
        assert_eq!(split_dev(0x811), (8, 17));
        let (ma, mi) = (259u64, 70_000u64);
        let dev = ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12);
        assert_eq!(split_dev(dev), (ma, mi));
        assert_eq!(parse_dev("254:0"), Some((254, 0)));
        assert_eq!(parse_dev("x"), None);
    }
}
