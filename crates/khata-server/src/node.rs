//! A running node: the replica (storage and schema), the coordinator, and the listeners of
//! the front ends, assembled from a [`Config`].
//!
//! Start-up opens the data directory (replaying the commit log), then binds the CQL listener
//! on `listen_address:native_transport_port`, the DynamoDB API (`khata_dynamo::http`) on
//! `listen_address:dynamo_port` and the admin HTTP API (`crate::admin`) on
//! `listen_address:admin_port`. Shutdown stops accepting, lets connections, DynamoDB and
//! admin requests finish what they have in flight (up to [`SHUTDOWN_GRACE`]), then flushes
//! the memtables and closes the engine, so a clean restart replays nothing.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use khata_coordinator::{Coordinator, CoordinatorConfig};
use khata_cql::server::{CqlServer, CqlServerConfig};
use khata_dynamo::auth::AccessKeys;
use khata_dynamo::expirer::Expirer;
use khata_dynamo::http::{DynamoConfig, Endpoint};
use khata_env::{RealFs, SystemClock};
use khata_replica::{NodeInfo, Replica, ReplicaConfig};
use khata_storage::EngineConfig;
use khata_storage::commitlog::{CommitLogConfig, SyncMode};
use khata_types::token::Token;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{info, warn};
use uuid::Uuid;

use crate::admin::AdminContext;
use crate::config::{CommitLogSync, Config};
use crate::http_server::HttpServer;
use crate::request_threads::RequestThreads;

/// How long shutdown waits for connections to finish the requests they have in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("cannot open the data directory {dir}: {source}")]
    Storage {
        dir: String,
        source: khata_replica::ReplicaError,
    },
    #[error("cannot listen on {address} ({what}): {source}")]
    Listen {
        what: &'static str,
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("start-up failed: {0}")]
    Internal(String),
    #[error(
        "the data directory {dir} is in use by another khata process (it holds {dir}/{LOCK_FILE}); stop it or choose another --data-dir"
    )]
    DataDirInUse { dir: String },
    #[error("cannot lock the data directory {dir}: {source}")]
    Lock { dir: String, source: std::io::Error },
}

/// The file in the data directory a running node holds an exclusive lock on.
pub const LOCK_FILE: &str = "khata.lock";

/// The data directory's lock, held from start to shutdown: a second node started on the same
/// directory is refused instead of replaying, compacting and deleting files the first one is
/// writing (which lost acknowledged writes). An advisory `flock`, so it goes with the process
/// however it ends; the file holds the owner's process id for the operator.
#[derive(Debug)]
struct DataDirLock {
    _file: std::fs::File,
}

fn lock_data_dir(dir: &std::path::Path) -> Result<DataDirLock, NodeError> {
    let shown = dir.display().to_string();
    let failed = |source| NodeError::Lock {
        dir: shown.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(failed)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(NodeError::DataDirInUse { dir: shown });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(failed(e)),
    }
    use std::io::Write;
    file.set_len(0).map_err(failed)?;
    writeln!(file, "{}", std::process::id()).map_err(failed)?;
    Ok(DataDirLock { _file: file })
}

/// The storage engine's settings from the node's.
pub fn engine_config(config: &Config) -> EngineConfig {
    let mut engine = EngineConfig::new(&config.data_dir);
    let sync = match config.commitlog_sync {
        CommitLogSync::Periodic => SyncMode::Periodic {
            period: config.commitlog_sync_period,
        },
        CommitLogSync::Group => SyncMode::Group {
            window: config.commitlog_sync_group_window,
        },
        CommitLogSync::Batch => SyncMode::Batch,
    };
    let defaults = CommitLogConfig::default();
    engine.commitlog = CommitLogConfig {
        sync,
        segment_size_bytes: config.commitlog_segment_size_bytes,
        // As Cassandra: the largest mutation is half a segment.
        max_record_size_bytes: u32::try_from(config.commitlog_segment_size_bytes / 2)
            .unwrap_or(defaults.max_record_size_bytes),
    };
    engine.memtable_flush_size_bytes = config.memtable_flush_size_bytes as usize;
    engine.memtable_space_bytes = config.memtable_heap_space_bytes as usize;
    engine.commitlog_total_space_bytes = config.commitlog_total_space_bytes;
    engine.block_cache_bytes = config.file_cache_size_bytes as usize;
    engine.compaction_throughput_bytes_per_second = config.compaction_throughput_bytes_per_second;
    engine.concurrent_compactors = config.concurrent_compactors as usize;
    engine.tombstone_warn_threshold = config.tombstone_warn_threshold as usize;
    engine.tombstone_failure_threshold = config.tombstone_failure_threshold as usize;
    engine
}

/// `num_tokens` random tokens for a new node.
fn random_tokens(n: u32) -> Vec<Token> {
    let mut tokens: Vec<Token> = (0..n.max(1))
        .map(|_| {
            let (hi, _) = Uuid::new_v4().as_u64_pair();
            // i64::MIN is not a valid token (Murmur3Partitioner's minimum is reserved).
            Token((hi as i64).max(i64::MIN + 1))
        })
        .collect();
    tokens.sort();
    tokens.dedup();
    tokens
}

/// A running node.
#[derive(Debug)]
pub struct Node {
    replica: Arc<Replica>,
    coordinator: Arc<Coordinator>,
    cql: Arc<CqlServer>,
    cql_address: SocketAddr,
    dynamo: HttpServer,
    /// Deletes expired DynamoDB items every `ttl_scan_period_seconds`.
    expirer: Expirer,
    admin: HttpServer,
    stop: watch::Sender<bool>,
    /// The CQL accept loop and the size-estimates recorder: they end when `stop` is sent.
    accept_tasks: Vec<JoinHandle<()>>,
    /// Released when the node is dropped, after shutdown has closed the engine.
    _lock: DataDirLock,
}

impl Node {
    /// Open the data directory and start serving.
    pub async fn start(config: &Config) -> Result<Node, NodeError> {
        let started = Instant::now();
        let lock = lock_data_dir(&config.data_dir)?;
        let replica_config = ReplicaConfig {
            engine: {
                let mut e = engine_config(config);
                e.clock = Arc::new(SystemClock);
                e
            },
            node: NodeInfo {
                cluster_name: config.cluster_name.clone(),
                data_center: config.dc.clone(),
                rack: config.rack.clone(),
                listen_address: config.listen_address,
                internode_port: config.storage_port,
                rpc_address: config.listen_address,
                native_port: config.native_transport_port,
            },
            new_host_id: Uuid::new_v4(),
            new_tokens: random_tokens(config.num_tokens),
        };
        let dir = config.data_dir.display().to_string();
        let replica =
            tokio::task::spawn_blocking(move || Replica::open(Arc::new(RealFs), replica_config))
                .await
                .map_err(|e| NodeError::Internal(e.to_string()))?
                .map_err(|source| NodeError::Storage { dir, source })?;
        replica.set_settings(config.settings());
        let replica = Arc::new(replica);
        let coordinator = Arc::new(Coordinator::new(
            replica.clone(),
            CoordinatorConfig {
                read_request_timeout: config.read_request_timeout,
                write_request_timeout: config.write_request_timeout,
                range_request_timeout: config.range_request_timeout,
                truncate_request_timeout: config.request_timeout.max(Duration::from_secs(60)),
                concurrent_reads: config.concurrent_reads as usize,
            },
        ));
        let cql_server = CqlServer::new(
            coordinator.clone(),
            CqlServerConfig {
                max_frame_size_bytes: config.native_transport_max_frame_size_bytes as usize,
                batch_size_warn_threshold_bytes: config.batch_size_warn_threshold_bytes as usize,
                batch_size_fail_threshold_bytes: config.batch_size_fail_threshold_bytes as usize,
                default_gc_grace_seconds: config.gc_grace_seconds,
                default_keyspace_rf: config.default_keyspace_rf,
                local_address: config.listen_address,
            },
        );
        // `system_views.clients` lists the CQL server's clients (a weak reference: the
        // server holds the replica through its coordinator).
        let clients_of = Arc::downgrade(&cql_server);
        replica.set_clients_source(Arc::new(move || {
            clients_of
                .upgrade()
                .map(|c| c.clients())
                .unwrap_or_default()
        }));
        let requests_of = Arc::downgrade(&cql_server);
        replica.set_pools_source(Arc::new(move || {
            requests_of
                .upgrade()
                .map(|c| vec![c.request_pool()])
                .unwrap_or_default()
        }));
        let cql = cql_server;
        let address = config.cql_address();
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| NodeError::Listen {
                what: "CQL",
                address,
                source,
            })?;
        let cql_address = listener.local_addr().map_err(|source| NodeError::Listen {
            what: "CQL",
            address,
            source,
        })?;
        let (stop, stopped) = watch::channel(false);
        let max_connections = config
            .native_transport_max_concurrent_connections
            .map(|n| n as usize);
        let dynamo_address = config.dynamo_address();
        let dynamo_listen_error = |source| NodeError::Listen {
            what: "DynamoDB",
            address: dynamo_address,
            source,
        };
        let dynamo_listener = TcpListener::bind(dynamo_address)
            .await
            .map_err(dynamo_listen_error)?;
        let endpoint = Endpoint::new(
            coordinator.clone(),
            DynamoConfig {
                access_keys: AccessKeys::new(config.dynamo_access_keys.clone()),
                item_collection_size_limit_bytes: config.dynamo_item_collection_size_limit_bytes,
                ..DynamoConfig::default()
            },
        );
        let operations = endpoint.operations();
        let endpoint = Arc::new(endpoint);
        let dynamo = HttpServer::start_connections(
            "DynamoDB endpoint",
            dynamo_listener,
            move |stream, closing| khata_dynamo::http1::serve(stream, endpoint.clone(), closing),
            RequestThreads::per_core("khata-dynamo").map_err(dynamo_listen_error)?,
        )
        .map_err(dynamo_listen_error)?;
        let expirer = Expirer::start(
            operations,
            Duration::from_secs(u64::from(config.ttl_scan_period_seconds)),
        );
        let admin_address = config.admin_address();
        let admin_listener =
            TcpListener::bind(admin_address)
                .await
                .map_err(|source| NodeError::Listen {
                    what: "admin",
                    address: admin_address,
                    source,
                })?;
        let admin_context = AdminContext::new(
            coordinator.clone(),
            cql.clone(),
            config.clone(),
            cql_address,
            started,
        );
        let admin = HttpServer::start(
            "admin API",
            admin_listener,
            crate::admin::router(Arc::new(admin_context)),
        )
        .map_err(|source| NodeError::Listen {
            what: "admin",
            address: admin_address,
            source,
        })?;
        let estimates = tokio::spawn(record_size_estimates(
            replica.clone(),
            config.size_estimates_recording_interval,
            stopped.clone(),
        ));
        let accept = tokio::spawn(accept_cql(listener, cql.clone(), stopped, max_connections));
        info!(
            %cql_address,
            dynamo_address = %dynamo.address(),
            dynamo_auth = !config.dynamo_access_keys.is_empty(),
            admin_address = %admin.address(),
            host_id = %replica.host_id(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "node started"
        );
        Ok(Node {
            replica,
            coordinator,
            cql,
            cql_address,
            dynamo,
            expirer,
            admin,
            stop,
            accept_tasks: vec![accept, estimates],
            _lock: lock,
        })
    }

    /// Where the CQL listener is (its port is the OS's choice when configured as 0).
    pub fn cql_address(&self) -> SocketAddr {
        self.cql_address
    }

    /// Where the DynamoDB API is (its port is the OS's choice when configured as 0).
    pub fn dynamo_address(&self) -> SocketAddr {
        self.dynamo.address()
    }

    /// Where the admin HTTP API is (its port is the OS's choice when configured as 0).
    pub fn admin_address(&self) -> SocketAddr {
        self.admin.address()
    }

    pub fn coordinator(&self) -> &Arc<Coordinator> {
        &self.coordinator
    }

    pub fn replica(&self) -> &Arc<Replica> {
        &self.replica
    }

    /// Stop accepting, let open connections finish, flush and close the engine.
    pub async fn shutdown(self) {
        info!("shutting down: no new connections");
        let _ = self.stop.send(true);
        for t in self.accept_tasks {
            let _ = t.await;
        }
        // The TTL expirer ends its delete in progress; then DynamoDB requests in flight finish
        // and idle keep-alive connections close.
        self.expirer.stop().await;
        self.dynamo.shutdown(SHUTDOWN_GRACE).await;
        // Admin requests (a flush, a major compaction) end before the engine closes.
        self.admin.shutdown(SHUTDOWN_GRACE).await;
        // Connections finish what they are doing and close.
        self.cql.stop();
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        while self.cql.open_connections() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if self.cql.open_connections() > 0 {
            warn!(
                connections = self.cql.open_connections(),
                "closing with connections still open"
            );
        }
        let replica = self.replica.clone();
        match tokio::task::spawn_blocking(move || replica.close()).await {
            Ok(Ok(())) => info!("memtables flushed; shut down cleanly"),
            Ok(Err(e)) => warn!(error = %e, "flush at shutdown failed; the commit log will replay"),
            Err(e) => warn!(error = %e, "flush at shutdown failed; the commit log will replay"),
        }
    }
}

/// Record `system.size_estimates` now and every `interval` until the node stops.
async fn record_size_estimates(
    replica: Arc<Replica>,
    interval: Duration,
    mut stopped: watch::Receiver<bool>,
) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stopped.wait_for(|stop| *stop) => return,
        }
        let replica = replica.clone();
        match tokio::task::spawn_blocking(move || replica.record_size_estimates()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => warn!(error = %e, "recording size estimates failed"),
            Err(e) => warn!(error = %e, "recording size estimates failed"),
        }
    }
}

async fn accept_cql(
    listener: TcpListener,
    cql: Arc<CqlServer>,
    mut stopped: watch::Receiver<bool>,
    max_connections: Option<usize>,
) {
    loop {
        tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    if max_connections.is_some_and(|m| cql.open_connections() >= m) {
                        warn!(%peer, "connection refused: native_transport_max_concurrent_connections reached");
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let cql = cql.clone();
                    tokio::spawn(cql.serve_tcp(stream));
                }
                Err(e) => {
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}
