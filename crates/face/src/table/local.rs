//! Who is local: the peer credentials of Unix connections (`SO_PEERCRED`, and the peer's
//! supplementary groups, `SO_PEERGROUPS`) checked against an allow-list, and whether TCP and WebSocket faces between loopback addresses have local scope
//! (and so may carry `/localhost` management Interests).

use std::io;
use std::os::fd::AsRawFd;

use super::{FaceSink, FaceTable, Notice};

/// Who a face table treats as local.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalPolicy {
    /// User ids whose processes may connect to the Unix socket (with `allow_gids`: either
    /// list admits; both empty: everyone).
    pub allow_uids: Vec<u32>,
    /// Group ids whose processes may connect to the Unix socket: the peer process's effective
    /// group or one of its supplementary groups.
    pub allow_gids: Vec<u32>,
    /// A TCP or WebSocket face between loopback addresses has local scope (NFD's behaviour);
    /// if false, only Unix faces are local.
    pub loopback_tcp_is_local: bool,
}

impl Default for LocalPolicy {
    /// Everyone may connect; loopback TCP is local (NFD's behaviour).
    fn default() -> Self {
        LocalPolicy {
            allow_uids: Vec::new(),
            allow_gids: Vec::new(),
            loopback_tcp_is_local: true,
        }
    }
}

impl LocalPolicy {
    /// Whether the allow-lists admit everyone (both empty).
    pub fn admits_everyone(&self) -> bool {
        self.allow_uids.is_empty() && self.allow_gids.is_empty()
    }

    /// Whether a peer with credentials `cred` (`None`: unknown) may connect.
    pub fn admits(&self, cred: Option<&PeerCred>) -> bool {
        self.admits_everyone()
            || cred.is_some_and(|c| {
                self.allow_uids.contains(&c.uid) || self.allow_gids.contains(&c.gid)
            })
    }

    /// Whether one of a peer's supplementary groups is in `allow_gids`.
    pub fn admits_groups(&self, groups: &[u32]) -> bool {
        groups.iter().any(|g| self.allow_gids.contains(g))
    }

    /// The scope of a TCP or WebSocket face whose ends are (`loopback`) or are not both
    /// loopback addresses.
    pub fn tcp_local(&self, loopback: bool) -> bool {
        loopback && self.loopback_tcp_is_local
    }
}

/// The credentials of a Unix socket's peer process, as of its `connect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCred {
    /// Process id.
    pub pid: i32,
    /// Effective user id.
    pub uid: u32,
    /// Effective group id.
    pub gid: u32,
}

/// The credentials of the peer of a connected Unix socket (`SO_PEERCRED`).
pub fn peer_cred(sock: &impl AsRawFd) -> io::Result<PeerCred> {
    let mut c = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid fd; `c` is a ucred of `len` bytes, which SO_PEERCRED fills.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut c as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(PeerCred {
        pid: c.pid,
        uid: c.uid,
        gid: c.gid,
    })
}

/// `SO_PEERGROUPS` (Linux 4.13): the supplementary groups of a Unix socket's peer.
#[cfg(not(target_arch = "sparc64"))]
const SO_PEERGROUPS: libc::c_int = 59;
#[cfg(target_arch = "sparc64")]
const SO_PEERGROUPS: libc::c_int = 0x3d;
/// Most supplementary groups read (the kernel's `NGROUPS_MAX`).
const MAX_GROUPS: usize = 65_536;

/// The supplementary groups of the peer of a connected Unix socket: `SO_PEERGROUPS` (as of
/// its `connect`), or, on a kernel without it (before 4.13), the `Groups:` line of
/// `/proc/<pid>/status` of the peer process `pid` (as of now).
pub fn peer_groups(sock: &impl AsRawFd, pid: i32) -> io::Result<Vec<u32>> {
    match so_peergroups(sock.as_raw_fd()) {
        Err(e) if e.raw_os_error() == Some(libc::ENOPROTOOPT) => proc_groups(pid),
        r => r,
    }
}

/// `SO_PEERGROUPS` of socket `fd`.
fn so_peergroups(fd: std::os::fd::RawFd) -> io::Result<Vec<u32>> {
    const GID: usize = std::mem::size_of::<libc::gid_t>();
    let mut groups: Vec<libc::gid_t> = vec![0; 64];
    // Twice at most: the first answer says how many groups there are if they did not fit.
    for _ in 0..2 {
        let mut len = (groups.len() * GID) as libc::socklen_t;
        // SAFETY: a valid fd; `groups` has room for `len` bytes, which SO_PEERGROUPS fills.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                SO_PEERGROUPS,
                groups.as_mut_ptr().cast(),
                &mut len,
            )
        };
        let n = len as usize / GID;
        if r == 0 {
            groups.truncate(n);
            return Ok(groups);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ERANGE) || n <= groups.len() || n > MAX_GROUPS {
            return Err(e);
        }
        groups.resize(n, 0);
    }
    Err(io::Error::from_raw_os_error(libc::ERANGE))
}

/// The `Groups:` line of `/proc/<pid>/status`.
fn proc_groups(pid: i32) -> io::Result<Vec<u32>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = (status.lines())
        .find_map(|l| l.strip_prefix("Groups:"))
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no Groups: line"))?;
    Ok(line
        .split_whitespace()
        .take(MAX_GROUPS)
        .filter_map(|g| g.parse().ok())
        .collect())
}

impl FaceTable {
    /// Checks an accepted Unix connection's peer against the allow-lists (its user, its group,
    /// then its supplementary groups): its credentials if admitted (`Some(None)`: admitted,
    /// unknown); `None` if refused (counted and noticed; the caller drops the connection,
    /// which closes it).
    pub(super) fn check_unix_peer(
        &mut self,
        sock: &impl AsRawFd,
        sink: &mut impl FaceSink,
    ) -> Option<Option<PeerCred>> {
        let cred = peer_cred(sock).ok();
        let policy = &self.cfg.local;
        if policy.admits(cred.as_ref()) {
            return Some(cred);
        }
        let by_group = |c: &PeerCred| {
            !policy.allow_gids.is_empty()
                && peer_groups(sock, c.pid).is_ok_and(|g| policy.admits_groups(&g))
        };
        if cred.as_ref().is_some_and(by_group) {
            return Some(cred);
        }
        self.on_demand.counters.unix_peer_refused += 1;
        sink.notice(Notice::UnixPeerRefused(cred));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_admit_their_ids_and_empty_lists_everyone() {
        let c = PeerCred {
            pid: 1,
            uid: 1000,
            gid: 100,
        };
        let mut p = LocalPolicy::default();
        assert!(p.admits(Some(&c)) && p.admits(None));
        p.allow_uids = vec![0];
        assert!(!p.admits(Some(&c)) && !p.admits(None));
        p.allow_gids = vec![100];
        assert!(p.admits(Some(&c)));
        p.allow_uids = vec![1000];
        p.allow_gids = vec![];
        assert!(p.admits(Some(&c)));
    }

    #[test]
    fn loopback_is_local_only_if_configured() {
        let mut p = LocalPolicy::default();
        assert!(p.tcp_local(true) && !p.tcp_local(false));
        p.loopback_tcp_is_local = false;
        assert!(!p.tcp_local(true) && !p.tcp_local(false));
    }

    /// This process's supplementary groups (`getgroups`).
    fn own_groups() -> Vec<u32> {
        let mut g = vec![0 as libc::gid_t; 65_536];
        // SAFETY: `g` has room for as many gids as its length says.
        let n = unsafe { libc::getgroups(g.len() as libc::c_int, g.as_mut_ptr()) };
        g.truncate(usize::try_from(n).unwrap());
        g.sort_unstable();
        g
    }

    #[test]
    fn a_socket_pair_and_proc_give_this_process_groups() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let pid = std::process::id() as i32;
        let mut g = peer_groups(&a, pid).unwrap();
        g.sort_unstable();
        assert_eq!(g, own_groups());
        let mut p = proc_groups(pid).unwrap();
        p.sort_unstable();
        assert_eq!(p, own_groups());
        assert!(proc_groups(-1).is_err());
        let p = LocalPolicy {
            allow_gids: vec![4242],
            ..LocalPolicy::default()
        };
        assert!(p.admits_groups(&[7, 4242]) && !p.admits_groups(&[7]) && !p.admits_groups(&[]));
    }

    #[test]
    fn a_socket_pair_gives_this_process_credentials() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let c = peer_cred(&a).unwrap();
        assert_eq!(c.pid, std::process::id() as i32);
        // SAFETY: geteuid has no preconditions.
        assert_eq!(c.uid, unsafe { libc::geteuid() });
    }
}
