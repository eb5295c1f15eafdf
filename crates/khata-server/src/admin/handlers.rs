//! The admin API's endpoints: each reads the node through [`AdminContext`] and answers JSON
//! (or Prometheus text for `/metrics`). Work that touches the disk or walks every SSTable runs
//! on a blocking thread.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use khata_replica::{Replica, Schema};
use khata_types::latency::LatencySnapshot;
use uuid::Uuid;

use super::AdminContext;
use super::api::{
    ApiError, CommitLogInfo, CompactReport, CompactionStats, CompactionThroughput, CountSummary,
    FlushReport, Info, LargePartition, LatencySummary, NodeState, NodeStatus, PendingCompactions,
    PoolStats, RunningCompaction, Scope, Status, TableCompaction, TableName, TableStats,
    TableStatsReport, TpStats, TraceProbability,
};
use super::prometheus::{self, MetricsInput};

/// Why an admin request failed; each maps to an HTTP status and `{"error": ...}`.
#[derive(Debug)]
pub(super) enum AdminError {
    /// The request itself is wrong (400).
    BadRequest(String),
    /// An unknown keyspace, table or path (404).
    NotFound(String),
    /// The node failed (500).
    Internal(String),
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let (status, error) = match self {
            AdminError::BadRequest(e) => (StatusCode::BAD_REQUEST, e),
            AdminError::NotFound(e) => (StatusCode::NOT_FOUND, e),
            AdminError::Internal(e) => (StatusCode::INTERNAL_SERVER_ERROR, e),
        };
        (status, Json(ApiError { error })).into_response()
    }
}

type Answer<T> = Result<Json<T>, AdminError>;

/// A table the request acts on.
#[derive(Clone, Debug)]
struct Target {
    keyspace: String,
    table: String,
    id: Uuid,
}

/// The tables a scope names, in keyspace then table order.
fn resolve(schema: &Schema, scope: &Scope) -> Result<Vec<Target>, AdminError> {
    let keyspaces: Vec<_> = match (&scope.keyspace, &scope.table) {
        (None, Some(table)) => {
            return Err(AdminError::BadRequest(format!(
                "table {table} given without its keyspace"
            )));
        }
        (None, None) => schema.keyspaces.values().collect(),
        (Some(name), _) => match schema.keyspaces.get(name) {
            Some(ks) => vec![ks],
            None => {
                return Err(AdminError::NotFound(format!(
                    "keyspace {name} does not exist"
                )));
            }
        },
    };
    let mut targets = Vec::new();
    for ks in keyspaces {
        for (name, t) in &ks.tables {
            if scope.table.as_ref().is_none_or(|wanted| wanted == name) {
                targets.push(Target {
                    keyspace: ks.def.name.clone(),
                    table: name.clone(),
                    id: t.def.id,
                });
            }
        }
    }
    if let (Some(ks), Some(table)) = (&scope.keyspace, &scope.table)
        && targets.is_empty()
    {
        return Err(AdminError::NotFound(format!(
            "table {ks}.{table} does not exist"
        )));
    }
    Ok(targets)
}

/// Run disk work on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AdminError> + Send + 'static,
) -> Result<T, AdminError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AdminError::Internal(format!("admin task failed: {e}")))?
}

fn storage_error(target: &Target, e: impl std::fmt::Display) -> AdminError {
    AdminError::Internal(format!("{}.{}: {e}", target.keyspace, target.table))
}

/// Statistics of each target; a table dropped meanwhile is left out.
fn table_stats(
    replica: &Replica,
    targets: &[Target],
) -> Result<Vec<(Target, khata_storage::TableStats)>, AdminError> {
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        match replica.engine().table_stats(t.id) {
            Ok(stats) => out.push((t.clone(), stats)),
            Err(khata_storage::StorageError::UnknownTable(_)) => {}
            Err(e) => return Err(storage_error(t, e)),
        }
    }
    Ok(out)
}

/// Every table's statistics (for the node-wide figures).
async fn all_table_stats(
    ctx: &AdminContext,
) -> Result<Vec<(Target, khata_storage::TableStats)>, AdminError> {
    let replica = ctx.coordinator.replica().clone();
    blocking(move || {
        let targets = resolve(&replica.schema(), &Scope::default())?;
        table_stats(&replica, &targets)
    })
    .await
}

fn load_bytes(stats: &[(Target, khata_storage::TableStats)]) -> u64 {
    stats.iter().map(|(_, s)| s.live_data_bytes).sum()
}

fn pending_compactions(stats: &[(Target, khata_storage::TableStats)]) -> usize {
    stats.iter().map(|(_, s)| s.pending_compactions).sum()
}

pub(super) async fn status(State(ctx): State<Arc<AdminContext>>) -> Answer<Status> {
    let stats = all_table_stats(&ctx).await?;
    let replica = ctx.coordinator.replica();
    let node = replica.node();
    Ok(Json(Status {
        cluster_name: node.cluster_name.clone(),
        nodes: vec![NodeStatus {
            address: node.listen_address,
            up: true,
            state: NodeState::Normal,
            host_id: replica.host_id(),
            data_center: node.data_center.clone(),
            rack: node.rack.clone(),
            tokens: replica.tokens().len(),
            load_bytes: load_bytes(&stats),
            schema_version: replica.schema().version,
        }],
    }))
}

pub(super) async fn info(State(ctx): State<Arc<AdminContext>>) -> Answer<Info> {
    let stats = all_table_stats(&ctx).await?;
    let replica = ctx.coordinator.replica();
    let engine = replica.engine();
    let node = replica.node();
    let config = &ctx.config;
    Ok(Json(Info {
        host_id: replica.host_id(),
        cluster_name: node.cluster_name.clone(),
        data_center: node.data_center.clone(),
        rack: node.rack.clone(),
        release_version: khata_replica::replica::RELEASE_VERSION.to_owned(),
        khata_version: env!("CARGO_PKG_VERSION").to_owned(),
        uptime_seconds: ctx.started.elapsed().as_secs(),
        native_transport_address: ctx.cql_address,
        cql_connections: ctx.cql.open_connections(),
        tokens: replica.tokens().len(),
        schema_version: replica.schema().version,
        data_dir: config.data_dir.display().to_string(),
        load_bytes: load_bytes(&stats),
        resident_memory_bytes: resident_memory_bytes(),
        memtable_bytes: engine.memtable_bytes() as u64,
        memtable_space_bytes: config.memtable_heap_space_bytes,
        block_cache_bytes: engine.block_cache_bytes(),
        block_cache_capacity_bytes: config.file_cache_size_bytes,
        pending_compactions: pending_compactions(&stats),
        compactions_completed: engine.compactions_completed(),
        commitlog: CommitLogInfo {
            sync: config.commitlog_sync.to_string(),
            sync_period_ms: millis(config.commitlog_sync_period),
            sync_group_window_ms: millis(config.commitlog_sync_group_window),
            segment_size_bytes: config.commitlog_segment_size_bytes,
        },
    }))
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The process's resident set size, from `/proc/self/status` (Linux); `None` elsewhere.
pub(super) fn resident_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

pub(super) async fn flush(
    State(ctx): State<Arc<AdminContext>>,
    Query(scope): Query<Scope>,
) -> Answer<FlushReport> {
    let replica = ctx.coordinator.replica().clone();
    let targets = resolve(&replica.schema(), &scope)?;
    let flushed = blocking(move || {
        let mut flushed = Vec::with_capacity(targets.len());
        for t in targets {
            match replica.engine().flush(t.id) {
                Ok(()) => flushed.push(TableName {
                    keyspace: t.keyspace,
                    table: t.table,
                }),
                Err(khata_storage::StorageError::UnknownTable(_)) => {}
                Err(e) => return Err(storage_error(&t, e)),
            }
        }
        Ok(flushed)
    })
    .await?;
    Ok(Json(FlushReport { tables: flushed }))
}

pub(super) async fn compact(
    State(ctx): State<Arc<AdminContext>>,
    Query(scope): Query<Scope>,
) -> Answer<CompactReport> {
    let replica = ctx.coordinator.replica().clone();
    let targets = resolve(&replica.schema(), &scope)?;
    let _one_at_a_time = ctx.compaction.lock().await;
    let tables = blocking(move || {
        let engine = replica.engine();
        let mut tables = Vec::with_capacity(targets.len());
        for t in targets {
            let before = match engine.sstables(t.id) {
                Ok(s) => s.len(),
                Err(khata_storage::StorageError::UnknownTable(_)) => continue,
                Err(e) => return Err(storage_error(&t, e)),
            };
            let outcomes = engine
                .compact_major(t.id)
                .map_err(|e| storage_error(&t, e))?;
            let after = engine
                .sstables(t.id)
                .map_err(|e| storage_error(&t, e))?
                .len();
            tables.push(TableCompaction {
                tasks: outcomes.len(),
                sstables_before: before,
                sstables_after: after,
                bytes_read: outcomes.iter().map(|o| o.bytes_read).sum(),
                bytes_written: outcomes.iter().map(|o| o.bytes_written).sum(),
                tombstones_purged: outcomes.iter().map(|o| o.tombstones_purged).sum(),
                keyspace: t.keyspace,
                table: t.table,
            });
        }
        Ok(tables)
    })
    .await?;
    Ok(Json(CompactReport { tables }))
}

pub(super) async fn compactionstats(
    State(ctx): State<Arc<AdminContext>>,
) -> Answer<CompactionStats> {
    let stats = all_table_stats(&ctx).await?;
    let pending: Vec<PendingCompactions> = stats
        .iter()
        .filter(|(_, s)| s.pending_compactions > 0)
        .map(|(t, s)| PendingCompactions {
            keyspace: t.keyspace.clone(),
            table: t.table.clone(),
            tasks: s.pending_compactions,
        })
        .collect();
    let running = ctx
        .coordinator
        .replica()
        .engine()
        .sstable_tasks()
        .into_iter()
        .map(|t| RunningCompaction {
            id: t.id,
            kind: t.kind.to_string(),
            keyspace: t.keyspace,
            table: t.table_name,
            completed: t.progress,
            total: t.total,
            unit: t.unit.to_string(),
        })
        .collect();
    Ok(Json(CompactionStats {
        throughput_bytes_per_second: ctx.coordinator.replica().engine().compaction_throughput(),
        pending_tasks: pending_compactions(&stats),
        pending,
        running,
    }))
}

pub(super) async fn tpstats(State(ctx): State<Arc<AdminContext>>) -> Answer<TpStats> {
    let replica = ctx.coordinator.replica().clone();
    let pools = blocking(move || Ok(replica.pools())).await?;
    Ok(Json(TpStats {
        pools: pools
            .into_iter()
            .map(|p| PoolStats {
                name: p.name,
                active: p.active,
                active_limit: p.active_limit,
                pending: p.pending,
                completed: p.completed,
                blocked: p.blocked,
                blocked_all_time: p.blocked_all_time,
            })
            .collect(),
    }))
}

pub(super) async fn compactionthroughput(
    State(ctx): State<Arc<AdminContext>>,
) -> Answer<CompactionThroughput> {
    Ok(Json(CompactionThroughput {
        bytes_per_second: ctx.coordinator.replica().engine().compaction_throughput(),
    }))
}

/// The query of `POST /compactionthroughput`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ThroughputQuery {
    bytes_per_second: Option<String>,
}

/// `nodetool setcompactionthroughput`: the new rate applies at once, running compactions
/// included, until the node restarts (then `compaction_throughput` of the configuration
/// applies again, as in Cassandra). `system_views.settings` shows it.
pub(super) async fn set_compactionthroughput(
    State(ctx): State<Arc<AdminContext>>,
    Query(query): Query<ThroughputQuery>,
) -> Answer<CompactionThroughput> {
    let given = query.bytes_per_second.ok_or_else(|| {
        AdminError::BadRequest("POST /compactionthroughput needs ?bytes_per_second=N".into())
    })?;
    let bytes_per_second = given
        .parse::<u64>()
        .ok()
        .filter(|&n| i64::try_from(n).is_ok_and(|n| n < i64::MAX))
        .ok_or_else(|| {
            AdminError::BadRequest(format!(
                "bytes_per_second must be a whole number from 0 (unthrottled) to {}, not `{given}`",
                i64::MAX - 1
            ))
        })?;
    let replica = ctx.coordinator.replica();
    replica.engine().set_compaction_throughput(bytes_per_second);
    let mut config = ctx.config.clone();
    config.compaction_throughput_bytes_per_second = bytes_per_second;
    replica.set_settings(config.settings());
    tracing::info!(bytes_per_second, "compaction throughput changed");
    Ok(Json(CompactionThroughput { bytes_per_second }))
}

pub(super) async fn traceprobability(
    State(ctx): State<Arc<AdminContext>>,
) -> Answer<TraceProbability> {
    Ok(Json(TraceProbability {
        probability: ctx.coordinator.trace_probability(),
    }))
}

/// The query of `POST /traceprobability`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ProbabilityQuery {
    probability: Option<String>,
}

/// `nodetool settraceprobability`: this share of CQL requests is traced from now on, until
/// the node restarts, into `system_traces` as if asked (their answers carry no tracing id).
pub(super) async fn set_traceprobability(
    State(ctx): State<Arc<AdminContext>>,
    Query(query): Query<ProbabilityQuery>,
) -> Answer<TraceProbability> {
    let given = query.probability.ok_or_else(|| {
        AdminError::BadRequest("POST /traceprobability needs ?probability=P".into())
    })?;
    let refused = || {
        AdminError::BadRequest(format!(
            "Trace probability must be between 0 and 1, not `{given}`"
        ))
    };
    let probability = given.parse::<f64>().map_err(|_| refused())?;
    ctx.coordinator
        .set_trace_probability(probability)
        .map_err(|_| refused())?;
    tracing::info!(probability, "trace probability changed");
    Ok(Json(TraceProbability { probability }))
}

pub(super) async fn tablestats(
    State(ctx): State<Arc<AdminContext>>,
    Query(scope): Query<Scope>,
) -> Answer<TableStatsReport> {
    let replica = ctx.coordinator.replica().clone();
    let targets = resolve(&replica.schema(), &scope)?;
    let engine = ctx.coordinator.replica().engine();
    let stats = blocking(move || table_stats(&replica, &targets)).await?;
    let tables = stats
        .into_iter()
        .map(|(t, s)| {
            // A table dropped meanwhile: nothing recorded.
            let h = engine.table_histograms(t.id).unwrap_or_default();
            TableStats {
                local_read: summary(&h.read),
                local_write: summary(&h.write),
                local_scan: summary(&h.scan),
                rows_per_read: counts(&h.rows_per_read),
                tombstones_per_read: counts(&h.tombstones_per_read),
                keyspace: t.keyspace,
                table: t.table,
                id: t.id,
                sstable_count: s.sstable_count,
                sstables_per_level: s.sstables_per_level,
                space_used_bytes: s.live_data_bytes,
                partitions_estimate: s.partitions_estimate,
                memtable_bytes: s.memtable_bytes as u64,
                memtable_partitions: s.memtable_partitions,
                tombstones: s.tombstones,
                pending_compactions: s.pending_compactions,
                partition_reads: s.partition_reads,
                sstables_read: s.sstables_read,
                largest_partitions: s
                    .largest_partitions
                    .iter()
                    .map(|(key, size)| LargePartition {
                        key_hex: hex(key),
                        size_bytes: *size,
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Json(TableStatsReport { tables }))
}

/// A latency snapshot in `/tablestats`' terms.
fn summary(l: &LatencySnapshot) -> LatencySummary {
    let ms = |micros: u64| micros as f64 / 1000.0;
    let mean = l.mean_micros();
    LatencySummary {
        count: l.count,
        mean_ms: (!mean.is_nan()).then_some(mean / 1000.0),
        p50_ms: ms(l.quantile_micros(0.5)),
        p99_ms: ms(l.quantile_micros(0.99)),
        max_ms: ms(l.max_micros),
        per_second: l.per_second(),
    }
}

/// A histogram of counts in `/tablestats`' terms.
fn counts(h: &LatencySnapshot) -> CountSummary {
    let mean = h.mean_micros();
    CountSummary {
        count: h.count,
        mean: (!mean.is_nan()).then_some(mean),
        p50: h.quantile_micros(0.5),
        p99: h.quantile_micros(0.99),
        max: h.max_micros,
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub(super) async fn metrics(State(ctx): State<Arc<AdminContext>>) -> Result<Response, AdminError> {
    let stats = all_table_stats(&ctx).await?;
    let engine = ctx.coordinator.replica().engine();
    let mut table_latencies = Vec::new();
    for (t, _) in &stats {
        let local = engine.table_histograms(t.id).ok();
        let coordinated = ctx.coordinator.metrics().table_latency(t.id);
        let ops = [
            ("coordinator_read", coordinated.as_ref().map(|c| &c.read)),
            ("coordinator_scan", coordinated.as_ref().map(|c| &c.scan)),
            ("coordinator_write", coordinated.as_ref().map(|c| &c.write)),
            ("local_read", local.as_ref().map(|l| &l.read)),
            ("local_scan", local.as_ref().map(|l| &l.scan)),
            ("local_write", local.as_ref().map(|l| &l.write)),
        ];
        for (op, snapshot) in ops {
            if let Some(s) = snapshot.filter(|s| s.count > 0) {
                table_latencies.push((t.keyspace.as_str(), t.table.as_str(), op, s.clone()));
            }
        }
    }
    let input = MetricsInput {
        table_latencies,
        coordinator: ctx.coordinator.metrics().snapshot(),
        tables: stats
            .iter()
            .map(|(t, s)| (t.keyspace.as_str(), t.table.as_str(), s))
            .collect(),
        memtable_bytes: engine.memtable_bytes() as u64,
        block_cache_bytes: engine.block_cache_bytes(),
        compactions_completed: engine.compactions_completed(),
        cql_connections: ctx.cql.open_connections(),
        uptime_seconds: ctx.started.elapsed().as_secs_f64(),
        resident_memory_bytes: resident_memory_bytes(),
        khata_version: env!("CARGO_PKG_VERSION"),
        release_version: khata_replica::replica::RELEASE_VERSION,
    };
    let text = prometheus::render(&input);
    Ok(([(header::CONTENT_TYPE, prometheus::CONTENT_TYPE)], text).into_response())
}

pub(super) async fn unknown_path() -> AdminError {
    AdminError::NotFound(
        "no such endpoint; the admin API serves GET /status, /info, /tablestats, \
         /compactionstats, /compactionthroughput, /traceprobability, /tpstats, /metrics and \
         POST /flush, /compact, /compactionthroughput, /traceprobability"
            .into(),
    )
}
