//! Load shapes and latency figures: a closed loop (a fixed number of requests in flight, each
//! replaced as soon as it completes, which finds the peak rate) and an open loop (requests
//! started on a schedule whatever the node does, which shows latency below the peak).
//!
//! Latencies are kept as a full sample (nanoseconds, one `u64` per request: a few MiB for a
//! run) and sorted once, so the percentiles are exact rather than bucketed.

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use super::CqlArgs;

/// How a pass runs: requests in flight, unmeasured seconds, then measured seconds. The CQL and
/// DynamoDB benchmarks share the load shapes through it.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Requests in flight.
    pub concurrency: usize,
    /// Unmeasured seconds before the measured window.
    pub warmup: u64,
    /// Measured seconds.
    pub duration: u64,
}

impl From<&CqlArgs> for Pace {
    fn from(args: &CqlArgs) -> Pace {
        Pace {
            concurrency: args.concurrency,
            warmup: args.warmup,
            duration: args.duration,
        }
    }
}

/// Most requests the open loop keeps in flight; past it a scheduled request is skipped and
/// counted, rather than queued without bound.
const OPEN_LOOP_MAX_IN_FLIGHT: usize = 4096;

/// One request of a workload, run many times concurrently.
pub trait Operation: Send + Sync + 'static {
    /// Runs one request; `Err` carries the reason it failed.
    fn run(&self, rng: &mut Rng) -> impl Future<Output = Result<(), String>> + Send;
}

/// The figures of one measured pass.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Requests completed (successfully) that started in the measured window.
    pub count: u64,
    /// Failed requests in the measured window.
    pub errors: u64,
    /// The measured window.
    pub seconds: f64,
    /// Median latency, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub p99_ms: f64,
    /// 99.9th percentile, milliseconds.
    pub p999_ms: f64,
    /// The first failure's reason, if any request failed (warm-up included).
    pub first_error: Option<String>,
}

impl Summary {
    /// Builds the summary from the latencies (nanoseconds) of the successful requests.
    pub fn from_samples(mut nanos: Vec<u64>, errors: u64, seconds: f64) -> Summary {
        nanos.sort_unstable();
        Summary {
            count: nanos.len() as u64,
            errors,
            seconds,
            p50_ms: quantile_ms(&nanos, 0.50),
            p99_ms: quantile_ms(&nanos, 0.99),
            p999_ms: quantile_ms(&nanos, 0.999),
            first_error: None,
        }
    }

    /// Successful requests per second.
    pub fn ops_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.count as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The figures of an open-loop pass.
#[derive(Debug, Clone)]
pub struct OpenLoop {
    /// The rate asked for, requests per second.
    pub target_rate: f64,
    /// Requests not started because [`OPEN_LOOP_MAX_IN_FLIGHT`] were already in flight.
    pub skipped: u64,
    /// Latencies and achieved rate.
    pub summary: Summary,
}

/// A small, fast generator for keys (SplitMix64); the benchmark needs spread, not secrecy.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: unbiased enough for key choice and free of division.
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// Runs `op` with `pace.concurrency` requests in flight: warm-up, then the measured window.
/// The first failure is printed once (not once per request in flight) and kept in the summary.
pub async fn closed_loop<O: Operation>(op: Arc<O>, pace: impl Into<Pace>) -> Summary {
    let pace = pace.into();
    let start = Instant::now();
    let measure_from = start + Duration::from_secs(pace.warmup);
    let end = measure_from + Duration::from_secs(pace.duration);
    let first_error = Arc::new(Mutex::new(None::<String>));
    let mut tasks = Vec::with_capacity(pace.concurrency);
    for worker in 0..pace.concurrency {
        let op = Arc::clone(&op);
        let first_error = Arc::clone(&first_error);
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::new(0x5EED ^ ((worker as u64) << 32));
            let mut nanos = Vec::new();
            let mut errors = 0u64;
            loop {
                let began = Instant::now();
                if began >= end {
                    break;
                }
                let result = op.run(&mut rng).await;
                if let Err(e) = &result {
                    let mut first = first_error.lock().expect("first error lock");
                    if first.is_none() {
                        eprintln!("request failed: {e}");
                        *first = Some(e.clone());
                    }
                }
                if began < measure_from {
                    continue;
                }
                match result {
                    Ok(()) => nanos.push(duration_nanos(began.elapsed())),
                    Err(_) => errors += 1,
                }
            }
            (nanos, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (nanos, e) = task.await.expect("benchmark task");
        all.extend(nanos);
        errors += e;
    }
    let mut summary = Summary::from_samples(all, errors, pace.duration as f64);
    summary.first_error = first_error.lock().expect("first error lock").take();
    summary
}

/// Runs `op` at `rate` requests per second whatever the node does (an open loop): a
/// dispatcher thread wakes every `--open-loop-tick-us` and starts the requests that have come
/// due since the start, so requests are spread evenly over time (as wrk2's or
/// cassandra-stress's fixed rate spreads them) rather than in bursts at tokio's one-millisecond
/// timer ticks. A request's latency runs from the moment the schedule says it is due (`start +
/// n / rate`), as wrk2 measures, not from when its task first ran: time the request spent
/// waiting for the dispatcher's next tick (or for the dispatcher to get a core), queued in the
/// client's runtime, or in the node all counts. A slow node (or client) cannot slow the
/// schedule down (no coordinated omission), only fill the in-flight cap, which is reported.
pub async fn open_loop<O: Operation>(op: Arc<O>, rate: f64, args: &CqlArgs) -> OpenLoop {
    let tick = Duration::from_micros(args.open_loop_tick_us.max(1));
    let (warmup, duration) = (args.warmup, args.duration);
    // (start in microseconds since the measurement began, latency in nanoseconds); the start
    // is for `--timeline-ms`.
    let samples = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let errors = Arc::new(AtomicU64::new(0));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let runtime = tokio::runtime::Handle::current();
    let dispatcher = {
        let (samples, errors, in_flight) = (
            Arc::clone(&samples),
            Arc::clone(&errors),
            Arc::clone(&in_flight),
        );
        tokio::task::spawn_blocking(move || {
            let start = Instant::now();
            let measure_from = start + Duration::from_secs(warmup);
            let end = measure_from + Duration::from_secs(duration);
            let mut skipped = 0u64;
            let mut started = 0u64;
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let due = (now.duration_since(start).as_secs_f64() * rate) as u64;
                // The requests due since the last tick go to the runtime together, as one task
                // that drives them concurrently: one cross-thread wake-up per tick rather than
                // one per request (each costs the client a futex call and a core switch).
                let mut batch = Vec::new();
                while started < due {
                    started += 1;
                    if in_flight.load(Ordering::Relaxed) >= OPEN_LOOP_MAX_IN_FLIGHT {
                        if now >= measure_from {
                            skipped += 1;
                        }
                        continue;
                    }
                    in_flight.fetch_add(1, Ordering::Relaxed);
                    // When the schedule wanted this request (the `started`th) to start: at most
                    // `now`, earlier if the dispatcher woke late.
                    batch.push((
                        started,
                        start + Duration::from_secs_f64(started as f64 / rate),
                    ));
                }
                if !batch.is_empty() {
                    let (op, samples, errors, in_flight) = (
                        Arc::clone(&op),
                        Arc::clone(&samples),
                        Arc::clone(&errors),
                        Arc::clone(&in_flight),
                    );
                    runtime.spawn(async move {
                        let requests: FuturesUnordered<_> = batch
                            .into_iter()
                            .map(|(seed, began)| {
                                let (op, samples, errors, in_flight) =
                                    (&op, &samples, &errors, &in_flight);
                                async move {
                                    let mut rng = Rng::new(0x0FE4 ^ seed.wrapping_mul(0x9E37_79B9));
                                    let result = op.run(&mut rng).await;
                                    let nanos = duration_nanos(began.elapsed());
                                    in_flight.fetch_sub(1, Ordering::Relaxed);
                                    if began < measure_from {
                                        return;
                                    }
                                    let offset_us =
                                        began.duration_since(measure_from).as_micros() as u64;
                                    match result {
                                        Ok(()) => samples
                                            .lock()
                                            .expect("samples lock")
                                            .push((offset_us, nanos)),
                                        Err(_) => {
                                            errors.fetch_add(1, Ordering::Relaxed);
                                        }
                                    }
                                }
                            })
                            .collect();
                        requests.collect::<()>().await;
                    });
                }
                std::thread::sleep(tick);
            }
            skipped
        })
    };
    let skipped = dispatcher.await.expect("open-loop dispatcher");
    // Let the last requests finish (they started in the window and count).
    while in_flight.load(Ordering::Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let points = std::mem::take(&mut *samples.lock().expect("samples lock"));
    let nanos = points.iter().map(|p| p.1).collect();
    if args.timeline_ms > 0 {
        print_timeline(points, args.timeline_ms);
    }
    OpenLoop {
        target_rate: rate,
        skipped,
        summary: Summary::from_samples(nanos, errors.load(Ordering::Relaxed), args.duration as f64),
    }
}

/// Prints, for each window of `window_ms` of the measured pass, the requests started in it and
/// their median, 99th percentile and worst latency: where in the run the slow requests were
/// (a diagnostic for tail latency, on stderr).
fn print_timeline(mut points: Vec<(u64, u64)>, window_ms: u64) {
    points.sort_unstable();
    let window_us = window_ms.max(1) * 1000;
    eprintln!("timeline ({window_ms} ms windows): start s, requests, p50 ms, p99 ms, max ms");
    for window in points.chunk_by(|a, b| a.0 / window_us == b.0 / window_us) {
        let start = window[0].0 / window_us * window_us;
        let mut nanos: Vec<u64> = window.iter().map(|p| p.1).collect();
        nanos.sort_unstable();
        eprintln!(
            "  {:7.3} {:7} {:8.3} {:8.3} {:8.3}",
            start as f64 / 1e6,
            nanos.len(),
            quantile_ms(&nanos, 0.5),
            quantile_ms(&nanos, 0.99),
            quantile_ms(&nanos, 1.0)
        );
    }
}

/// The `q` quantile of sorted latencies in nanoseconds, in milliseconds (0 when there are none).
fn quantile_ms(sorted_nanos: &[u64], q: f64) -> f64 {
    if sorted_nanos.is_empty() {
        return 0.0;
    }
    let index = ((sorted_nanos.len() as f64 * q).ceil() as usize).clamp(1, sorted_nanos.len()) - 1;
    sorted_nanos[index] as f64 / 1e6
}

/// Nanoseconds of `d`, saturating.
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
