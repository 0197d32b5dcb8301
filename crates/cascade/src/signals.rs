//! SIGINT and SIGTERM (and for `cascade run` SIGHUP, a reload), taken synchronously by every
//! subcommand that stops on them: blocked in the calling thread, and so in every thread it
//! starts afterwards, then waited for with `sigwait`. No handler runs on another thread, so no system call of the router's threads is
//! ever interrupted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// SIGINT and SIGTERM, blocked from [`StopSignals::block`] on.
pub struct StopSignals(libc::sigset_t);

impl StopSignals {
    /// Blocks SIGINT and SIGTERM in the calling thread. Call it before starting any thread, so
    /// that every thread inherits the mask and the signals wait for [`StopSignals::wait`].
    pub fn block() -> Self {
        Self::block_these(&[libc::SIGINT, libc::SIGTERM])
    }

    /// Blocks SIGHUP (a reload, for `cascade run`) as well as SIGINT and SIGTERM: the waits
    /// return it too.
    pub fn block_with_reload() -> Self {
        Self::block_these(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
    }

    /// Blocks SIGQUIT alone (`cascade ping` polls it with [`StopSignals::wait_timeout`]).
    pub fn block_quit() -> Self {
        Self::block_these(&[libc::SIGQUIT])
    }

    fn block_these(signals: &[libc::c_int]) -> Self {
        // SAFETY: sigset_t is plain data initialised by sigemptyset; the calls only read and
        // write it and the calling thread's signal mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &sig in signals {
                libc::sigaddset(&mut set, sig);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            StopSignals(set)
        }
    }

    /// Waits for one of the blocked signals and returns its number.
    pub fn wait(&self) -> i32 {
        let mut sig: libc::c_int = 0;
        // SAFETY: the set is initialised, `sig` is a valid out pointer.
        unsafe {
            libc::sigwait(&self.0, &mut sig);
        }
        sig
    }

    /// Waits up to `timeout` for one of the blocked signals; its number if one came.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Option<i32> {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
        };
        // SAFETY: the set is initialised; a null siginfo pointer is allowed.
        let sig = unsafe { libc::sigtimedwait(&self.0, std::ptr::null_mut(), &ts) };
        (sig > 0).then_some(sig)
    }

    /// A flag that a thread waiting for the signals sets when one comes.
    pub fn into_flag(self) -> std::io::Result<Arc<AtomicBool>> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                self.wait();
                flag.store(true, Ordering::SeqCst);
            })?;
        Ok(stop)
    }
}
