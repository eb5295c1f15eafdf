//! `khata-bench`: khata's load generator.
//!
//! `khata-bench storage` runs the storage-engine workloads of the storage issue on khata's
//! engine and (with `--features rocksdb`) on RocksDB in the same run, each engine in its own
//! child process so that peak memory is measured per engine, and prints both figures with the
//! ratio. The workloads:
//!
//! - W1 ingest: rows of `--value-size` bytes into `--partitions` partitions, commit log on
//!   without an fsync per write; rows/s, and the process's peak resident memory.
//! - W2 point reads of random rows by full key after a major compaction, warm; reads/s.
//! - W3 the newest 50 rows of random partitions of `--w3-rows` rows each, a reversed read;
//!   reads/s.
//! - W4 durable writes: `--w4-threads` writers, each write acknowledged only after an fsync
//!   (khata's `group` commit log; RocksDB's `sync = true`); acknowledged writes/s.
//!
//! `khata-bench cql` drives a `khata` node over CQL through the `scylla` driver (prepared
//! INSERT, SELECT by key, the newest 50 rows of a partition) and measures the protocol's floor,
//! the OPTIONS round trip, on the same number of connections; see [`cql`].
//!
//! `khata-bench dynamo` runs DynamoDB workloads (PutItem, GetItem, the newest 20 items of a
//! partition by Query) over HTTP/1.1 keep-alive connections against khata and dynalite in the
//! same run, and prints the ratio; see [`dynamo`].

mod cql;
mod dynamo;
mod khata;
#[cfg(feature = "rocksdb")]
mod rocks;
mod workloads;

use std::process::Command;

use clap::{Parser, Subcommand};

use workloads::{BenchEngine, Params};

#[derive(Parser, Debug)]
#[command(name = "khata-bench", about = "khata's benchmarks and load generator")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Storage-engine workloads W1-W4 on khata and RocksDB, side by side.
    Storage {
        #[command(flatten)]
        params: Params,
        /// Engines to run: khata, rocksdb (needs the `rocksdb` feature).
        #[arg(long, value_delimiter = ',', default_value = "khata,rocksdb")]
        engines: Vec<String>,
    },
    /// A CQL node through the scylla driver: OPTIONS, INSERT, SELECT by key, newest 50.
    Cql(cql::CqlArgs),
    /// DynamoDB API workloads (PutItem, GetItem, Query newest 20) on khata and dynalite.
    Dynamo(dynamo::DynamoArgs),
    /// Run the workloads on one engine in this process (used by `storage`).
    #[command(hide = true)]
    StorageRun {
        #[command(flatten)]
        params: Params,
        #[arg(long)]
        engine: String,
    },
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let cli = Cli::parse();
    match cli.command {
        Cmd::Storage { params, engines } => run_storage(&params, &engines),
        Cmd::Cql(args) => cql::run(&args),
        Cmd::Dynamo(args) => dynamo::run(&args),
        Cmd::StorageRun { params, engine } => {
            let engine = open_engine(&engine, &params);
            workloads::run_all(engine.as_ref(), &params);
        }
    }
}

fn open_engine(name: &str, params: &Params) -> Box<dyn BenchEngine> {
    match name {
        "khata" => Box::new(khata::KhataEngine::new(params)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Box::new(rocks::RocksEngine::new(params)),
        other => {
            eprintln!(
                "engine {other} is not available in this build (rocksdb needs --features rocksdb)"
            );
            std::process::exit(2);
        }
    }
}

fn run_storage(params: &Params, engines: &[String]) {
    let exe = std::env::current_exe().expect("current executable");
    let mut results: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    for engine in engines {
        if engine == "rocksdb" && !cfg!(feature = "rocksdb") {
            eprintln!("skipping rocksdb: built without --features rocksdb");
            continue;
        }
        eprintln!("== {engine}");
        let out = Command::new(&exe)
            .arg("storage-run")
            .arg("--engine")
            .arg(engine)
            .args(params.to_args())
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("running the child benchmark");
        let text = String::from_utf8_lossy(&out.stdout);
        let figures: Vec<(String, f64)> = text
            .lines()
            .filter_map(|l| {
                let mut it = l.strip_prefix("RESULT ")?.split_whitespace();
                Some((it.next()?.to_string(), it.next()?.parse().ok()?))
            })
            .collect();
        if !out.status.success() {
            eprintln!("{engine} failed: {}", out.status);
        }
        results.push((engine.clone(), figures));
    }
    print_table(&results);
}

fn print_table(results: &[(String, Vec<(String, f64)>)]) {
    let mut names: Vec<String> = Vec::new();
    for (_, figs) in results {
        for (n, _) in figs {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    print!("{:<28}", "figure");
    for (e, _) in results {
        print!("{e:>16}");
    }
    if results.len() == 2 {
        print!("{:>10}", "ratio");
    }
    println!();
    for n in &names {
        print!("{n:<28}");
        let vals: Vec<Option<f64>> = results
            .iter()
            .map(|(_, f)| f.iter().find(|(k, _)| k == n).map(|(_, v)| *v))
            .collect();
        for v in &vals {
            match v {
                Some(v) => print!("{v:>16.1}"),
                None => print!("{:>16}", "-"),
            }
        }
        if let [Some(a), Some(b)] = vals.as_slice()
            && *b > 0.0
        {
            print!("{:>10.2}", a / b);
        }
        println!();
    }
}
