//! `khata-bench cql`: a CQL node measured through the `scylla` driver, against the protocol's
//! own floor on the same machine.
//!
//! The workloads (issue 3, "How fast"), each a closed loop with `--concurrency` requests in
//! flight for `--duration` seconds after a `--warmup`:
//!
//! - `options`: the CQL OPTIONS round trip, sent as raw v4 frames over `--connections` TCP
//!   connections of our own (the driver does not expose OPTIONS). It costs the protocol and the
//!   network but no work, so it is the most this machine can do per request; every other
//!   workload is reported as a ratio to it.
//! - `insert`: a prepared single-row `INSERT INTO bench.kv (k, v)` of a `--value-size` blob at
//!   a uniformly random key among `--rows`.
//! - `select`: a prepared `SELECT v FROM bench.kv WHERE k = ?` of a random loaded key.
//! - `newest50`: a prepared `SELECT c, v FROM bench.wide WHERE p = ? LIMIT 50` of a random
//!   partition of a table clustered by `c DESC`, so the newest 50 rows of the partition.
//!
//! Then a "half the peak rate" pass for `insert` and `select`: an open-loop run at
//! `--rate-fraction` (0.5) of the peak just measured, which reports the latency a client sees
//! when the node is not saturated (target: p99 under 2 ms).
//!
//! The driver gets the same number of connections as the OPTIONS load (`--connections`, one by
//! default, which is the driver's own default for a Cassandra node), so the ratio compares
//! like with like: same sockets, same concurrency, same client process.
//!
//! With `--spawn PATH` the benchmark starts the node itself in a temporary directory (see
//! [`node`]) and also reports its start-up time, its idle resident memory and its peak
//! resident memory per workload and over the whole run. With `--address` it drives a node that
//! is already running and reports only the request figures.
//!
//! Not here: correctness checks beyond counting errors and short results (the driver test
//! suites do that), and several nodes (the cluster issue brings those).

pub(crate) mod load;
pub(crate) mod node;
mod options;
mod workloads;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use load::{OpenLoop, Summary};
use node::{MemoryPeaks, MemorySampler, SpawnedNode};
use workloads::{Bench, Kind};

/// The command-line options of `khata-bench cql`.
#[derive(Args, Debug, Clone)]
pub struct CqlArgs {
    /// The CQL address of a running node (ignored with --spawn).
    #[arg(long, default_value = "127.0.0.1:9042")]
    pub address: SocketAddr,
    /// Start this `khata` binary in a temporary directory on a free port, measure it, and stop
    /// it at the end.
    #[arg(long)]
    pub spawn: Option<PathBuf>,
    /// Extra `--set key=value` settings for the spawned node (repeatable).
    #[arg(long = "node-set")]
    pub node_set: Vec<String>,
    /// Requests in flight, for every workload.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// TCP connections: the driver's pool size and the number of raw OPTIONS connections.
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Measured seconds per workload.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Unmeasured seconds before each workload.
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
    /// Rows loaded into `bench.kv` (the key space of insert and select).
    #[arg(long, default_value_t = 500_000)]
    pub rows: u64,
    /// Partitions of `bench.wide` (newest50).
    #[arg(long, default_value_t = 20)]
    pub partitions: u64,
    /// Rows per partition of `bench.wide`.
    #[arg(long, default_value_t = 5000)]
    pub partition_rows: u64,
    /// Bytes of each row's blob.
    #[arg(long, default_value_t = 256)]
    pub value_size: usize,
    /// Workloads to run, in this order.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "options,insert,select,newest50"
    )]
    pub workloads: Vec<String>,
    /// Fraction of the measured peak for the open-loop pass of insert and select (0: skip).
    #[arg(long, default_value_t = 0.5)]
    pub rate_fraction: f64,
    /// How often the open loop starts the requests that have come due, in microseconds: at
    /// 40,000 requests/s the default starts about 4 at a time; 1000 starts them in bursts of
    /// 40 every millisecond (tokio's timer resolution, this benchmark's schedule until
    /// 2026-12-01).
    #[arg(long, default_value_t = 100)]
    pub open_loop_tick_us: u64,
    /// Run the open-loop pass at this many requests per second instead of a fraction of the
    /// peak, to compare binaries at equal rates (the pass is then named by its rate,
    /// `insert@55000/s`).
    #[arg(long)]
    pub open_loop_rate: Option<f64>,
    /// Print the open-loop pass's latency per window of this many milliseconds (requests,
    /// p50, p99, worst) on stderr, to see when in the run the slow requests were (0: off).
    #[arg(long, default_value_t = 0)]
    pub timeline_ms: u64,
    /// After loading, flush the spawned node's memtables (admin API `POST /flush`), so that
    /// reads come from SSTables rather than memtables.
    #[arg(long)]
    pub flush_after_load: bool,
    /// Do not load the data sets (they are already in the node from an earlier run).
    #[arg(long)]
    pub skip_load: bool,
    /// Keep the spawned node running at the end, printing its pid, until Enter is pressed (for
    /// profiling with `perf record -p`).
    #[arg(long)]
    pub pause_before_stop: bool,
}

/// One line of the report.
struct Line {
    name: String,
    summary: Summary,
    memory: Option<MemoryPeaks>,
    cpu: CpuPerRequest,
    open_loop: Option<OpenLoop>,
}

/// CPU time spent per request during a workload, microseconds: by the node (when spawned) and
/// by this client (driver, load generator and all).
#[derive(Debug, Clone, Copy, Default)]
struct CpuPerRequest {
    node_micros: Option<f64>,
    client_micros: Option<f64>,
}

/// CPU times at the start of a workload, to subtract at its end.
struct CpuMark {
    node: Option<Duration>,
    client: Option<Duration>,
}

impl CpuMark {
    fn now(node_pid: Option<u32>) -> CpuMark {
        CpuMark {
            node: node_pid.and_then(|p| node::cpu_time(Some(p))),
            client: node::cpu_time(None),
        }
    }

    /// Per request since the mark, over `requests` (all requests of the pass, warm-up
    /// included, approximated by the measured rate over the whole pass).
    fn per_request(&self, node_pid: Option<u32>, requests: f64) -> CpuPerRequest {
        let later = CpuMark::now(node_pid);
        let per = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
            (Some(a), Some(b)) if requests > 0.0 => {
                Some(b.saturating_sub(a).as_secs_f64() * 1e6 / requests)
            }
            _ => None,
        };
        CpuPerRequest {
            node_micros: per(self.node, later.node),
            client_micros: per(self.client, later.client),
        }
    }
}

/// Runs `khata-bench cql`.
pub fn run(args: &CqlArgs) {
    for w in &args.workloads {
        if !["options", "insert", "select", "newest50"].contains(&w.as_str()) {
            eprintln!("unknown workload {w} (options, insert, select, newest50)");
            std::process::exit(2);
        }
    }
    if args.workloads.iter().any(|w| w == "newest50") && args.partition_rows < 50 {
        eprintln!("newest50 needs --partition-rows of at least 50");
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(run_async(args));
}

async fn run_async(args: &CqlArgs) {
    let node = match &args.spawn {
        Some(path) => Some(SpawnedNode::start(path, &args.node_set).await),
        None => None,
    };
    let address = node.as_ref().map_or(args.address, SpawnedNode::address);
    let sampler = node
        .as_ref()
        .map(|n| MemorySampler::start(n.pid(), n.admin_address()));
    if let Some(node) = &node {
        report_start(node).await;
    }
    let bench = Arc::new(Bench::connect(address, args).await);
    let probe = Probe {
        node_pid: node.as_ref().map(SpawnedNode::pid),
        sampler: sampler.as_ref(),
    };
    if !args.skip_load {
        load_data(args, &bench, node.as_ref(), &probe).await;
    }
    let mut lines = closed_loops(args, address, &bench, &probe).await;
    if args.rate_fraction > 0.0 || args.open_loop_rate.is_some_and(|r| r > 0.0) {
        half_rate(args, &bench, &probe, &mut lines).await;
    }
    let options_ops = lines
        .iter()
        .find(|l| l.name == "options")
        .map(|l| l.summary.ops_per_second());
    print_report(args, &lines, options_ops);
    drop(bench);
    if let Some(node) = node {
        if let Some(hwm) = node::vm_hwm_bytes(node.pid()) {
            println!("node: peak RSS (VmHWM) over the run {:.1} MiB", mib(hwm));
        }
        if args.pause_before_stop {
            println!(
                "node: pid {} still running; press Enter to stop it",
                node.pid()
            );
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        }
        node.stop().await;
    }
}

/// What is watched around each workload: the node's CPU time and memory, when spawned.
struct Probe<'a> {
    node_pid: Option<u32>,
    sampler: Option<&'a MemorySampler>,
}

impl Probe<'_> {
    /// Starts watching a workload.
    fn begin(&self) -> CpuMark {
        if let Some(s) = self.sampler {
            s.reset();
        }
        CpuMark::now(self.node_pid)
    }

    /// The report line of a workload begun at `mark` that ran about `requests` requests.
    fn line(&self, name: String, mark: &CpuMark, requests: f64, summary: Summary) -> Line {
        Line {
            name,
            summary,
            memory: self.sampler.map(MemorySampler::peaks),
            cpu: mark.per_request(self.node_pid, requests),
            open_loop: None,
        }
    }
}

/// Prints the spawned node's start-up time and, a second later, its idle resident memory.
async fn report_start(node: &SpawnedNode) {
    println!(
        "node: pid {}, started in {:.1} ms (spawn to first OPTIONS answered; its log: {})",
        node.pid(),
        node.startup().as_secs_f64() * 1e3,
        node.logged_startup()
            .map_or("no elapsed_ms".into(), |ms| format!("elapsed_ms={ms}")),
    );
    // Idle: started, nothing connected yet, after a moment to settle.
    tokio::time::sleep(Duration::from_secs(1)).await;
    if let Some(rss) = node::vm_rss_bytes(node.pid()) {
        println!("node: idle RSS {:.1} MiB", mib(rss));
    }
}

/// Loads the tables the chosen workloads read, flushes if asked, and prints the memory peaks.
async fn load_data(
    args: &CqlArgs,
    bench: &Arc<Bench>,
    node: Option<&SpawnedNode>,
    probe: &Probe<'_>,
) {
    let wants = |w: &str| args.workloads.iter().any(|x| x == w);
    probe.begin();
    bench.load(args, wants("select"), wants("newest50")).await;
    if args.flush_after_load {
        match node {
            Some(n) if n.flush().await => eprintln!("flushed the memtables"),
            Some(_) => eprintln!("flush through the admin API failed"),
            None => eprintln!("--flush-after-load needs --spawn"),
        }
    }
    if let Some(s) = probe.sampler {
        let m = s.peaks();
        let show = |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.0} MiB", mib(b)));
        println!(
            "node: during the load, peak RSS {:.0} MiB, memtables {}, block cache {}",
            mib(m.rss_bytes),
            show(m.memtable_bytes),
            show(m.block_cache_bytes),
        );
    }
}

/// Each workload in turn, as fast as it goes.
async fn closed_loops(
    args: &CqlArgs,
    address: SocketAddr,
    bench: &Arc<Bench>,
    probe: &Probe<'_>,
) -> Vec<Line> {
    let mut lines = Vec::new();
    for w in &args.workloads {
        eprintln!("== {w}");
        let mark = probe.begin();
        let summary = match w.as_str() {
            "options" => options::run(address, args).await,
            "insert" => load::closed_loop(bench.op(Kind::Insert), args).await,
            "select" => load::closed_loop(bench.op(Kind::Select), args).await,
            _ => load::closed_loop(bench.op(Kind::Newest50), args).await,
        };
        let requests = summary.ops_per_second() * (args.duration + args.warmup) as f64;
        lines.push(probe.line(w.clone(), &mark, requests, summary));
    }
    lines
}

/// Insert and select again at `args.rate_fraction` of the peak each reached, in an open loop.
async fn half_rate(args: &CqlArgs, bench: &Arc<Bench>, probe: &Probe<'_>, lines: &mut Vec<Line>) {
    for kind in [Kind::Insert, Kind::Select] {
        let Some(peak) = lines.iter().find(|l| l.name == kind.name()) else {
            continue;
        };
        let (rate, name) = match args.open_loop_rate {
            Some(rate) if rate > 0.0 => (rate, format!("{}@{rate:.0}/s", kind.name())),
            _ => (
                peak.summary.ops_per_second() * args.rate_fraction,
                format!("{}@{:.0}%", kind.name(), args.rate_fraction * 100.0),
            ),
        };
        eprintln!("== {} at {rate:.0}/s", kind.name());
        let mark = probe.begin();
        let open = load::open_loop(bench.op(kind), rate, args).await;
        let requests = rate * (args.duration + args.warmup) as f64;
        let mut line = probe.line(name, &mark, requests, open.summary.clone());
        line.open_loop = Some(open);
        lines.push(line);
    }
}

fn print_report(args: &CqlArgs, lines: &[Line], options_ops: Option<f64>) {
    println!(
        "concurrency {}, connections {}, {} s per workload after {} s warm-up, {} rows of {} B",
        args.concurrency, args.connections, args.duration, args.warmup, args.rows, args.value_size
    );
    // Memory columns are the peaks during the workload, in MiB: resident (VmRSS), and what
    // the node accounts to memtables and to its block cache. The last two are CPU time per
    // request, in microseconds, of the node and of this client; then the node's peak thread
    // count.
    println!(
        "{:<14}{:>10}{:>9}{:>9}{:>9}{:>8}{:>10}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}",
        "workload",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "p999 ms",
        "errors",
        "/OPTIONS",
        "RSS",
        "memtbl",
        "cache",
        "node us",
        "bench us",
        "threads"
    );
    for line in lines {
        let s = &line.summary;
        let ratio = match options_ops {
            Some(o) if o > 0.0 && line.name != "options" && line.open_loop.is_none() => {
                format!("{:.2}", s.ops_per_second() / o)
            }
            _ => "-".into(),
        };
        let show = |b: Option<u64>| b.map_or("-".to_string(), |b| format!("{:.0}", mib(b)));
        let m = line.memory.unwrap_or_default();
        println!(
            "{:<14}{:>10.0}{:>9.3}{:>9.3}{:>9.3}{:>8}{:>10}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}",
            line.name,
            s.ops_per_second(),
            s.p50_ms,
            s.p99_ms,
            s.p999_ms,
            s.errors,
            ratio,
            show(line.memory.map(|m| m.rss_bytes)),
            show(m.memtable_bytes),
            show(m.block_cache_bytes),
            micros(line.cpu.node_micros),
            micros(line.cpu.client_micros),
            line.memory.map_or("-".into(), |m| m.threads.to_string()),
        );
        if let Some(open) = &line.open_loop {
            println!(
                "{:<14}target {:.0}/s, achieved {:.0}/s, skipped {} (in-flight cap)",
                "",
                open.target_rate,
                open.summary.ops_per_second(),
                open.skipped
            );
        }
    }
}

fn micros(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.1}"))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
