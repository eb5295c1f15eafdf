//! The storage workloads, written once against [`BenchEngine`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

/// Workload sizes.
#[derive(Args, Debug, Clone)]
pub struct Params {
    /// Directory for the engines' files (a fresh subdirectory per engine).
    #[arg(long, default_value = "./khata-bench-data")]
    pub dir: String,
    /// W1 rows.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// W1 partitions.
    #[arg(long, default_value_t = 10_000)]
    pub partitions: u64,
    #[arg(long, default_value_t = 256)]
    pub value_size: usize,
    /// W2 point reads.
    #[arg(long, default_value_t = 200_000)]
    pub reads: u64,
    /// W3 partitions and rows per partition.
    #[arg(long, default_value_t = 10)]
    pub w3_partitions: u64,
    #[arg(long, default_value_t = 100_000)]
    pub w3_rows: u64,
    /// W3 reads of the newest 50 rows.
    #[arg(long, default_value_t = 20_000)]
    pub w3_reads: u64,
    /// W4 writer threads and duration.
    #[arg(long, default_value_t = 64)]
    pub w4_threads: u64,
    #[arg(long, default_value_t = 5)]
    pub w4_seconds: u64,
    /// Workloads to run.
    #[arg(long, value_delimiter = ',', default_value = "w1,w2,w3,w4")]
    pub workloads: Vec<String>,
}

impl Params {
    pub fn to_args(&self) -> Vec<String> {
        vec![
            format!("--dir={}", self.dir),
            format!("--rows={}", self.rows),
            format!("--partitions={}", self.partitions),
            format!("--value-size={}", self.value_size),
            format!("--reads={}", self.reads),
            format!("--w3-partitions={}", self.w3_partitions),
            format!("--w3-rows={}", self.w3_rows),
            format!("--w3-reads={}", self.w3_reads),
            format!("--w4-threads={}", self.w4_threads),
            format!("--w4-seconds={}", self.w4_seconds),
            format!("--workloads={}", self.workloads.join(",")),
        ]
    }
}

/// What a workload needs from an engine. Tables: `main` (W1/W2), `wide` (W3), `durable` (W4).
pub trait BenchEngine: Send + Sync {
    fn put(&self, table: &str, partition: u64, row: u64, value: &[u8]);
    /// Whether the row exists.
    fn get(&self, table: &str, partition: u64, row: u64) -> bool;
    /// Number of rows read among the newest `n` of a partition (a reversed read).
    fn newest(&self, table: &str, partition: u64, n: usize) -> usize;
    /// A durable (fsynced before returning) write.
    fn put_durable(&self, partition: u64, row: u64, value: &[u8]);
    /// Flush and compact everything into its final shape.
    fn compact(&self, table: &str);
    /// Memory the engine accounts to memtables and its block cache, in bytes, if it says.
    fn accounted_memory(&self) -> Option<(u64, u64)> {
        None
    }
}

/// A small deterministic PRNG (xorshift64*), so both engines see the same key sequence.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn report(name: &str, value: f64) {
    println!("RESULT {name} {value:.1}");
    eprintln!("  {name}: {value:.1}");
}

/// CPU time this thread has used (user + system), in seconds, from /proc (in clock ticks of
/// 10 ms; a measured read phase of seconds makes that fine enough). On a shared machine the
/// reads per CPU-second of a single-threaded phase move much less with the load than the
/// reads per wall-clock second do, so A/B comparisons quote both.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start with field 3, the state;
    // utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Report `ops` done since `cpu_start` as operations per CPU-second of this thread, if known.
fn report_per_cpu(name: &str, ops: u64, cpu_start: Option<f64>) {
    if let (Some(start), Some(end)) = (cpu_start, thread_cpu_seconds())
        && end > start
    {
        report(name, ops as f64 / (end - start));
    }
}

/// Peak resident memory of this process, in MiB (VmHWM).
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

pub fn run_all(engine: &dyn BenchEngine, p: &Params) {
    let value = vec![0x5au8; p.value_size];
    let has = |w: &str| p.workloads.iter().any(|x| x == w);
    if has("w1") || has("w2") {
        // W1: ingest in random partition order; rows numbered per partition.
        let mut rng = Rng::new(42);
        let mut next_row = vec![0u64; p.partitions as usize];
        let start = Instant::now();
        let mut peak_accounted = (0u64, 0u64);
        for i in 0..p.rows {
            let part = rng.below(p.partitions);
            let row = next_row[part as usize];
            next_row[part as usize] += 1;
            engine.put("main", part, row, &value);
            if i % 4096 == 0
                && let Some((m, c)) = engine.accounted_memory()
            {
                peak_accounted = (peak_accounted.0.max(m), peak_accounted.1.max(c));
            }
        }
        let secs = start.elapsed().as_secs_f64();
        report("w1_ingest_rows_per_s", p.rows as f64 / secs);
        report("w1_peak_rss_mib", peak_rss_mib());
        if engine.accounted_memory().is_some() {
            report("w1_peak_memtable_mib", peak_accounted.0 as f64 / 1048576.0);
            report(
                "w1_peak_block_cache_mib",
                peak_accounted.1 as f64 / 1048576.0,
            );
        }
        if has("w2") {
            engine.compact("main");
            let mut rng = Rng::new(7);
            let sample = |rng: &mut Rng| {
                let part = rng.below(p.partitions);
                let rows = next_row[part as usize].max(1);
                (part, rng.below(rows))
            };
            // Warm-up pass, then the measured pass over the same keys.
            for _ in 0..p.reads {
                let (a, b) = sample(&mut rng);
                engine.get("main", a, b);
            }
            let mut rng = Rng::new(7);
            let cpu_start = thread_cpu_seconds();
            let start = Instant::now();
            let mut found = 0u64;
            for _ in 0..p.reads {
                let (a, b) = sample(&mut rng);
                found += u64::from(engine.get("main", a, b));
            }
            let secs = start.elapsed().as_secs_f64();
            assert_eq!(found, p.reads, "every sampled row exists");
            report("w2_point_reads_per_s", p.reads as f64 / secs);
            report_per_cpu("w2_point_reads_per_cpu_s", p.reads, cpu_start);
        }
    }
    if has("w3") {
        for part in 0..p.w3_partitions {
            for row in 0..p.w3_rows {
                engine.put("wide", part, row, &value);
            }
        }
        engine.compact("wide");
        let mut rng = Rng::new(9);
        for _ in 0..p.w3_reads / 4 {
            engine.newest("wide", rng.below(p.w3_partitions), 50);
        }
        let cpu_start = thread_cpu_seconds();
        let start = Instant::now();
        let mut rows = 0usize;
        for _ in 0..p.w3_reads {
            rows += engine.newest("wide", rng.below(p.w3_partitions), 50);
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(
            rows as u64,
            p.w3_reads * 50.min(p.w3_rows),
            "each read returns 50 rows"
        );
        report("w3_newest50_reads_per_s", p.w3_reads as f64 / secs);
        report_per_cpu("w3_newest50_reads_per_cpu_s", p.w3_reads, cpu_start);
    }
    if has("w4") {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let value = Arc::new(value);
        std::thread::scope(|s| {
            for t in 0..p.w4_threads {
                let (stop, done, value) = (stop.clone(), done.clone(), value.clone());
                s.spawn(move || {
                    let mut i = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        engine.put_durable(t, i, &value);
                        i += 1;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            let start = Instant::now();
            std::thread::sleep(Duration::from_secs(p.w4_seconds));
            let n = done.load(Ordering::Relaxed);
            let secs = start.elapsed().as_secs_f64();
            stop.store(true, Ordering::Relaxed);
            report("w4_durable_writes_per_s", n as f64 / secs);
        });
    }
}
