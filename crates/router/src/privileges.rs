//! The process's identity as an operator sets it: the Unix socket's mode and group (`[listen]
//! unix_mode`, `unix_group`) and the drop from root to `[general] user` and `group` once the
//! listeners are bound and the L2 store is open, before any packet is forwarded (as NFD's
//! `general` section). Users and groups are looked up with `getpwnam_r` and `getgrnam_r`.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use crate::config::{parse_unix_mode, Config};

/// What the error of a name that is not a user or group of this system says.
pub const NO_SUCH_USER: &str = "no such user or group";

/// The ids `[general]` asks the process to run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// User id.
    pub uid: libc::uid_t,
    /// Group id.
    pub gid: libc::gid_t,
    /// The user's name (for its supplementary groups).
    pub name: CString,
}

/// A `getpwnam_r`-like function.
type GetByName<T> = unsafe extern "C" fn(
    *const libc::c_char,
    *mut T,
    *mut libc::c_char,
    libc::size_t,
    *mut *mut T,
) -> libc::c_int;

/// Looks `name` up with `get` (`getpwnam_r`, `getgrnam_r`), growing the buffer while it says
/// `ERANGE`, and returns what `pick` takes from the entry (only plain fields: the entry's
/// pointers point into a buffer that does not outlive the call). Errors name `key`.
fn by_name<T, R>(
    key: &str,
    name: &str,
    get: GetByName<T>,
    pick: impl Fn(&T) -> R,
) -> Result<R, String> {
    let missing = || format!("{key}: {name:?}: {NO_SUCH_USER}");
    let c = CString::new(name).map_err(|_| missing())?;
    // SAFETY: T is a C struct of plain data (passwd, group) that `get` fills.
    let mut entry: T = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    loop {
        let mut result = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; the buffer's length is passed.
        let r = unsafe {
            get(
                c.as_ptr(),
                &mut entry,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        match r {
            0 if result.is_null() => return Err(missing()),
            0 => return Ok(pick(&entry)),
            libc::ERANGE if buf.len() < 1 << 20 => buf.resize(buf.len() * 2, 0),
            e => {
                let e = std::io::Error::from_raw_os_error(e);
                return Err(format!("{key}: cannot look up {name:?}: {e}"));
            }
        }
    }
}

/// The user `name`: its uid, primary gid and name.
pub fn user(key: &str, name: &str) -> Result<RunAs, String> {
    let (uid, gid) = by_name(key, name, libc::getpwnam_r, |pw| (pw.pw_uid, pw.pw_gid))?;
    let name = CString::new(name).map_err(|_| format!("{key}: {name:?}: {NO_SUCH_USER}"))?;
    Ok(RunAs { uid, gid, name })
}

/// The group `name`'s id.
pub fn group(key: &str, name: &str) -> Result<libc::gid_t, String> {
    by_name(key, name, libc::getgrnam_r, |gr| gr.gr_gid)
}

/// Who `[general]` says to run as (`None`: no `user`), checked against the system's users and
/// groups: one line naming the key otherwise.
pub fn run_as(cfg: &Config) -> Result<Option<RunAs>, String> {
    let g = &cfg.general;
    if g.user.is_empty() {
        return Ok(None);
    }
    let mut who = user("general.user", &g.user)?;
    if !g.group.is_empty() {
        who.gid = group("general.group", &g.group)?;
    }
    Ok(Some(who))
}

fn errno(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: a NUL in the path", path.display()))
}

/// The Unix socket's access: its mode and group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketAccess {
    /// Permission bits.
    pub mode: u32,
    /// Group (`None`: the process's).
    pub gid: Option<libc::gid_t>,
}

/// The Unix socket's access as `[listen]` sets it, its group looked up.
pub fn socket_access(cfg: &Config) -> Result<SocketAccess, String> {
    let mode = parse_unix_mode(&cfg.listen.unix_mode)?;
    let g = &cfg.listen.unix_group;
    let gid = (!g.is_empty())
        .then(|| group("listen.unix_group", g))
        .transpose()?;
    Ok(SocketAccess { mode, gid })
}

/// Gives the Unix socket at `path` its access.
pub fn set_socket_access(path: &Path, access: SocketAccess) -> Result<(), String> {
    let p = c_path(path)?;
    if let Some(gid) = access.gid {
        // SAFETY: a NUL-terminated path; -1 keeps the owner.
        if unsafe { libc::chown(p.as_ptr(), libc::uid_t::MAX, gid) } != 0 {
            return Err(errno(&format!(
                "listen.unix_group: chown {}",
                path.display()
            )));
        }
    }
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::chmod(p.as_ptr(), access.mode as libc::mode_t) } != 0 {
        return Err(errno(&format!(
            "listen.unix_mode: chmod {}",
            path.display()
        )));
    }
    Ok(())
}

/// Hands the L2 directory and its files to `who`, so that the store can still write its
/// index at a stop once the process runs as that user.
pub fn give_store(dir: &Path, who: &RunAs) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("store.l2_path {}: {e}", dir.display()))?;
    let files = entries.filter_map(|e| e.ok().map(|e| e.path()));
    for p in std::iter::once(dir.to_path_buf()).chain(files) {
        let c = c_path(&p)?;
        // SAFETY: a NUL-terminated path; lchown never follows a link planted in the directory.
        if unsafe { libc::lchown(c.as_ptr(), who.uid, who.gid) } != 0 {
            return Err(errno(&format!("general.user: chown {}", p.display())));
        }
    }
    Ok(())
}

/// Drops the process to `who`: supplementary groups (the user's), group, then user, in that
/// order so that no step needs a privilege the one before gave up. glibc applies each to
/// every thread of the process. Checks that the drop took (and cannot be undone).
pub fn drop_to(who: &RunAs) -> Result<(), String> {
    // SAFETY: plain syscalls; the name is NUL-terminated.
    unsafe {
        if libc::initgroups(who.name.as_ptr(), who.gid) != 0 {
            return Err(errno("general.user: initgroups"));
        }
        if libc::setgid(who.gid) != 0 {
            return Err(errno("general.group: setgid"));
        }
        if libc::setuid(who.uid) != 0 {
            return Err(errno("general.user: setuid"));
        }
        if who.uid != 0 && libc::setuid(0) == 0 {
            return Err("general.user: the process could become root again".into());
        }
        assert_eq!((libc::geteuid(), libc::getegid()), (who.uid, who.gid));
    }
    tracing::info!(
        user = %CStr::to_string_lossy(&who.name),
        uid = who.uid,
        gid = who.gid,
        "running as"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_its_group_exist_a_made_up_name_does_not() {
        assert_eq!(user("general.user", "root").unwrap().uid, 0);
        assert_eq!(group("general.group", "root").unwrap(), 0);
        let e = user("general.user", "no-such-user-cascade").unwrap_err();
        assert!(
            e.starts_with("general.user: ") && e.contains(NO_SUCH_USER),
            "{e}"
        );
        let e = group("listen.unix_group", "no-such-group-cascade").unwrap_err();
        assert!(
            e.starts_with("listen.unix_group: ") && e.contains(NO_SUCH_USER),
            "{e}"
        );
    }

    #[test]
    fn no_user_means_no_drop() {
        assert_eq!(run_as(&Config::default()), Ok(None));
    }
}
