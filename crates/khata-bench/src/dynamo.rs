//! `khata-bench dynamo`: DynamoDB workloads against khata and dynalite, in the same run.
//!
//! The DynamoDB issue's "How fast" section: PutItem, GetItem and a Query of the newest 20 items
//! of a partition (see [`workloads`]), each a closed loop of `--concurrency` requests in flight
//! for `--duration` seconds after a `--warmup`, over a fixed pool of `--connections` HTTP/1.1
//! keep-alive connections with SigV4-signed requests (see [`client`], [`sigv4`]). The same load
//! generator, process and settings measure each target in turn:
//!
//! - khata: `--spawn-khata PATH` (started on free loopback ports in a temporary directory) or
//!   `--khata-address HOST:PORT`;
//! - dynalite (`npm install dynalite`, a DynamoDB implementation on LevelDB that users run
//!   locally): `--dynalite-dir DIR` (the directory holding `node_modules/dynalite`, spawned
//!   on a free port as `node node_modules/dynalite/cli.js --host 127.0.0.1 --port N`, the
//!   issue's command, on its in-memory store; `--dynalite-on-disk` adds `--path` for LevelDB
//!   on disk) or `--dynalite-address HOST:PORT`.
//!
//! Each target gets the table created (CreateTable, PAY_PER_REQUEST), the data loaded with
//! PutItem, then the workloads in order; a spawned target is stopped (by pid) before the next
//! one starts, so the two never share the machine's cores. The report gives each target's
//! throughput, p50/p99/p999, errors and (when spawned) the server's CPU time per request, then
//! the khata/dynalite throughput ratio and p99s against the target: at least 10x
//! dynalite's throughput with a lower p99.
//!
//! A target that fails (cannot start, has no DynamoDB endpoint, or answers an operation with an
//! error) is reported with the first error, as `khata: PutItem failed: ValidationException
//! (400): ...`, and the other target's figures are still measured and printed.
//!
//! Not here: correctness beyond checking each answer's status and, for GetItem and Query, that
//! the items come back (the DynamoDB test suites do that), and an open-loop pass.

mod client;
mod sigv4;
mod target;
mod workloads;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::cql::load::{self, Pace, Summary};
use crate::cql::node;
use client::Client;
use target::{Kind, Running, Source};
use workloads::{Bench, Request, Workload};

/// The command-line options of `khata-bench dynamo`.
#[derive(Args, Debug, Clone)]
pub struct DynamoArgs {
    /// The DynamoDB address of a running khata node.
    #[arg(long, conflicts_with = "spawn_khata")]
    pub khata_address: Option<SocketAddr>,
    /// Start this `khata` binary in a temporary directory on free ports, measure it, stop it.
    #[arg(long)]
    pub spawn_khata: Option<PathBuf>,
    /// Extra `--set key=value` settings for the spawned khata (repeatable).
    #[arg(long = "khata-set")]
    pub khata_set: Vec<String>,
    /// A directory holding `node_modules/dynalite`: start dynalite from it on a free port,
    /// measure it, stop it.
    #[arg(long, conflicts_with = "dynalite_address")]
    pub dynalite_dir: Option<PathBuf>,
    /// The address of a running dynalite.
    #[arg(long)]
    pub dynalite_address: Option<SocketAddr>,
    /// Run the spawned dynalite on LevelDB in a temporary directory (`--path`) instead of its
    /// default in-memory store, which is how the issue starts it and is the faster of the two.
    #[arg(long)]
    pub dynalite_on_disk: bool,
    /// Workloads to run, in this order: put, get, query, batch-write, batch-get, transact.
    #[arg(long, value_delimiter = ',', default_value = "put,get,query")]
    pub workloads: Vec<String>,
    /// Requests in flight, for every workload and for the load.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// HTTP/1.1 keep-alive connections (one request at a time on each); requests beyond them
    /// wait in the client for a free connection.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Measured seconds per workload.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Unmeasured seconds before each workload.
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
    /// Items of the put/get key space (all loaded when get runs).
    #[arg(long, default_value_t = 20_000)]
    pub items: u64,
    /// Items per partition of the put/get key space.
    #[arg(long, default_value_t = 10)]
    pub items_per_partition: u64,
    /// Partitions the query workload reads.
    #[arg(long, default_value_t = 50)]
    pub query_partitions: u64,
    /// Items per query partition.
    #[arg(long, default_value_t = 200)]
    pub partition_items: u64,
    /// Bytes per item, as DynamoDB counts them (names and values).
    #[arg(long, default_value_t = 200)]
    pub item_size: usize,
    /// The table's name (created if missing; an existing one is reused).
    #[arg(long, default_value = "khata_bench")]
    pub table: String,
    /// The region in the signatures' scope.
    #[arg(long, default_value = "us-east-1")]
    pub region: String,
}

/// One workload's figures on one target.
#[derive(Debug, Clone)]
struct Measured {
    summary: Summary,
    /// Server CPU time per request (µs), when the target was spawned.
    server_cpu_micros: Option<f64>,
    /// The load generator's own CPU time per request (µs): it shares the machine's cores with
    /// the target.
    bench_cpu_micros: Option<f64>,
}

/// Everything measured on one target.
#[derive(Debug)]
struct TargetReport {
    kind: Kind,
    /// Why it could not be measured (start, CreateTable or load failed).
    failure: Option<String>,
    workloads: Vec<(Workload, Measured)>,
    connections_opened: u64,
}

/// Runs `khata-bench dynamo`.
pub fn run(args: &DynamoArgs) {
    let mut workloads = Vec::new();
    for name in &args.workloads {
        match Workload::parse(name) {
            Some(w) => workloads.push(w),
            None => {
                eprintln!("unknown workload {name} (put, get, query)");
                std::process::exit(2);
            }
        }
    }
    let mut targets = Vec::new();
    if let Some(address) = args.khata_address {
        targets.push((Kind::Khata, Source::Address(address)));
    }
    if let Some(binary) = &args.spawn_khata {
        targets.push((
            Kind::Khata,
            Source::SpawnKhata {
                binary: binary.clone(),
                settings: args.khata_set.clone(),
            },
        ));
    }
    if let Some(dir) = &args.dynalite_dir {
        targets.push((
            Kind::Dynalite,
            Source::SpawnDynalite {
                dir: dir.clone(),
                on_disk: args.dynalite_on_disk,
            },
        ));
    }
    if let Some(address) = args.dynalite_address {
        targets.push((Kind::Dynalite, Source::Address(address)));
    }
    if targets.is_empty() {
        eprintln!(
            "no target: give --spawn-khata or --khata-address, and/or --dynalite-dir or \
             --dynalite-address"
        );
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let reports = runtime.block_on(async {
        let mut reports = Vec::new();
        for (kind, source) in &targets {
            reports.push(measure(*kind, source, &workloads, args).await);
        }
        reports
    });
    print_report(args, &workloads, &reports);
}

/// Starts (or addresses) one target, loads it, runs the workloads, stops it.
async fn measure(
    kind: Kind,
    source: &Source,
    workloads: &[Workload],
    args: &DynamoArgs,
) -> TargetReport {
    eprintln!("== {}", kind.name());
    let mut report = TargetReport {
        kind,
        failure: None,
        workloads: Vec::new(),
        connections_opened: 0,
    };
    let running = match target::start(kind, source).await {
        Ok(running) => running,
        Err(e) => {
            eprintln!("{e}");
            report.failure = Some(e);
            return report;
        }
    };
    eprintln!(
        "{}: {}{}",
        kind.name(),
        running.address,
        running
            .pid()
            .map_or(String::new(), |pid| format!(", pid {pid}"))
    );
    let client = Client::new(running.address, args.connections, &args.region);
    let bench = Arc::new(Bench::new(client, args));
    match prepare(&bench, workloads, args).await {
        Ok(()) => {
            for &workload in workloads {
                eprintln!("== {} {}", kind.name(), workload.name());
                report.workloads.push((
                    workload,
                    run_workload(&bench, workload, &running, args).await,
                ));
            }
        }
        Err(e) => {
            let e = format!("{}: {e}", kind.name());
            eprintln!("{e}");
            report.failure = Some(e);
        }
    }
    report.connections_opened = bench.client().connections_opened();
    running.stop(kind).await;
    report
}

async fn prepare(
    bench: &Arc<Bench>,
    workloads: &[Workload],
    args: &DynamoArgs,
) -> Result<(), String> {
    bench.create_table().await?;
    bench.load(workloads, args.concurrency).await
}

async fn run_workload(
    bench: &Arc<Bench>,
    workload: Workload,
    running: &Running,
    args: &DynamoArgs,
) -> Measured {
    let pid = running.pid();
    let cpu_before = pid.and_then(|p| node::cpu_time(Some(p)));
    let own_before = node::cpu_time(None);
    let pace = Pace {
        concurrency: args.concurrency,
        warmup: args.warmup,
        duration: args.duration,
    };
    let summary = load::closed_loop(Request::new(Arc::clone(bench), workload), pace).await;
    let cpu_after = pid.and_then(|p| node::cpu_time(Some(p)));
    let own_after = node::cpu_time(None);
    // Requests of the whole pass (warm-up included), approximated by the measured rate.
    let requests = (summary.count + summary.errors) as f64 / summary.seconds.max(1e-9)
        * (args.duration + args.warmup) as f64;
    let per_request = |before: Option<Duration>, after: Option<Duration>| match (before, after) {
        (Some(a), Some(b)) if requests > 0.0 => {
            Some(b.saturating_sub(a).as_secs_f64() * 1e6 / requests)
        }
        _ => None,
    };
    Measured {
        summary,
        server_cpu_micros: per_request(cpu_before, cpu_after),
        bench_cpu_micros: per_request(own_before, own_after),
    }
}

fn print_report(args: &DynamoArgs, workloads: &[Workload], reports: &[TargetReport]) {
    println!(
        "concurrency {}, connections {}, {} s per workload after {} s warm-up; {} put/get \
         items, {} query partitions of {} items, {} B items",
        args.concurrency,
        args.connections,
        args.duration,
        args.warmup,
        args.items,
        args.query_partitions,
        args.partition_items,
        args.item_size
    );
    // The last columns are the server's CPU time per request (spawned only) and the load
    // generator's, in microseconds.
    println!(
        "{:<10}{:<8}{:>10}{:>9}{:>9}{:>9}{:>9}{:>11}{:>10}",
        "target",
        "workload",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "p999 ms",
        "errors",
        "server us",
        "bench us"
    );
    for report in reports {
        for (workload, m) in &report.workloads {
            let s = &m.summary;
            println!(
                "{:<10}{:<8}{:>10.0}{:>9.3}{:>9.3}{:>9.3}{:>9}{:>11}{:>10}",
                report.kind.name(),
                workload.name(),
                s.ops_per_second(),
                s.p50_ms,
                s.p99_ms,
                s.p999_ms,
                s.errors,
                m.server_cpu_micros
                    .map_or("-".into(), |v| format!("{v:.1}")),
                m.bench_cpu_micros.map_or("-".into(), |v| format!("{v:.1}")),
            );
        }
        if report.failure.is_none() {
            println!(
                "{:<10}{} connections opened over the run",
                report.kind.name(),
                report.connections_opened
            );
        }
    }
    print_comparison(workloads, reports);
    print_failures(reports);
}

/// khata against dynalite per workload: the throughput ratio and both p99s, against the
/// issue's target (10x the throughput, a lower p99).
fn print_comparison(workloads: &[Workload], reports: &[TargetReport]) {
    let find = |kind: Kind, w: Workload| {
        reports
            .iter()
            .find(|r| r.kind == kind)
            .and_then(|r| r.workloads.iter().find(|(x, _)| *x == w))
            .map(|(_, m)| &m.summary)
            .filter(|s| s.count > 0)
    };
    if !reports.iter().any(|r| r.kind == Kind::Khata)
        || !reports.iter().any(|r| r.kind == Kind::Dynalite)
    {
        return;
    }
    println!();
    println!(
        "{:<8}{:>14}{:>16}{:>8}{:>14}{:>17}  target (>= 10x, lower p99)",
        "workload", "khata ops/s", "dynalite ops/s", "ratio", "khata p99 ms", "dynalite p99 ms"
    );
    let show_rate =
        |s: Option<&Summary>| s.map_or("-".into(), |s| format!("{:.0}", s.ops_per_second()));
    let show_p99 = |s: Option<&Summary>| s.map_or("-".into(), |s| format!("{:.3}", s.p99_ms));
    for &w in workloads {
        let (k, d) = (find(Kind::Khata, w), find(Kind::Dynalite, w));
        let (ratio, verdict) = match (k, d) {
            (Some(k), Some(d)) if d.ops_per_second() > 0.0 => {
                let ratio = k.ops_per_second() / d.ops_per_second();
                let met = ratio >= 10.0 && k.p99_ms < d.p99_ms;
                (format!("{ratio:.2}"), if met { "met" } else { "not met" })
            }
            (None, _) => ("-".into(), "no khata figure (errors)"),
            _ => ("-".into(), "no dynalite figure (errors)"),
        };
        println!(
            "{:<8}{:>14}{:>16}{:>8}{:>14}{:>17}  {verdict}",
            w.name(),
            show_rate(k),
            show_rate(d),
            ratio,
            show_p99(k),
            show_p99(d),
        );
    }
}

/// The first error of each target that had one, so a failing target says why.
fn print_failures(reports: &[TargetReport]) {
    let mut header = false;
    let mut line = |text: String| {
        if !header {
            println!();
            println!("errors:");
            header = true;
        }
        println!("  {text}");
    };
    for report in reports {
        if let Some(failure) = &report.failure {
            line(failure.clone());
        }
        for (workload, m) in &report.workloads {
            if let Some(e) = &m.summary.first_error {
                line(format!(
                    "{}: {} ({} errors measured): {e}",
                    report.kind.name(),
                    workload.name(),
                    m.summary.errors
                ));
            }
        }
    }
}
