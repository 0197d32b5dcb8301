//! Who is local: the peer credentials of Unix connections (`SO_PEERCRED`) checked against an
//! allow-list, and whether TCP and WebSocket faces between loopback addresses have local scope
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
    /// Group ids (the peer process's primary group) whose processes may connect to the Unix
    /// socket.
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

impl FaceTable {
    /// Checks an accepted Unix connection's peer against the allow-lists: its credentials if
    /// admitted (`Some(None)`: admitted, unknown); `None` if refused (counted and noticed; the
    /// caller drops the connection, which closes it).
    pub(super) fn check_unix_peer(
        &mut self,
        sock: &impl AsRawFd,
        sink: &mut impl FaceSink,
    ) -> Option<Option<PeerCred>> {
        let cred = peer_cred(sock).ok();
        if self.cfg.local.admits(cred.as_ref()) {
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

    #[test]
    fn a_socket_pair_gives_this_process_credentials() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let c = peer_cred(&a).unwrap();
        assert_eq!(c.pid, std::process::id() as i32);
        // SAFETY: geteuid has no preconditions.
        assert_eq!(c.uid, unsafe { libc::geteuid() });
    }
}
