//! The open-file limit: raised to its hard limit at start-up, and `faces.max_faces` kept
//! within what it allows, so that `accept` does not run out of descriptors before the face
//! table is full.

/// Descriptors kept for everything that is not a face: listeners, UDP sockets, the poll and
/// its wakers, the store's files, logs, management, pending WebSocket handshakes.
pub(crate) const RESERVED_FDS: u64 = 128 + face::table::MAX_WS_HANDSHAKES as u64;

/// Raises the soft `RLIMIT_NOFILE` to the hard one; returns the soft limit now in force
/// (`None` if it cannot be read; unlimited is `u64::MAX`).
pub(crate) fn raise_nofile() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit out-parameter.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return None;
    }
    if r.rlim_cur < r.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: r.rlim_max,
            rlim_max: r.rlim_max,
        };
        // SAFETY: a valid rlimit; raising the soft limit up to the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            r = raised;
        }
    }
    Some(if r.rlim_cur == libc::RLIM_INFINITY {
        u64::MAX
    } else {
        r.rlim_cur
    })
}

/// `max_faces` clamped to what `nofile` descriptors allow (at least 1); the second value tells
/// whether it was clamped.
pub(crate) fn clamp_faces(max_faces: usize, nofile: u64) -> (usize, bool) {
    let room = nofile.saturating_sub(RESERVED_FDS).max(1);
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    (max_faces.min(room), max_faces > room)
}

/// Raises the open-file limit and clamps `max_faces` to it, with one log line when clamped.
pub(crate) fn max_faces_within_nofile(max_faces: usize) -> usize {
    let Some(nofile) = raise_nofile() else {
        return max_faces;
    };
    let (n, clamped) = clamp_faces(max_faces, nofile);
    if clamped {
        tracing::warn!(
            "faces.max_faces {max_faces} clamped to {n}: RLIMIT_NOFILE allows {nofile} open \
             files ({RESERVED_FDS} kept for the rest)"
        );
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_to_the_limit_less_the_reserve() {
        assert_eq!(clamp_faces(4096, u64::MAX), (4096, false));
        assert_eq!(
            clamp_faces(4096, 1024),
            (1024 - RESERVED_FDS as usize, true)
        );
        assert_eq!(clamp_faces(4096, 10), (1, true));
        assert_eq!(clamp_faces(100, 1024), (100, false));
    }

    #[test]
    fn raised_to_the_hard_limit() {
        let soft = raise_nofile().unwrap();
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: a valid rlimit out-parameter.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) }, 0);
        assert_eq!(r.rlim_cur, r.rlim_max);
        assert!(soft == r.rlim_cur || r.rlim_cur == libc::RLIM_INFINITY);
    }
}
