//! A node the benchmark starts and stops itself (`--spawn`), and its memory as Linux reports
//! it.
//!
//! The node runs in a fresh temporary directory (under `$TMPDIR`) on a free loopback port, with
//! the admin and DynamoDB ports off, logging at info to a file in that directory. Start-up
//! time is measured from `spawn` until the CQL port answers an OPTIONS request, which includes
//! the process's own start and whatever it does before serving; the node's own figure (its
//! "node started ... elapsed_ms=" log line) is read back from the log as well. At the end it
//! gets SIGTERM and is waited for (SIGKILL after [`STOP_TIMEOUT`]).
//!
//! Memory comes from `/proc/<pid>/status`: `VmRSS` (resident now) and `VmHWM` (the peak
//! resident since the process started). A sampler polls `VmRSS` to give a peak per workload,
//! and the node's own accounting of memtables and block cache from its admin API's
//! `/metrics` (when it has one), so that resident memory can be set against the configured
//! budgets.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long the node may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long to wait for the "node started" log line once the node answers.
const LOG_LINE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a flush through the admin API may take.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a clean shutdown may take before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the memory sampler reads `VmRSS`.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// `USER_HZ`, the unit of `/proc/<pid>/stat` CPU times: 100 on every Linux architecture khata
/// runs on (reading `sysconf(_SC_CLK_TCK)` would need libc and unsafe code for a constant).
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;
/// How often it reads the node's own memory figures from the admin API's `/metrics`.
const METRICS_EVERY: Duration = Duration::from_millis(500);

/// A running node started by the benchmark.
#[derive(Debug)]
pub struct SpawnedNode {
    child: Child,
    address: SocketAddr,
    startup: Duration,
    log: PathBuf,
    // Dropped (deleted) after the node stops.
    _dir: tempfile::TempDir,
}

impl SpawnedNode {
    /// Starts `binary` and waits until its CQL port answers OPTIONS. Exits the process
    /// with a message if it cannot.
    pub async fn start(binary: &Path, settings: &[String]) -> SpawnedNode {
        let dir = tempfile::Builder::new()
            .prefix("khata-bench-")
            .tempdir()
            .unwrap_or_else(|e| fail(&format!("creating a temporary directory: {e}")));
        let port = free_port();
        let log = dir.path().join("node.log");
        let log_file = std::fs::File::create(&log)
            .unwrap_or_else(|e| fail(&format!("creating {}: {e}", log.display())));
        let mut command = Command::new(binary);
        command
            .arg("server")
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--cql-port", &port.to_string()])
            .args(["--admin-port", "0", "--dynamo-port", "0"]);
        for setting in settings {
            command.args(["--set", setting]);
        }
        let began = Instant::now();
        let mut child = command
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| fail(&format!("starting {}: {e}", binary.display())));
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        loop {
            if super::options::round_trip(address).await.is_ok() {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                fail(&format!(
                    "the node exited with {status} before listening:\n{text}"
                ));
            }
            if began.elapsed() > START_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                fail("the node did not accept connections within a minute");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let node = SpawnedNode {
            startup: began.elapsed(),
            child,
            address,
            log,
            _dir: dir,
        };
        // The node may answer before its "node started" line reaches the log, which gives the
        // admin address; wait for the line a little.
        let deadline = Instant::now() + LOG_LINE_TIMEOUT;
        while node.logged_startup().is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        node
    }

    /// The node's CQL address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The node's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// From spawn until the CQL port answered OPTIONS.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// The `elapsed_ms` of the node's "node started" log line, if it logged one.
    pub fn logged_startup(&self) -> Option<String> {
        let text = strip_ansi(&std::fs::read_to_string(&self.log).ok()?);
        let line = text.lines().find(|l| l.contains("node started"))?;
        let value = line.split("elapsed_ms=").nth(1)?;
        Some(value.split_whitespace().next()?.to_string())
    }

    /// The admin API's address, from the node's "node started" log line (the node binds an
    /// ephemeral port for `--admin-port 0`).
    pub fn admin_address(&self) -> Option<SocketAddr> {
        let text = strip_ansi(&std::fs::read_to_string(&self.log).ok()?);
        let line = text.lines().find(|l| l.contains("node started"))?;
        let value = line.split("admin_address=").nth(1)?;
        value.split_whitespace().next()?.parse().ok()
    }

    /// Flushes every memtable through the admin API (`POST /flush`); whether it answered 200.
    pub async fn flush(&self) -> bool {
        match self.admin_address() {
            Some(admin) => http_request(admin, "POST", "/flush", FLUSH_TIMEOUT)
                .await
                .is_some(),
            None => false,
        }
    }

    /// Stops the node with SIGTERM and waits for it to exit.
    pub async fn stop(mut self) {
        let pid = self.pid().to_string();
        // `kill` rather than libc: the workspace denies unsafe code.
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let began = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    if !status.success() {
                        eprintln!("node: exited with {status}");
                    }
                    return;
                }
                Ok(None) if began.elapsed() < STOP_TIMEOUT => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                _ => {
                    eprintln!("node: no clean exit within a minute; killing it");
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
            }
        }
    }
}

/// Peaks since the last reset, as the sampler saw them.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryPeaks {
    /// Resident memory (`VmRSS`).
    pub rss_bytes: u64,
    /// Threads of the node process (its runtime's workers and blocking pool included).
    pub threads: usize,
    /// What the node accounts to memtables (`khata_memtable_bytes`), if it exposes metrics.
    pub memtable_bytes: Option<u64>,
    /// What the node accounts to its block cache (`khata_block_cache_bytes`).
    pub block_cache_bytes: Option<u64>,
}

/// Polls a process's `VmRSS` and thread count (every [`SAMPLE_EVERY`]) and, when the node's admin address is
/// known, its memtable and block-cache figures from `/metrics` (every [`METRICS_EVERY`]),
/// keeping the peaks since the last reset.
#[derive(Debug)]
pub struct MemorySampler {
    rss: Arc<AtomicU64>,
    threads: Arc<AtomicU64>,
    memtable: Arc<AtomicU64>,
    cache: Arc<AtomicU64>,
    has_metrics: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl MemorySampler {
    /// Starts sampling `pid` (and `admin`'s `/metrics`, if given).
    pub fn start(pid: u32, admin: Option<SocketAddr>) -> MemorySampler {
        let sampler = MemorySampler {
            rss: Arc::new(AtomicU64::new(0)),
            threads: Arc::new(AtomicU64::new(0)),
            memtable: Arc::new(AtomicU64::new(0)),
            cache: Arc::new(AtomicU64::new(0)),
            has_metrics: Arc::new(AtomicBool::new(false)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (rss, threads, stop) = (
            Arc::clone(&sampler.rss),
            Arc::clone(&sampler.threads),
            Arc::clone(&sampler.stop),
        );
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if let Some(bytes) = vm_rss_bytes(pid) {
                    rss.fetch_max(bytes, Ordering::Relaxed);
                }
                if let Some(n) = thread_count(pid) {
                    threads.fetch_max(n as u64, Ordering::Relaxed);
                }
                tokio::time::sleep(SAMPLE_EVERY).await;
            }
        });
        if let Some(admin) = admin {
            let (memtable, cache, has, stop) = (
                Arc::clone(&sampler.memtable),
                Arc::clone(&sampler.cache),
                Arc::clone(&sampler.has_metrics),
                Arc::clone(&sampler.stop),
            );
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(text) = http_get(admin, "/metrics").await {
                        let gauge = |name: &str| {
                            text.lines()
                                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                                .and_then(|v| v.trim().parse::<f64>().ok())
                        };
                        if let (Some(m), Some(c)) = (
                            gauge("khata_memtable_bytes"),
                            gauge("khata_block_cache_bytes"),
                        ) {
                            memtable.fetch_max(m as u64, Ordering::Relaxed);
                            cache.fetch_max(c as u64, Ordering::Relaxed);
                            has.store(true, Ordering::Relaxed);
                        }
                    }
                    tokio::time::sleep(METRICS_EVERY).await;
                }
            });
        }
        sampler
    }

    /// Starts new peaks.
    pub fn reset(&self) {
        for peak in [&self.rss, &self.threads, &self.memtable, &self.cache] {
            peak.store(0, Ordering::Relaxed);
        }
    }

    /// The peaks seen since the last reset.
    pub fn peaks(&self) -> MemoryPeaks {
        let has = self.has_metrics.load(Ordering::Relaxed);
        MemoryPeaks {
            rss_bytes: self.rss.load(Ordering::Relaxed),
            threads: self.threads.load(Ordering::Relaxed) as usize,
            memtable_bytes: has.then(|| self.memtable.load(Ordering::Relaxed)),
            block_cache_bytes: has.then(|| self.cache.load(Ordering::Relaxed)),
        }
    }
}

impl Drop for MemorySampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The body of `GET path` on an HTTP/1.1 server, or `None` on any failure (the figures it
/// gives are optional).
async fn http_get(address: SocketAddr, path: &str) -> Option<String> {
    http_request(address, "GET", path, METRICS_EVERY).await
}

/// The body of a `method path` request without a body, if the answer is 200 within `timeout`.
async fn http_request(
    address: SocketAddr,
    method: &str,
    path: &str,
    timeout: Duration,
) -> Option<String> {
    let exchange = async {
        let mut socket = tokio::net::TcpStream::connect(address).await.ok()?;
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
        );
        socket.write_all(request.as_bytes()).await.ok()?;
        let mut response = Vec::new();
        socket.read_to_end(&mut response).await.ok()?;
        Some(response)
    };
    let response = tokio::time::timeout(timeout, exchange).await.ok()??;
    let text = String::from_utf8(response).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// Resident memory of `pid` now.
pub fn vm_rss_bytes(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:").map(|k| k * 1024)
}

/// Peak resident memory of `pid` since it started.
pub fn vm_hwm_bytes(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:").map(|k| k * 1024)
}

/// CPU time (user and system, all threads) of `pid` so far, or of this process for `None`,
/// from `/proc/<pid>/stat` in clock ticks of [`CLOCK_TICKS_PER_SECOND`].
pub fn cpu_time(pid: Option<u32>) -> Option<Duration> {
    let path = pid.map_or("/proc/self/stat".to_string(), |p| format!("/proc/{p}/stat"));
    let text = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces) start at field 3, `state`;
    // `utime` and `stime` are fields 14 and 15.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(
        ticks as f64 / CLOCK_TICKS_PER_SECOND,
    ))
}

/// Threads of `pid` now.
pub fn thread_count(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.count())
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// `text` without ANSI colour sequences (`ESC [ ... m`), which the node's log carries.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A loopback port that was free a moment ago (bound, then released for the node to take).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| fail(&format!("finding a free port: {e}")))
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1);
}
