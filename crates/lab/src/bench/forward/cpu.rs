//! CPU time of threads: the router's, from `/proc/self/task`.

pub(super) fn thread_cpu_seconds(prefix: &str) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut total = 0u64;
    for e in dir.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // Fields after the command (which is in parentheses): utime is 14th, stime 15th overall.
        if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ut: u64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0);
            let st: u64 = f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0);
            total += ut + st;
        }
    }
    total as f64 / hz
}
