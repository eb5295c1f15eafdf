//! The CPU priority of background threads.
//!
//! Compactions are throughput work: on a machine with few cores they compete with the threads
//! that answer requests, and a request that waits for a core waits out a scheduler slice of a
//! compaction (milliseconds) however short its own work. ScyllaDB runs compaction in a
//! scheduling group with fewer shares; on Linux the per-thread nice value gives the same: a
//! thread at nice 10 gets about a tenth of a core against a busy thread at nice 0, and all of
//! any idle core. Memtable flushes, which writers eventually wait for, go further while their
//! backlog is small: `SCHED_IDLE`, on a thread of their own (the storage engine's
//! `flush_backlog_is_small`).

/// The nice value of compaction threads.
pub const BACKGROUND_NICE: i32 = 10;

/// Move the calling thread to Linux's `SCHED_IDLE` policy: it runs only on a core that no
/// ordinary thread wants, and an ordinary thread that wakes up takes the core from it at
/// once (a nice value only lowers a thread's share, so a request thread can still wait out
/// the scheduler slice of a niced one). A thread cannot leave `SCHED_IDLE` again without
/// `CAP_SYS_NICE`: use it for a thread that lives as long as one piece of work. Elsewhere
/// this does nothing.
pub fn set_current_thread_idle() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param that lives across the call, which only reads
        // it. With pid 0 Linux changes the calling thread only (`man 2 sched_setscheduler`).
        #[allow(unsafe_code)]
        let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether the calling thread runs under `SCHED_IDLE` (always `false` off Linux).
pub fn current_thread_is_idle() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getscheduler(2) takes an integer and touches no memory of ours.
        #[allow(unsafe_code)]
        let policy = unsafe { libc::sched_getscheduler(0) };
        policy == libc::SCHED_IDLE
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// Give the calling thread the nice value `nice` (0 to 19: lower priority than requests).
/// On Linux the nice value belongs to the thread; elsewhere this does nothing.
pub fn set_current_thread_nice(nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority(2) takes three integers and reads or writes no memory of ours.
        // With PRIO_PROCESS and `who` 0 Linux changes the calling thread only (the nice value
        // is a per-thread attribute there, `man 7 sched`).
        #[allow(unsafe_code)]
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nice value of thread `tid` from /proc (field 19 of `stat`).
    #[cfg(target_os = "linux")]
    fn nice_of_current_thread() -> i64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        after_name.split(' ').nth(16).unwrap().parse().unwrap()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn only_the_calling_thread_is_lowered() {
        let before = nice_of_current_thread();
        let lowered = std::thread::spawn(|| {
            set_current_thread_nice(BACKGROUND_NICE).unwrap();
            nice_of_current_thread()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, i64::from(BACKGROUND_NICE).max(before));
        assert_eq!(nice_of_current_thread(), before);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn only_the_calling_thread_goes_idle() {
        assert!(!current_thread_is_idle());
        let idle = std::thread::spawn(|| {
            set_current_thread_idle().unwrap();
            current_thread_is_idle()
        })
        .join()
        .unwrap();
        assert!(idle);
        assert!(!current_thread_is_idle());
    }
}
