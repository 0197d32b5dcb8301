//! The L2 store's directory at start-up: its lock (one router per directory), the hash key
//! kept in it, and each worker's L2 file. What goes wrong is either a configuration that does
//! not fit the directory, which stops the start ([`StoreError::Refused`]), or a storage fault,
//! which turns L2 off while the router forwards from RAM ([`StoreError::Fault`]).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::Path;
use std::sync::Arc;

use engine::hash::HashKey;
use wire::fill_random;

use crate::config::{self, Config};
use crate::dispatch::{L2Prefixes, WorkerMapping};

/// Why the L2 store, or one worker's file in it, cannot be used.
#[derive(Debug)]
pub(crate) enum StoreError {
    /// The configuration does not fit the store (another router holds the directory, another
    /// worker count, mapping or geometry, someone else's file): the router does not start.
    Refused(String),
    /// A storage fault (I/O error, read-only file system, no space, a file where a directory
    /// should be): L2 is off and the router forwards from RAM.
    Fault(String),
}

impl StoreError {
    /// A storage fault from an I/O error, in one line naming `path`.
    fn fault(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
        move |e| StoreError::Fault(format!("store.l2_path {}: {e}", path.display()))
    }
}

/// The lock file in `l2_path`: `flock`ed by the router using the directory, its pid inside.
const LOCK_FILE: &str = "lock";

/// What the error of a router whose L2 directory another router holds says.
const IN_USE: &str = "in use by another router";

/// The exit status `cascade run` gives a [`crate::Router::start`] error: 2 (a usage problem,
/// like a bad configuration) when another router holds the L2 directory or the Unix socket,
/// when a file that is not a socket is at the socket's path, or when `[general] user` or a
/// group does not exist; 1 for every other error.
pub fn start_exit_code(err: &str) -> u8 {
    let usage = [
        IN_USE,
        face::table::UNIX_IN_USE,
        face::table::UNIX_NOT_A_SOCKET,
        crate::privileges::NO_SUCH_USER,
    ];
    if usage.iter().any(|u| err.contains(u)) {
        2
    } else {
        1
    }
}

/// Makes the L2 directory `dir` ready: creates it, locks it ([`lock_store_dir`]) and reads
/// (or writes) its hash key ([`store_key`]). Returns the key and the lock.
pub(crate) fn open_store_dir(
    dir: &Path,
    workers: usize,
    mapping: WorkerMapping,
) -> Result<(HashKey, File), StoreError> {
    std::fs::create_dir_all(dir).map_err(StoreError::fault(dir))?;
    let lock = lock_store_dir(dir)?;
    Ok((store_key(dir, workers, mapping)?, lock))
}

/// Locks the L2 directory for this router: an exclusive `flock` on `<dir>/lock`, which lasts
/// while the returned file is open (every worker's L2 keeps it) and ends with the process
/// however it ends. The lock file holds the process id, so that a second router names the
/// holder in its one-line error.
fn lock_store_dir(dir: &Path) -> Result<File, StoreError> {
    use std::os::fd::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(&path)
        .map_err(StoreError::fault(&path))?;
    // SAFETY: plain syscall on an open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(StoreError::fault(&path)(e));
        }
        let holder = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .map_or_else(|| "holder unknown".to_string(), |pid| format!("pid {pid}"));
        return Err(StoreError::Refused(format!(
            "store.l2_path {}: {IN_USE} ({holder})",
            dir.display()
        )));
    }
    // Informative only: the lock is the flock, not the contents.
    let pid = format!("{}\n", std::process::id());
    let _ = f
        .set_len(0)
        .and_then(|()| f.write_all_at(pid.as_bytes(), 0));
    Ok(f)
}

/// Bytes of `<l2_path>/hash.key`: the key, the worker count, the mapping's code and the
/// mapping's batch (u32 little-endian; 0 unless `batch`).
const KEY_FILE_BYTES: usize = 22;

/// Key files written before `workers.mapping` existed: key and worker count (mapping `name`).
const OLD_KEY_FILE_BYTES: usize = 17;

/// The hash key of a router with an L2 store: kept in `<l2_path>/hash.key` (mode 0600) so that
/// after a restart every name maps to the same worker, and so to the L2 file that holds it.
/// The file also records the worker count and the mapping; a different count or mapping is
/// refused (one line naming the key), since chunks would sit in the files of workers that no
/// longer own them.
fn store_key(dir: &Path, workers: usize, mapping: WorkerMapping) -> Result<HashKey, StoreError> {
    let path = dir.join("hash.key");
    std::fs::create_dir_all(dir).map_err(StoreError::fault(dir))?;
    let batch_of = |m: WorkerMapping| match m {
        WorkerMapping::Batch { batch } => batch as u32,
        _ => 0,
    };
    match std::fs::read(&path) {
        Ok(b) if b.len() == KEY_FILE_BYTES || b.len() == OLD_KEY_FILE_BYTES => {
            if usize::from(b[16]) != workers {
                return Err(StoreError::Refused(format!(
                    "store.l2_path {}: written by a router with {} workers, this one has {workers} (use --workers {})",
                    dir.display(),
                    b[16],
                    b[16]
                )));
            }
            let (code, batch) = if b.len() == KEY_FILE_BYTES {
                (b[17], u32::from_le_bytes([b[18], b[19], b[20], b[21]]))
            } else {
                (WorkerMapping::Name.code(), 0)
            };
            if workers > 1 && (code, batch) != (mapping.code(), batch_of(mapping)) {
                let was = match (WorkerMapping::config_name(code), batch) {
                    ("batch", b) => format!("\"batch\" with store.batch = {b}"),
                    (name, _) => format!("{name:?}"),
                };
                return Err(StoreError::Refused(format!(
                    "workers.mapping: store.l2_path {} was written with workers.mapping = {was}; set it back, or use another l2_path (chunks would sit on workers that no longer own them)",
                    dir.display()
                )));
            }
            let mut k = [0u8; 16];
            k.copy_from_slice(&b[..16]);
            Ok(HashKey::from_bytes(k))
        }
        // Shorter than a key file: what an older router left when it crashed while writing
        // the key, before any L2 file was created (they are created after it). A new key.
        Ok(b) if b.len() < KEY_FILE_BYTES => {
            tracing::warn!(
                path = %path.display(),
                bytes = b.len(),
                "partial key file (a crash while it was written): writing a new key"
            );
            new_key(&path, workers, mapping.code(), batch_of(mapping))
        }
        Ok(_) => Err(StoreError::Refused(format!(
            "{}: not a Cascade key file",
            path.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            new_key(&path, workers, mapping.code(), batch_of(mapping))
        }
        Err(e) => Err(StoreError::fault(&path)(e)),
    }
}

/// Writes a new random key to `path` (mode 0600) with the worker count and the mapping, all
/// or nothing: into a temporary file, synced, then renamed over `path` (the directory is
/// synced too), so that a crash leaves either no key file or a whole one.
fn new_key(path: &Path, workers: usize, code: u8, batch: u32) -> Result<HashKey, StoreError> {
    use std::io::Write as _;
    let mut k = [0u8; 16];
    fill_random(&mut k);
    let mut rec = [0u8; KEY_FILE_BYTES];
    rec[..16].copy_from_slice(&k);
    rec[16] = workers as u8;
    rec[17] = code;
    rec[18..].copy_from_slice(&batch.to_le_bytes());
    let tmp = path.with_extension("key.tmp");
    let write = || -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&rec)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(StoreError::fault(path))?;
    Ok(HashKey::from_bytes(k))
}

/// False-positive rate of each worker's prefix filter with as many distinct prefixes as its
/// L2 can link (4 per extent; real stores hold far fewer, many extents sharing a content's).
const L2_PREFIX_FP_RATE: f64 = 0.01;

/// With several workers, one filter per worker of the name prefixes its L2 answers CanBePrefix
/// Interests for, read by the dispatchers to send such an Interest to a worker that may answer
/// it ([`crate::dispatch::Dispatcher::with_l2_prefixes`]). Sized for the per-worker L2's
/// most prefixes ([`store::l2::PREFIX_LEVELS`] per extent).
pub(crate) fn l2_prefix_filters(cfg: &Config, workers: usize) -> Option<L2Prefixes> {
    if workers < 2 {
        return None;
    }
    let s = &cfg.store;
    let extents = (s.l2_capacity.div_ceil(workers as u64)).div_ceil(u64::from(s.batch.max(1)));
    let names = extents.max(1) * store::l2::PREFIX_LEVELS as u64;
    let filters = (0..workers)
        .map(|_| store::CountingBloom::with_fp_rate(names, L2_PREFIX_FP_RATE).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some(filters.into())
}

/// Opens worker `i`'s L2 file (`<l2_path>/l2-w<i>.dat`): an existing file is reopened with
/// its index (or rebuilt from its slot headers after a crash). A bad configuration, a
/// geometry that differs or someone else's file is refused; an I/O error or a damaged
/// superblock is a storage fault. With `filter`, the file keeps the names of its chunks in the
/// worker's CS filter; with `prefixes`, the prefixes it answers CanBePrefix Interests for in
/// the worker's prefix filter ([`l2_prefix_filters`]).
pub(crate) fn open_l2(
    cfg: &Config,
    i: usize,
    workers: usize,
    filter: Option<store::FilterLink>,
    prefixes: Option<store::FilterLink>,
) -> Result<store::L2Tier, StoreError> {
    let s = &cfg.store;
    let dir = Path::new(&s.l2_path);
    let per_worker = s.l2_capacity.div_ceil(workers as u64);
    let extents = per_worker.div_ceil(u64::from(s.batch)).max(1);
    let extents = u32::try_from(extents).map_err(|_| {
        StoreError::Refused(format!("store.l2_capacity {} is too large", s.l2_capacity))
    })?;
    let mut c = store::L2Config::new(dir.join(format!("l2-w{i}.dat")), extents);
    c.batch = s.batch;
    c.queue_depth = s.queue_depth;
    c.io_threads = s.queue_depth.min(16);
    c.direct = s.direct;
    c.replacement = match s.replacement {
        config::L2Replacement::Fifo => store::Replacement::Fifo,
        config::L2Replacement::Lru => store::Replacement::Lru,
    };
    c.admission = match s.admission {
        config::L2Admission::WriteThrough => store::l2::Admission::WriteThrough,
        config::L2Admission::WriteBack => store::l2::Admission::WriteBack,
    };
    c.decision = match s.decision {
        config::L2Decision::Always => store::l2::Decision::Always,
        config::L2Decision::Lcp => store::l2::Decision::Lcp { p: s.lcp_p },
        config::L2Decision::TwoLru => store::l2::Decision::TwoLru {
            filter_batches: extents,
        },
    };
    c.seed = i as u64 + 1;
    let file = store::L2File::open_with_filters(&c, filter, prefixes).map_err(|e| {
        let line = format!("store: {}: {e}", c.path.display());
        match e {
            store::L2Error::Io(..)
            | store::L2Error::Layout(store::layout::LayoutError::BadSuperblockChecksum) => {
                StoreError::Fault(line)
            }
            store::L2Error::Config(_) | store::L2Error::Layout(_) => StoreError::Refused(line),
        }
    })?;
    tracing::info!(
        worker = i,
        path = %c.path.display(),
        chunks = file.stored_chunks(),
        backend = ?file.backend(),
        "L2 open"
    );
    Ok(
        store::L2Tier::new(file, store::tier::DEFAULT_MAX_NAME_BYTES)
            .with_prefetch_ahead(s.prefetch_ahead),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_key_file_keeps_the_key_workers_and_mapping() {
        let dir = std::env::temp_dir().join(format!("cascade-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let batch = WorkerMapping::Batch { batch: 10 };
        let k = store_key(&dir, 2, batch).unwrap();
        assert_eq!(std::fs::read(dir.join("hash.key")).unwrap().len(), 22);
        assert_eq!(store_key(&dir, 2, batch).unwrap(), k, "same key again");
        let refused = |workers, mapping| match store_key(&dir, workers, mapping) {
            Err(StoreError::Refused(e)) => e,
            other => panic!("{other:?}"),
        };
        for (workers, mapping, needle) in [
            (3, batch, "2 workers"),
            (2, WorkerMapping::Content, "\"batch\" with store.batch = 10"),
            (2, WorkerMapping::Batch { batch: 16 }, "workers.mapping"),
        ] {
            let e = refused(workers, mapping);
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
        // A key file from before the mapping was recorded: its chunks were mapped by full name.
        let old = std::fs::read(dir.join("hash.key")).unwrap()[..17].to_vec();
        std::fs::write(dir.join("hash.key"), &old).unwrap();
        assert_eq!(store_key(&dir, 2, WorkerMapping::Name).unwrap(), k);
        let e = refused(2, WorkerMapping::Content);
        assert!(e.contains("workers.mapping = \"name\""), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
