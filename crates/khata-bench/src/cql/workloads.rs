//! The CQL workloads through the `scylla` driver: the schema, loading the data sets, and one
//! request of each workload.
//!
//! Schema: keyspace `bench` (SimpleStrategy, RF 1); `kv (k bigint PRIMARY KEY, v blob)` for
//! insert and select; `wide (p bigint, c bigint, v blob, PRIMARY KEY (p, c)) WITH CLUSTERING
//! ORDER BY (c DESC)` for newest50, whose partitions hold `c = 0..partition_rows`, so the first
//! 50 rows of a partition are its newest.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use scylla::client::PoolSize;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::prepared::PreparedStatement;

use super::CqlArgs;
use super::load::{Operation, Rng};

/// Rows the newest50 query asks for.
const NEWEST: usize = 50;

/// Which request an [`Op`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A single-row INSERT into `kv`.
    Insert,
    /// A SELECT from `kv` by primary key.
    Select,
    /// The newest 50 rows of a partition of `wide`.
    Newest50,
}

impl Kind {
    /// The workload's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Insert => "insert",
            Kind::Select => "select",
            Kind::Newest50 => "newest50",
        }
    }
}

/// A driver session with the schema created and the statements prepared.
pub struct Bench {
    session: Session,
    insert: PreparedStatement,
    select: PreparedStatement,
    insert_wide: PreparedStatement,
    newest: PreparedStatement,
    value: Vec<u8>,
    rows: u64,
    partitions: u64,
}

impl std::fmt::Debug for Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench").field("rows", &self.rows).finish()
    }
}

impl Bench {
    /// Connects with `args.connections` connections, creates the schema if missing and
    /// prepares the statements. Exits the process with a message on failure.
    pub async fn connect(address: SocketAddr, args: &CqlArgs) -> Bench {
        let connections = NonZeroUsize::new(args.connections.max(1)).unwrap_or(NonZeroUsize::MIN);
        let session = SessionBuilder::new()
            .known_node_addr(address)
            .pool_size(PoolSize::PerHost(connections))
            .build()
            .await
            .unwrap_or_else(|e| fail(&format!("the driver could not connect to {address}: {e}")));
        for ddl in [
            "CREATE KEYSPACE IF NOT EXISTS bench WITH replication = \
             {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE IF NOT EXISTS bench.kv (k bigint PRIMARY KEY, v blob)",
            "CREATE TABLE IF NOT EXISTS bench.wide (p bigint, c bigint, v blob, \
             PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)",
        ] {
            session
                .query_unpaged(ddl, &[])
                .await
                .unwrap_or_else(|e| fail(&format!("{ddl}: {e}")));
        }
        let prepare = async |text: &str| {
            session
                .prepare(text)
                .await
                .unwrap_or_else(|e| fail(&format!("preparing {text}: {e}")))
        };
        let insert = prepare("INSERT INTO bench.kv (k, v) VALUES (?, ?)").await;
        let select = prepare("SELECT v FROM bench.kv WHERE k = ?").await;
        let insert_wide = prepare("INSERT INTO bench.wide (p, c, v) VALUES (?, ?, ?)").await;
        let newest = prepare(&format!(
            "SELECT c, v FROM bench.wide WHERE p = ? LIMIT {NEWEST}"
        ))
        .await;
        Bench {
            session,
            insert,
            select,
            insert_wide,
            newest,
            value: (0..args.value_size).map(|i| (i * 31 % 251) as u8).collect(),
            rows: args.rows.max(1),
            partitions: args.partitions.max(1),
        }
    }

    /// An operation of `kind` on this session.
    pub fn op(self: &Arc<Self>, kind: Kind) -> Arc<Op> {
        Arc::new(Op {
            bench: Arc::clone(self),
            kind,
        })
    }

    /// Loads `kv` (rows `0..rows`) when `kv` is wanted and `wide` (`partitions` x
    /// `partition_rows`) when `wide` is, with `args.concurrency` inserts in flight, and prints
    /// the load rate.
    pub async fn load(self: &Arc<Self>, args: &CqlArgs, kv: bool, wide: bool) {
        if kv {
            self.load_table(args, "kv", args.rows, |b, i| {
                Box::pin(async move {
                    b.session
                        .execute_unpaged(&b.insert, (i as i64, &b.value[..]))
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
            })
            .await;
        }
        if wide {
            let per = args.partition_rows.max(1);
            self.load_table(args, "wide", args.partitions * per, |b, i| {
                Box::pin(async move {
                    let (p, c) = ((i % b.partitions) as i64, (i / b.partitions) as i64);
                    b.session
                        .execute_unpaged(&b.insert_wide, (p, c, &b.value[..]))
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
            })
            .await;
        }
    }

    /// Inserts `count` rows, row `i` written by `insert(self, i)`, from `args.concurrency`
    /// tasks pulling row numbers from a shared counter.
    async fn load_table(
        self: &Arc<Self>,
        args: &CqlArgs,
        table: &str,
        count: u64,
        insert: fn(Arc<Bench>, u64) -> InsertFuture,
    ) {
        let began = Instant::now();
        let next = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..args.concurrency.max(1) {
            let (bench, next) = (Arc::clone(self), Arc::clone(&next));
            tasks.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return Ok(());
                    }
                    insert(Arc::clone(&bench), i).await?;
                }
            }));
        }
        for task in tasks {
            let result: Result<(), String> = task.await.expect("load task");
            if let Err(e) = result {
                fail(&format!("loading bench.{table}: {e}"));
            }
        }
        let seconds = began.elapsed().as_secs_f64();
        eprintln!(
            "loaded {count} rows into bench.{table} in {seconds:.1} s ({:.0} rows/s)",
            count as f64 / seconds
        );
    }
}

/// The future of one load insert.
type InsertFuture = std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// One workload's request on a shared [`Bench`].
#[derive(Debug)]
pub struct Op {
    bench: Arc<Bench>,
    kind: Kind,
}

impl Operation for Op {
    async fn run(&self, rng: &mut Rng) -> Result<(), String> {
        let b = &self.bench;
        match self.kind {
            Kind::Insert => {
                let k = rng.below(b.rows) as i64;
                b.session
                    .execute_unpaged(&b.insert, (k, &b.value[..]))
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Kind::Select => {
                let k = rng.below(b.rows) as i64;
                let result = b
                    .session
                    .execute_unpaged(&b.select, (k,))
                    .await
                    .map_err(|e| e.to_string())?;
                let rows = result.into_rows_result().map_err(|e| e.to_string())?;
                // Read the value as an application would.
                let (v,) = rows
                    .single_row::<(&[u8],)>()
                    .map_err(|e| format!("key {k}: {e}"))?;
                if v.len() != b.value.len() {
                    return Err(format!("key {k}: a value of {} bytes", v.len()));
                }
            }
            Kind::Newest50 => {
                let p = rng.below(b.partitions) as i64;
                let result = b
                    .session
                    .execute_unpaged(&b.newest, (p,))
                    .await
                    .map_err(|e| e.to_string())?;
                let rows = result.into_rows_result().map_err(|e| e.to_string())?;
                let mut count = 0;
                for row in rows.rows::<(i64, &[u8])>().map_err(|e| e.to_string())? {
                    row.map_err(|e| e.to_string())?;
                    count += 1;
                }
                if count != NEWEST {
                    return Err(format!("partition {p}: {count} rows"));
                }
            }
        }
        Ok(())
    }
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1);
}
