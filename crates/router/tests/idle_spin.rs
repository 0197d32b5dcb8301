//! The spin an idle worker or I/O thread does before it parks or sleeps
//! ([`router::worker::spin_until`]): it ends when work or a stop request comes, however long
//! its budget, and a zero budget does not spin at all. Nothing here is timed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use router::worker::spin_until;

/// A budget no test would outlive: the spin can only end by `ready`.
const FOREVER: Duration = Duration::from_secs(24 * 3600);

#[test]
fn a_stop_request_ends_the_spin() {
    let stop = Arc::new(AtomicBool::new(false));
    let setter = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            stop.store(true, Ordering::SeqCst);
        })
    };
    assert!(spin_until(FOREVER, || stop.load(Ordering::Relaxed)));
    setter.join().unwrap();
}

#[test]
fn work_ends_the_spin_at_the_first_check_that_sees_it() {
    let mut asked = 0;
    assert!(spin_until(FOREVER, || {
        asked += 1;
        asked == 40
    }));
    assert_eq!(asked, 40);
}

#[test]
fn a_zero_budget_parks_at_once_without_asking() {
    let mut asked = 0;
    assert!(!spin_until(Duration::ZERO, || {
        asked += 1;
        true
    }));
    assert_eq!(asked, 0);
}

#[test]
fn a_spin_without_work_gives_up_and_says_so() {
    let mut asked = 0u64;
    assert!(!spin_until(Duration::from_micros(50), || {
        asked += 1;
        false
    }));
    assert!(asked > 0);
}
