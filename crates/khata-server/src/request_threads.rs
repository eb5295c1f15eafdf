//! Request threads: one single-threaded tokio runtime per core, each serving the connections
//! handed to it from start to end.
//!
//! The DynamoDB endpoint serves HTTP/1.1, where a connection carries one request at a time: a
//! client's parallelism is its number of connections, and a connection has none of its own to
//! lose by staying on one thread. On the node's multi-threaded runtime a connection's task
//! moved between the workers (one of them woken to steal it whenever the other had two
//! ready), so every request paid for waking a thread and for its socket's and its task's
//! state changing cores. Pinned here, as ScyllaDB's shards pin theirs, a thread takes its
//! connections' requests one after another off one `epoll` and no request crosses a core
//! (measured in `docs/benchmarks.md`, DynamoDB, stop 19). CQL stays on the shared runtime:
//! a CQL connection multiplexes many requests, and one connection (the drivers' default
//! against a Cassandra node) must be able to use every core.
//!
//! Connections are dealt round robin. What a request spawns (a blocking
//! storage call) runs on its thread's runtime. A request must not block its thread for long,
//! which would hold up the thread's other connections: a write that would wait for flushes to
//! free memory goes to a blocking thread (`Engine::writes_would_wait` in the coordinator). Stopping ([`RequestThreads::stop`], or dropping)
//! ends each runtime, dropping what is still on it; a server stops its threads after its
//! connections have finished.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// How long a stopping thread waits for the blocking calls its requests started.
const BLOCKING_GRACE: Duration = Duration::from_secs(10);

/// A set of request threads.
#[derive(Debug)]
pub struct RequestThreads {
    threads: Vec<RequestThread>,
    next: AtomicUsize,
}

#[derive(Debug)]
struct RequestThread {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RequestThreads {
    /// One thread per core the process may run on, named `{name}-{i}`.
    pub fn per_core(name: &str) -> std::io::Result<RequestThreads> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        RequestThreads::start(name, cores)
    }

    /// `count` threads (at least one), named `{name}-{i}`.
    pub fn start(name: &str, count: usize) -> std::io::Result<RequestThreads> {
        let mut threads = Vec::with_capacity(count.max(1));
        for i in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || {
                    // The runtime runs the tasks spawned on it while it waits for the stop;
                    // dropping it then drops what is left.
                    runtime.block_on(async move {
                        let _ = stopped.await;
                    });
                    // A blocking call a request started (a storage read, an LWT's lock wait)
                    // is waited for, within bounds.
                    runtime.shutdown_timeout(BLOCKING_GRACE);
                })?;
            threads.push(RequestThread {
                handle,
                stop: Some(stop),
                thread: Some(thread),
            });
        }
        Ok(RequestThreads {
            threads,
            next: AtomicUsize::new(0),
        })
    }

    /// How many threads there are.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Never: there is at least one thread.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// The runtime of the thread whose turn it is.
    pub fn next(&self) -> &Handle {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        &self.threads[i].handle
    }

    /// Ends every thread's runtime and waits for the threads to exit. Blocks: from async code,
    /// call it on a blocking thread.
    pub fn stop(mut self) {
        self.signal_stop();
        for t in &mut self.threads {
            if let Some(thread) = t.thread.take() {
                let _ = thread.join();
            }
        }
    }

    fn signal_stop(&mut self) {
        for t in &mut self.threads {
            if let Some(stop) = t.stop.take() {
                let _ = stop.send(());
            }
        }
    }
}

impl Drop for RequestThreads {
    /// Ends the runtimes without waiting for their threads (which exit on their own).
    fn drop(&mut self) {
        self.signal_stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or("").to_string()
    }

    #[test]
    fn tasks_run_on_the_threads_in_turn_and_stop_ends_them() {
        let threads = RequestThreads::start("test-requests", 2).unwrap();
        assert_eq!(threads.len(), 2);
        let names: Vec<String> = (0..4)
            .map(|_| {
                let (tx, rx) = std::sync::mpsc::channel();
                threads.next().spawn(async move {
                    // What a task spawns stays on its thread.
                    let inner = tokio::spawn(async { thread_name() }).await.unwrap();
                    tx.send((thread_name(), inner)).unwrap();
                });
                let (outer, inner) = rx.recv().unwrap();
                assert_eq!(outer, inner);
                outer
            })
            .collect();
        assert_eq!(
            names,
            [
                "test-requests-0",
                "test-requests-1",
                "test-requests-0",
                "test-requests-1"
            ]
        );
        // A task still waiting when the threads stop is dropped with its runtime.
        let (_never, pending) = oneshot::channel::<()>();
        let (dropped_tx, dropped_rx) = std::sync::mpsc::channel::<()>();
        threads.next().spawn(async move {
            let _guard = dropped_tx;
            let _ = pending.await;
        });
        threads.stop();
        assert!(dropped_rx.recv().is_err(), "the waiting task was dropped");
    }
}
