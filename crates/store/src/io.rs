//! Non-blocking positional file I/O: io_uring, or a pool of threads doing `pread`/`pwrite`.
//!
//! The owner submits [`IoOp`]s (each carries its own [`AlignedBuf`], moved in and handed back
//! on completion, so nothing is allocated per operation) and drains [`IoDone`]s without ever
//! blocking, except through [`Io::wait`] which exists for benchmarks and shutdown. The number
//! of operations in flight is bounded by the queue depth given at start-up.
//!
//! With io_uring, [`Io::submit`] only queues the operation; the kernel gets every queued one
//! with a single system call at the next [`Io::flush`], [`Io::try_complete`] or [`Io::wait`]
//! (a worker that starts several batch reads while processing a batch of packets pays for one
//! `io_uring_enter`, outside its packet processing).
//!
//! [`IoBackend::Auto`] tries io_uring first (one ring per store, `queue_depth` entries) and
//! falls back to the thread pool if the kernel refuses to create the ring (old kernel, seccomp,
//! `io_uring_disabled`).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::ptr::NonNull;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

/// Alignment of every I/O buffer (bytes): enough for `O_DIRECT` on 4 KiB-sector devices.
pub const BUF_ALIGN_BYTES: usize = 4096;

/// Writes a zero to the first byte of every 4 KiB page of `len` zeroed bytes at `p` (volatile,
/// so that it is not folded into the allocation), making the kernel map them now.
///
/// # Safety
/// `p .. p + len` must be writable memory that holds zeros.
pub unsafe fn touch_pages(p: *mut u8, len: usize) {
    for off in (0..len).step_by(4096) {
        // SAFETY: in bounds per the caller; writing the zero it already holds.
        unsafe { std::ptr::write_volatile(p.add(off), 0) };
    }
}

/// A heap buffer aligned to [`BUF_ALIGN_BYTES`], allocated once at start-up.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is uniquely owned heap memory; moving it between threads is sound.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (rounded up to the alignment). Panics if `len` is 0 or
    /// the allocation fails. Every page is written once (fresh zero pages are otherwise mapped
    /// only when first used): the buffers are reused for every read, and a page fault on the
    /// I/O path (the kernel pins the pages of an `O_DIRECT` read) can wait on the process's
    /// memory-map lock.
    pub fn new(len: usize) -> Self {
        let len = len.div_ceil(BUF_ALIGN_BYTES).max(1) * BUF_ALIGN_BYTES;
        let layout = Layout::from_size_align(len, BUF_ALIGN_BYTES).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        // SAFETY: in bounds of the `len` bytes just allocated (a multiple of the page size).
        unsafe { touch_pages(ptr.as_ptr(), len) };
        AlignedBuf { ptr, len }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (buffers have at least one aligned block).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised (zeroed at allocation) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, BUF_ALIGN_BYTES).expect("buffer layout");
        // SAFETY: allocated in `new` with this exact layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// `pread` into the buffer.
    Read,
    /// `pwrite` from the buffer.
    Write,
}

/// One positional operation on the store's file.
#[derive(Debug)]
pub struct IoOp {
    /// Read or write.
    pub kind: IoKind,
    /// File offset in bytes.
    pub offset: u64,
    /// Bytes to transfer, from the start of `buf` (at most `buf.len()`).
    pub len: usize,
    /// The buffer, owned by the operation while it is in flight.
    pub buf: AlignedBuf,
    /// Caller's tag, returned with the completion.
    pub tag: u64,
}

/// A finished operation.
#[derive(Debug)]
pub struct IoDone {
    /// The operation, with its buffer.
    pub op: IoOp,
    /// Bytes transferred, or the error.
    pub result: io::Result<usize>,
}

impl IoDone {
    /// Whether the whole requested length was transferred.
    pub fn complete(&self) -> bool {
        matches!(self.result, Ok(n) if n == self.op.len)
    }
}

/// Which I/O mechanism to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoBackend {
    /// io_uring if the kernel allows it, else the thread pool.
    #[default]
    Auto,
    /// io_uring only (fails to open if the kernel refuses).
    Uring,
    /// A pool of I/O threads doing `pread`/`pwrite`.
    Threads,
}

/// The mechanism actually in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveBackend {
    /// io_uring.
    Uring,
    /// The thread pool.
    Threads,
    /// A simulated disk ([`crate::sim::SimDisk`]).
    Sim,
}

/// The submission/completion engine of one store (owned by one thread).
pub struct Io {
    inner: Inner,
    queue_depth: usize,
    in_flight: usize,
    /// Test hook ([`Io::fail_next`]).
    #[cfg(test)]
    fail_next: Option<(IoKind, i32)>,
}

enum Inner {
    #[cfg(target_os = "linux")]
    Uring(Box<Uring>),
    Threads(Pool),
    Sim(crate::sim::SimDisk),
}

impl std::fmt::Debug for Io {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Io")
            .field("backend", &self.backend())
            .field("queue_depth", &self.queue_depth)
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl Io {
    /// Starts the I/O engine on `file` for at most `queue_depth` operations in flight;
    /// `threads` is the pool size when the thread pool is used.
    pub fn new(
        file: Arc<File>,
        backend: IoBackend,
        queue_depth: usize,
        threads: usize,
    ) -> io::Result<Self> {
        let queue_depth = queue_depth.max(1);
        let inner = match backend {
            IoBackend::Threads => Inner::Threads(Pool::new(file, queue_depth, threads)?),
            #[cfg(target_os = "linux")]
            IoBackend::Uring => Inner::Uring(Box::new(Uring::new(file, queue_depth)?)),
            #[cfg(target_os = "linux")]
            IoBackend::Auto => match Uring::new(file.clone(), queue_depth) {
                Ok(u) => Inner::Uring(Box::new(u)),
                Err(_) => Inner::Threads(Pool::new(file, queue_depth, threads)?),
            },
            #[cfg(not(target_os = "linux"))]
            IoBackend::Uring => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "io_uring needs Linux",
                ))
            }
            #[cfg(not(target_os = "linux"))]
            IoBackend::Auto => Inner::Threads(Pool::new(file, queue_depth, threads)?),
        };
        Ok(Io {
            inner,
            queue_depth,
            in_flight: 0,
            #[cfg(test)]
            fail_next: None,
        })
    }

    /// An engine whose operations complete when the simulation steps `disk`
    /// ([`crate::sim`]).
    pub(crate) fn sim(disk: crate::sim::SimDisk, queue_depth: usize) -> Self {
        Io {
            inner: Inner::Sim(disk),
            queue_depth: queue_depth.max(1),
            in_flight: 0,
            #[cfg(test)]
            fail_next: None,
        }
    }

    /// The mechanism in use.
    pub fn backend(&self) -> ActiveBackend {
        match self.inner {
            #[cfg(target_os = "linux")]
            Inner::Uring(_) => ActiveBackend::Uring,
            Inner::Threads(_) => ActiveBackend::Threads,
            Inner::Sim(_) => ActiveBackend::Sim,
        }
    }

    /// Operations submitted and not yet drained.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Whether another operation can be submitted now.
    pub fn has_room(&self) -> bool {
        self.in_flight < self.queue_depth
    }

    /// Queues `op` without blocking; gives it back if the queue is full or the kernel refused
    /// it. With io_uring the kernel sees queued operations at the next [`Io::flush`],
    /// [`Io::try_complete`] or [`Io::wait`]: one system call for all of them.
    pub fn submit(&mut self, op: IoOp) -> Result<(), IoOp> {
        if !self.has_room() || op.len > op.buf.len() {
            return Err(op);
        }
        let r = match &mut self.inner {
            #[cfg(target_os = "linux")]
            Inner::Uring(u) => u.submit(op),
            Inner::Threads(p) => p.submit(op),
            Inner::Sim(d) => {
                d.submit(op);
                Ok(())
            }
        };
        if r.is_ok() {
            self.in_flight += 1;
        }
        r
    }

    /// Registers `bufs` with the kernel as io_uring fixed buffers: operations on them then skip
    /// pinning the buffer's pages for every request (`O_DIRECT`). Returns whether it worked
    /// (false with the thread pool, or when the kernel refuses, e.g. over `RLIMIT_MEMLOCK`;
    /// operations then go as before). At most one registration per `Io`.
    ///
    /// # Safety
    /// Each buffer's memory must stay allocated until this `Io` is dropped (an [`AlignedBuf`]
    /// may move; it must not be freed): an operation on a buffer that the allocator later put
    /// at the same address would use the registered pages, not the new buffer's.
    pub unsafe fn register_buffers(&mut self, bufs: &[&AlignedBuf]) -> bool {
        match &mut self.inner {
            #[cfg(target_os = "linux")]
            // SAFETY: forwarded from the caller.
            Inner::Uring(u) => unsafe { u.register_buffers(bufs) },
            Inner::Threads(_) | Inner::Sim(_) => false,
        }
    }

    /// Hands queued operations to the kernel now (io_uring; the thread pool has them already).
    pub fn flush(&mut self) {
        #[cfg(target_os = "linux")]
        if let Inner::Uring(u) = &mut self.inner {
            u.flush();
        }
    }

    /// The next finished operation, if any, without blocking (queued operations are handed
    /// to the kernel first).
    pub fn try_complete(&mut self) -> Option<IoDone> {
        if self.in_flight == 0 {
            return None;
        }
        let d = match &mut self.inner {
            #[cfg(target_os = "linux")]
            Inner::Uring(u) => u.try_complete(),
            Inner::Threads(p) => p.try_complete(),
            Inner::Sim(d) => d.try_complete(),
        };
        if d.is_some() {
            self.in_flight -= 1;
        }
        #[cfg(test)]
        let d = d.map(|d| self.injected(d));
        d
    }

    /// Test hook: the next operation of `kind` to complete reports OS error `errno` instead of
    /// its result (the operation itself was carried out).
    #[cfg(test)]
    pub(crate) fn fail_next(&mut self, kind: IoKind, errno: i32) {
        self.fail_next = Some((kind, errno));
    }

    #[cfg(test)]
    fn injected(&mut self, mut d: IoDone) -> IoDone {
        if let Some((_, errno)) = self.fail_next.filter(|&(k, _)| k == d.op.kind) {
            self.fail_next = None;
            d.result = Err(io::Error::from_raw_os_error(errno));
        }
        d
    }

    /// Blocks until an operation finishes (`None` if nothing is in flight). For benchmarks and
    /// shutdown only: a forwarding worker uses [`Io::try_complete`].
    pub fn wait(&mut self) -> Option<IoDone> {
        if self.in_flight == 0 {
            return None;
        }
        let d = match &mut self.inner {
            #[cfg(target_os = "linux")]
            Inner::Uring(u) => u.wait(),
            Inner::Threads(p) => p.wait(),
            Inner::Sim(d) => d.wait(),
        };
        if d.is_some() {
            self.in_flight -= 1;
        }
        #[cfg(test)]
        let d = d.map(|d| self.injected(d));
        d
    }
}

// ------------------------------------------------------------------------------- thread pool

struct Pool {
    tx: Option<Sender<IoOp>>,
    rx: Receiver<IoDone>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    fn new(file: Arc<File>, queue_depth: usize, threads: usize) -> io::Result<Self> {
        let (tx, work) = crossbeam_channel::bounded::<IoOp>(queue_depth);
        let (done, rx) = crossbeam_channel::bounded::<IoDone>(queue_depth);
        let n = threads.clamp(1, queue_depth);
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let (file, work, done) = (file.clone(), work.clone(), done.clone());
            let h = std::thread::Builder::new()
                .name(format!("l2-io-{i}"))
                .spawn(move || {
                    while let Ok(mut op) = work.recv() {
                        let result = run_blocking(&file, &mut op);
                        if done.send(IoDone { op, result }).is_err() {
                            break;
                        }
                    }
                })?;
            handles.push(h);
        }
        Ok(Pool {
            tx: Some(tx),
            rx,
            threads: handles,
        })
    }

    fn submit(&mut self, op: IoOp) -> Result<(), IoOp> {
        match &self.tx {
            // The channel holds queue_depth operations and at most queue_depth are in flight,
            // so this never finds it full.
            Some(tx) => tx.try_send(op).map_err(|e| e.into_inner()),
            None => Err(op),
        }
    }

    fn try_complete(&mut self) -> Option<IoDone> {
        self.rx.try_recv().ok()
    }

    fn wait(&mut self) -> Option<IoDone> {
        self.rx.recv().ok()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.tx = None; // the threads see the channel close and exit
        while self.rx.try_recv().is_ok() {}
        for h in self.threads.drain(..) {
            // Keep draining so no thread blocks on a full completion channel.
            while !h.is_finished() {
                if self
                    .rx
                    .recv_timeout(std::time::Duration::from_millis(1))
                    .is_ok()
                {
                    continue;
                }
            }
            let _ = h.join();
        }
    }
}

/// One blocking `pread`/`pwrite` of the whole length (retried on short transfers and EINTR).
fn run_blocking(file: &File, op: &mut IoOp) -> io::Result<usize> {
    let len = op.len;
    let mut done = 0;
    while done < len {
        let off = op.offset + done as u64;
        let r = match op.kind {
            IoKind::Read => file.read_at(&mut op.buf.as_mut_slice()[done..len], off),
            IoKind::Write => file.write_at(&op.buf.as_slice()[done..len], off),
        };
        match r {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

// ---------------------------------------------------------------------------------- io_uring

#[cfg(target_os = "linux")]
struct Uring {
    ring: io_uring::IoUring,
    file: Arc<File>,
    /// Operations in flight, by slot (the SQE's user_data).
    slots: Vec<Option<IoOp>>,
    free: Vec<u32>,
    /// Entries pushed on the submission queue since the last `submit`.
    unsubmitted: u32,
    /// Registered buffers: (address, length, index), by address.
    fixed: Vec<(usize, usize, u16)>,
}

#[cfg(target_os = "linux")]
impl Uring {
    fn new(file: Arc<File>, queue_depth: usize) -> io::Result<Self> {
        let entries = (queue_depth as u32).next_power_of_two();
        let ring = io_uring::IoUring::new(entries)?;
        let slots = (0..queue_depth).map(|_| None).collect();
        let free = (0..queue_depth as u32).rev().collect();
        Ok(Uring {
            ring,
            file,
            slots,
            free,
            unsubmitted: 0,
            fixed: Vec::new(),
        })
    }

    /// See [`Io::register_buffers`].
    unsafe fn register_buffers(&mut self, bufs: &[&AlignedBuf]) -> bool {
        if !self.fixed.is_empty() || bufs.is_empty() || bufs.len() > usize::from(u16::MAX) {
            return false;
        }
        let iovecs: Vec<libc::iovec> = bufs
            .iter()
            .map(|b| libc::iovec {
                iov_base: b.as_slice().as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: the caller keeps every buffer allocated for the ring's lifetime.
        if unsafe { self.ring.submitter().register_buffers(&iovecs) }.is_err() {
            return false;
        }
        self.fixed = bufs
            .iter()
            .enumerate()
            .map(|(i, b)| (b.as_slice().as_ptr() as usize, b.len(), i as u16))
            .collect();
        self.fixed.sort_unstable();
        true
    }

    /// The registered buffer holding `len` bytes at `addr`, if any.
    fn fixed_index(&self, addr: usize, len: usize) -> Option<u16> {
        let i = self.fixed.binary_search_by_key(&addr, |f| f.0).ok()?;
        let (_, cap, index) = self.fixed[i];
        (len <= cap).then_some(index)
    }

    fn submit(&mut self, mut op: IoOp) -> Result<(), IoOp> {
        use std::os::fd::AsRawFd;
        let Some(slot) = self.free.pop() else {
            return Err(op);
        };
        let fd = io_uring::types::Fd(self.file.as_raw_fd());
        let len = op.len as u32;
        let fixed = self.fixed_index(op.buf.as_slice().as_ptr() as usize, op.len);
        let entry = match (op.kind, fixed) {
            (IoKind::Read, Some(i)) => {
                io_uring::opcode::ReadFixed::new(fd, op.buf.as_mut_slice().as_mut_ptr(), len, i)
                    .offset(op.offset)
                    .build()
            }
            (IoKind::Read, None) => {
                io_uring::opcode::Read::new(fd, op.buf.as_mut_slice().as_mut_ptr(), len)
                    .offset(op.offset)
                    .build()
            }
            (IoKind::Write, Some(i)) => {
                io_uring::opcode::WriteFixed::new(fd, op.buf.as_slice().as_ptr(), len, i)
                    .offset(op.offset)
                    .build()
            }
            (IoKind::Write, None) => {
                io_uring::opcode::Write::new(fd, op.buf.as_slice().as_ptr(), len)
                    .offset(op.offset)
                    .build()
            }
        }
        .user_data(u64::from(slot));
        // SAFETY: the buffer lives in `self.slots` until its completion is reaped (the ring is
        // dropped before the slots, see Drop), and the file stays open through `self.file`.
        // The ring has as many entries as there are slots, so the queue has room.
        let pushed = unsafe { self.ring.submission().push(&entry).is_ok() };
        if !pushed {
            // Not accepted: nothing references the buffer.
            self.free.push(slot);
            return Err(op);
        }
        self.slots[slot as usize] = Some(op);
        // The kernel sees it at the next `flush` (one system call for every operation queued
        // since the last one).
        self.unsubmitted += 1;
        Ok(())
    }

    /// Hands the queued operations to the kernel; false if the ring is broken.
    fn flush(&mut self) -> bool {
        if self.unsubmitted == 0 {
            return true;
        }
        loop {
            match self.ring.submit() {
                Ok(n) => {
                    self.unsubmitted = self.unsubmitted.saturating_sub(n as u32);
                    if self.unsubmitted == 0 || n == 0 {
                        return true;
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // EAGAIN/EBUSY: the kernel is short of resources; the entries stay queued
                // and go with the next flush.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY)) => {
                    return true
                }
                Err(_) => return false,
            }
        }
    }

    fn reap(&mut self) -> Option<IoDone> {
        let cqe = self.ring.completion().next()?;
        let slot = cqe.user_data() as usize;
        let op = self.slots.get_mut(slot)?.take()?;
        self.free.push(slot as u32);
        let res = cqe.result();
        let result = if res < 0 {
            Err(io::Error::from_raw_os_error(-res))
        } else {
            Ok(res as usize)
        };
        Some(self.finish_short(op, result))
    }

    /// A short read/write (legal for io_uring) is completed synchronously: rare, and only
    /// with regular files at EOF or on signals.
    fn finish_short(&self, mut op: IoOp, result: io::Result<usize>) -> IoDone {
        match result {
            Ok(n) if n < op.len && n > 0 => {
                let rest_off = op.offset + n as u64;
                let len = op.len;
                let r = match op.kind {
                    IoKind::Read => self
                        .file
                        .read_at(&mut op.buf.as_mut_slice()[n..len], rest_off),
                    IoKind::Write => self.file.write_at(&op.buf.as_slice()[n..len], rest_off),
                };
                let result = r.map(|m| n + m);
                IoDone { op, result }
            }
            result => IoDone { op, result },
        }
    }

    fn try_complete(&mut self) -> Option<IoDone> {
        self.flush();
        self.reap()
    }

    fn wait(&mut self) -> Option<IoDone> {
        self.flush();
        loop {
            if let Some(d) = self.reap() {
                return Some(d);
            }
            if self.free.len() == self.slots.len() {
                return None;
            }
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(_) => return None,
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Uring {
    fn drop(&mut self) {
        // The kernel may still write into in-flight buffers: reap everything before the
        // buffers in `slots` are freed.
        while self.free.len() < self.slots.len() {
            if self.wait().is_none() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(backend: IoBackend, fixed: bool) {
        // Declared before `io`, so dropped after it (registered buffers must outlive it).
        let mut bufs: Vec<AlignedBuf> = (0..8).map(|_| AlignedBuf::new(4096)).collect();
        let dir = tempfile::tempdir().unwrap();
        let file = Arc::new(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(dir.path().join("f"))
                .unwrap(),
        );
        file.set_len(64 * 4096).unwrap();
        let mut io = Io::new(file, backend, 4, 2).unwrap();
        if backend == IoBackend::Threads {
            assert_eq!(io.backend(), ActiveBackend::Threads);
        }
        if fixed {
            let all: Vec<&AlignedBuf> = bufs.iter().collect();
            // SAFETY: `bufs` outlives `io` and its buffers are never freed before.
            let registered = unsafe { io.register_buffers(&all) };
            assert_eq!(registered, io.backend() == ActiveBackend::Uring);
            // SAFETY: as above.
            assert!(!unsafe { io.register_buffers(&all) }, "registered twice");
        }
        // Writes: 8 blocks, never more than 4 in flight.
        let mut written = 0;
        while written < 8 || io.in_flight() > 0 {
            while written < 8 && io.has_room() {
                let mut buf = bufs.pop().unwrap();
                buf.as_mut_slice().fill(written as u8 + 1);
                let op = IoOp {
                    kind: IoKind::Write,
                    offset: written * 4096,
                    len: 4096,
                    buf,
                    tag: written,
                };
                io.submit(op).unwrap();
                written += 1;
            }
            let full = IoOp {
                kind: IoKind::Read,
                offset: 0,
                len: 4096,
                buf: AlignedBuf::new(4096),
                tag: 99,
            };
            if !io.has_room() {
                assert!(io.submit(full).is_err(), "queue depth not enforced");
            }
            let d = io.wait().unwrap();
            assert!(d.complete(), "{:?}", d.result);
            bufs.push(d.op.buf);
        }
        assert!(io.try_complete().is_none() && io.wait().is_none());
        for i in 0..8u64 {
            io.submit(IoOp {
                kind: IoKind::Read,
                offset: i * 4096,
                len: 4096,
                buf: bufs.pop().unwrap(),
                tag: i,
            })
            .unwrap();
            let d = loop {
                if let Some(d) = io.try_complete() {
                    break d;
                }
                std::thread::yield_now();
            };
            assert!(d.complete());
            assert!(d.op.buf.as_slice().iter().all(|&b| b == i as u8 + 1));
            assert_eq!(d.op.tag, i);
            bufs.push(d.op.buf);
        }
    }

    #[test]
    fn thread_pool_reads_back_what_it_wrote() {
        round_trip(IoBackend::Threads, false);
        round_trip(IoBackend::Threads, true);
    }

    #[test]
    fn auto_backend_reads_back_what_it_wrote() {
        round_trip(IoBackend::Auto, false);
    }

    #[test]
    fn registered_buffers_read_back_what_they_wrote() {
        round_trip(IoBackend::Auto, true);
    }

    #[test]
    fn aligned_buffers_are_aligned_and_rounded() {
        let b = AlignedBuf::new(100);
        assert_eq!(b.len(), 4096);
        assert_eq!(b.as_slice().as_ptr() as usize % BUF_ALIGN_BYTES, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }
}
