//! CPU time of threads, split into user and system time: the router's threads from
//! `/proc/self/task/*/stat`, the calling thread from `getrusage(RUSAGE_THREAD)`.

use std::ops::Sub;

/// CPU time, in seconds, in user and in system (kernel) mode.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct CpuTime {
    /// Seconds in user mode.
    pub(super) user: f64,
    /// Seconds in the kernel on the threads' behalf.
    pub(super) sys: f64,
}

impl CpuTime {
    /// This time spread over `n` operations, in microseconds each; `None` for no operation.
    pub(super) fn per_op_us(self, n: u64) -> Option<PerOp> {
        (n > 0).then(|| {
            let k = 1e6 / n as f64;
            PerOp {
                user: self.user * k,
                sys: self.sys * k,
            }
        })
    }
}

impl Sub for CpuTime {
    type Output = CpuTime;

    fn sub(self, o: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user - o.user,
            sys: self.sys - o.sys,
        }
    }
}

/// CPU time per operation, in microseconds, in user and in system mode.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct PerOp {
    /// Microseconds in user mode.
    pub(super) user: f64,
    /// Microseconds in the kernel.
    pub(super) sys: f64,
}

impl PerOp {
    /// User and system together.
    pub(super) fn total(self) -> f64 {
        self.user + self.sys
    }
}

/// The CPU time so far of this process's threads whose name starts with `prefix` (the router
/// started here names its threads `cascade-*`), leaving out the calling thread and the main
/// thread, which take the binary's name (`cascade-…` for a copy named so). The kernel counts
/// it in clock ticks.
pub(super) fn threads_cpu(prefix: &str) -> CpuTime {
    // SAFETY: gettid and getpid have no preconditions.
    let (me, main) = (unsafe { libc::gettid() }, unsafe { libc::getpid() });
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return CpuTime::default();
    };
    let (mut ut, mut st) = (0u64, 0u64);
    for e in dir.flatten() {
        let tid = e.file_name().to_str().and_then(|t| t.parse::<i32>().ok());
        if tid == Some(me) || tid == Some(main) {
            continue;
        }
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let (u, s) = stat_user_sys(&stat);
        ut += u;
        st += s;
    }
    CpuTime {
        user: ut as f64 / hz,
        sys: st as f64 / hz,
    }
}

/// utime and stime, in clock ticks, of one line of `/proc/*/stat` (0 where unreadable).
pub(crate) fn stat_user_sys(stat: &str) -> (u64, u64) {
    // Fields after the command (which is in parentheses and may hold spaces): utime is the
    // 14th field overall, stime the 15th.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return (0, 0);
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|x| x.parse().ok()).unwrap_or(0);
    (field(11), field(12))
}

/// The calling thread's CPU time so far.
pub(super) fn this_thread_cpu() -> CpuTime {
    // SAFETY: rusage is plain data, for which all zeroes is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage the call fills; RUSAGE_THREAD is the calling thread.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return CpuTime::default();
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    CpuTime {
        user: secs(ru.ru_utime),
        sys: secs(ru.ru_stime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_system_ticks_come_from_fields_14_and_15() {
        let line = "4242 (cascade-io 1) R 1 2 3 4 5 6 7 8 9 10 123 45 0 0 20 0 1 0";
        assert_eq!(stat_user_sys(line), (123, 45));
        assert_eq!(stat_user_sys("garbage"), (0, 0));
    }

    /// Spends `secs` of this thread's CPU time.
    fn burn(secs: f64) {
        let t0 = this_thread_cpu();
        let mut x = 0u64;
        loop {
            let d = this_thread_cpu() - t0;
            if d.user + d.sys >= secs {
                return;
            }
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
        }
    }

    /// The router's threads are counted, the caller is not, whatever its name.
    #[test]
    fn threads_by_prefix_leave_out_the_calling_thread() {
        let spawn = |name: &str, f: fn() -> CpuTime| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(f)
                .unwrap()
                .join()
                .unwrap()
        };
        // A thread named like the router's spends 0.3 s and stays alive while counted.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let busy = std::thread::Builder::new()
            .name("cpu-probe-busy".into())
            .spawn(move || {
                burn(0.3);
                done_tx.send(()).unwrap();
                let _ = rx.recv();
            })
            .unwrap();
        done_rx.recv().unwrap();
        let seen = spawn("cpu-probe-me", || {
            burn(0.3);
            threads_cpu("cpu-probe-")
        });
        drop(tx);
        busy.join().unwrap();
        // Clock ticks: the busy thread's 0.3 s, not both threads' 0.6 s.
        let total = seen.user + seen.sys;
        assert!((0.25..0.5).contains(&total), "{seen:?}");
    }

    #[test]
    fn this_thread_spends_cpu_and_time_divides_per_operation() {
        let t0 = this_thread_cpu();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let d = this_thread_cpu() - t0;
        assert!(
            d.user + d.sys > 0.0 && d.user >= 0.0 && d.sys >= 0.0,
            "{d:?}"
        );
        let per = CpuTime {
            user: 2.0,
            sys: 1.0,
        }
        .per_op_us(1_000_000)
        .unwrap();
        assert_eq!((per.user, per.sys, per.total()), (2.0, 1.0, 3.0));
        assert_eq!(d.per_op_us(0), None);
    }
}
