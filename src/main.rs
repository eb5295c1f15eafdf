//! `khata`: one node of the khata database (`khata server`, the default) or its admin client
//! (`khata admin`). Everything is in `khata-server`; this package exists so that
//! `cargo run --release` at the root of the workspace starts a node.

/// mimalloc: a request allocates and frees blocks of a few KiB (a task's future), which
/// glibc's malloc serves from its bins rather than its per-thread cache.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its index in `mi_option_e`, `include/mimalloc.h` of the
/// mimalloc v3 that `libmimalloc-sys` 0.1.49 builds; the `purge_delay_defaults_to_a_second`
/// test checks it still names that option).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keep the memory mimalloc frees for reuse instead of returning it to the OS, unless the
/// environment says otherwise (`MIMALLOC_PURGE_DELAY`, in milliseconds). mimalloc purges on
/// whichever thread allocates when a purge falls due, with `madvise(MADV_DONTNEED)`: under
/// CQL INSERTs at half the peak rate the request threads made thousands of those calls, one
/// of them 111 ms, and the p99 was 6-27 ms; without purging, 2.9-4.0 ms (docs/benchmarks.md).
/// A database keeps its memory (ScyllaDB never returns its own): the node's resident size
/// stays at its peak, which its memtable and cache budgets bound.
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: `mi_option_set` only stores an integer in mimalloc's option table (an atomic
    // store); mimalloc reads the option whenever a purge falls due, so setting it at any time
    // is allowed, and -1 is its documented "never purge".
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

fn main() -> std::process::ExitCode {
    keep_freed_memory();
    khata_server::run::main()
}

#[cfg(test)]
mod tests {
    #[test]
    fn purge_delay_defaults_to_a_second() {
        // mimalloc v3's default purge delay is 1000 ms; no other option defaults to 1000, so
        // this fails if the index moves to another option.
        // SAFETY: reads an integer from mimalloc's option table.
        #[allow(unsafe_code)]
        let delay = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(delay, 1000);
        }
    }
}
