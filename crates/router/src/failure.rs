//! A router thread that ends before it was asked to stop, or panics, is a failed router: the
//! first such failure is recorded here, the stop flag is raised so that the other threads end,
//! and the daemon exits non-zero so that a supervisor restarts it. A router that keeps running
//! with its I/O loop gone would accept connections it never serves.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The first thread failure of a router.
#[derive(Debug, Default)]
pub struct Failure {
    first: Mutex<Option<String>>,
}

impl Failure {
    /// What failed first, if anything has.
    pub fn get(&self) -> Option<String> {
        self.first.lock().map_or(None, |f| f.clone())
    }

    fn record(&self, what: String) {
        if let Ok(mut first) = self.first.lock() {
            if first.is_none() {
                tracing::error!("{what}");
                *first = Some(what);
            }
        }
    }
}

/// Starts a named thread that runs `f` and records a failure in `failure` (and raises `stop`)
/// when `f` panics, or returns while `stop` is still down. The error names the thread.
pub(crate) fn spawn(
    name: String,
    f: Box<dyn FnOnce() + Send>,
    stop: &Arc<AtomicBool>,
    failure: &Arc<Failure>,
) -> Result<JoinHandle<()>, String> {
    let (stop, failure) = (Arc::clone(stop), Arc::clone(failure));
    let thread = name.clone();
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(f));
            let what = match outcome {
                Err(panic) => Some(format!("thread {thread} panicked: {}", message(&*panic))),
                Ok(()) if !stop.load(Ordering::SeqCst) => {
                    Some(format!("thread {thread} stopped on its own"))
                }
                Ok(()) => None,
            };
            if let Some(what) = what {
                failure.record(what);
                stop.store(true, Ordering::SeqCst);
            }
        })
        .map_err(|e| format!("cannot start thread {name}: {e}"))
}

/// A panic's message, when it is a string.
fn message(panic: &(dyn Any + Send)) -> &str {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: Box<dyn FnOnce() + Send>, stopped: bool) -> (Option<String>, bool) {
        let stop = Arc::new(AtomicBool::new(stopped));
        let failure = Arc::new(Failure::default());
        spawn("t".into(), f, &stop, &failure)
            .unwrap()
            .join()
            .unwrap();
        (failure.get(), stop.load(Ordering::SeqCst))
    }

    #[test]
    fn a_panic_is_a_failure_that_raises_stop() {
        let (failure, stop) = run(Box::new(|| panic!("poll: bad file descriptor")), false);
        assert_eq!(
            failure.as_deref(),
            Some("thread t panicked: poll: bad file descriptor")
        );
        assert!(stop);
    }

    #[test]
    fn returning_before_a_stop_is_a_failure() {
        let (failure, stop) = run(Box::new(|| {}), false);
        assert_eq!(failure.as_deref(), Some("thread t stopped on its own"));
        assert!(stop);
    }

    #[test]
    fn returning_after_a_stop_is_not() {
        assert_eq!(run(Box::new(|| {}), true), (None, true));
    }

    #[test]
    fn only_the_first_failure_is_kept() {
        let stop = Arc::new(AtomicBool::new(false));
        let failure = Arc::new(Failure::default());
        for name in ["a", "b"] {
            spawn(name.into(), Box::new(|| {}), &stop, &failure)
                .unwrap()
                .join()
                .unwrap();
            stop.store(false, Ordering::SeqCst);
        }
        assert_eq!(
            failure.get().as_deref(),
            Some("thread a stopped on its own")
        );
    }
}
