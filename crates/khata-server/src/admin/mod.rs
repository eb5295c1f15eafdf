//! The admin HTTP API (khata's JMX-and-nodetool) and the `khata admin` client of it.
//!
//! A node serves, on `listen_address:admin_port` (7070 by default):
//!
//! | endpoint | what |
//! |---|---|
//! | `GET /status` | the node: up/normal, address, host id, DC, rack, tokens, load, schema version |
//! | `GET /info` | uptime, memory (memtables, block cache, resident), load, commit-log settings, versions |
//! | `POST /flush[?keyspace=K[&table=T]]` | flush memtables to SSTables |
//! | `POST /compact[?keyspace=K[&table=T]]` | a major compaction, answered when it is done |
//! | `GET /tablestats[?keyspace=K[&table=T]]` | per table: SSTables, space, partitions, memtable, tombstones, largest partitions |
//! | `GET /compactionstats` | compactions pending (per table) and running (with progress in bytes) |
//! | `GET /tpstats` | compactions, flushes and CQL requests as Cassandra's thread pools: active, pending, completed, blocked |
//! | `GET /compactionthroughput` | `compaction_throughput` in force, bytes per second |
//! | `POST /compactionthroughput?bytes_per_second=N` | change it at once, until restart (0 = unthrottled) |
//! | `GET /traceprobability` | the share of CQL requests traced unasked (0 to 1) |
//! | `POST /traceprobability?probability=P` | change it, until restart (`nodetool settraceprobability`) |
//! | `GET /metrics` | Prometheus text: requests, latency histograms, compactions, tombstones, memory, connections |
//!
//! Answers are JSON ([`api`]), errors `{"error": "..."}` with 400 (a table without its
//! keyspace), 404 (an unknown keyspace or table, an unknown path) or 500 (storage failed).
//! Flush, compaction and statistics touch the disk, so they run on tokio's blocking threads;
//! admin-requested major compactions run one at a time.
//!
//! The API has no authentication: like Cassandra's JMX port by default, it is meant to listen
//! on a private address (the node's `listen_address`).
//!
//! The server is `axum` over hyper 1.x (HTTP/1 only). `khata admin` uses a small blocking
//! HTTP/1.1 client over `std::net::TcpStream` ([`client`]): it sends one request per
//! connection to one known host, which needs neither a runtime nor TLS.

pub mod api;
pub mod client;
mod handlers;
mod prometheus;
pub mod report;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::routing::{get, post};
use khata_coordinator::Coordinator;
use khata_cql::server::CqlServer;

use crate::config::Config;

/// What the handlers read: the node's parts and settings.
#[derive(Debug)]
pub struct AdminContext {
    pub coordinator: Arc<Coordinator>,
    pub cql: Arc<CqlServer>,
    pub config: Config,
    /// Where the CQL listener is bound (its port may be the OS's choice).
    pub cql_address: SocketAddr,
    /// When the node started (for uptime).
    pub started: Instant,
    /// Serializes admin-requested major compactions.
    compaction: tokio::sync::Mutex<()>,
}

impl AdminContext {
    pub fn new(
        coordinator: Arc<Coordinator>,
        cql: Arc<CqlServer>,
        config: Config,
        cql_address: SocketAddr,
        started: Instant,
    ) -> Self {
        AdminContext {
            coordinator,
            cql,
            config,
            cql_address,
            started,
            compaction: tokio::sync::Mutex::new(()),
        }
    }
}

/// The routes of the admin API.
pub fn router(context: Arc<AdminContext>) -> Router {
    Router::new()
        .route("/status", get(handlers::status))
        .route("/info", get(handlers::info))
        .route("/flush", post(handlers::flush))
        .route("/compact", post(handlers::compact))
        .route("/tablestats", get(handlers::tablestats))
        .route("/compactionstats", get(handlers::compactionstats))
        .route("/tpstats", get(handlers::tpstats))
        .route(
            "/compactionthroughput",
            get(handlers::compactionthroughput).post(handlers::set_compactionthroughput),
        )
        .route(
            "/traceprobability",
            get(handlers::traceprobability).post(handlers::set_traceprobability),
        )
        .route("/metrics", get(handlers::metrics))
        .fallback(handlers::unknown_path)
        .with_state(context)
}
