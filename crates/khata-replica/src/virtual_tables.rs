//! The virtual keyspaces of Cassandra 4: `system_virtual_schema`, which describes them, and
//! `system_views`, the node's state as tables.
//!
//! Their rows are made when they are read, from the node's state; nothing is stored, and they
//! cannot be written (Cassandra's "Modification is not supported by table ..."). They are
//! node-local, as in Cassandra: a read answers for the node it reaches, whatever the
//! consistency level. The schema holds them beside the stored keyspaces
//! ([`crate::Schema::keyspace`] and friends find them) but not among them, so `system_schema`,
//! schema agreement and everything that walks the stored tables never see them; the Python
//! driver reads them from `system_virtual_schema` (release 4.0 and later) and cqlsh's
//! `DESCRIBE` shows them as `VIRTUAL` keyspaces and tables.
//!
//! Tables (with Cassandra 4.1's columns):
//! - `system_virtual_schema.keyspaces`, `.tables`, `.columns`: these definitions.
//! - `system_views.settings`: every configuration setting and its value, as `khata.yaml`
//!   writes it (given by the server, [`crate::Replica::set_settings`]).
//! - `system_views.clients`: the connected CQL clients (given by the CQL server,
//!   [`crate::Replica::set_clients_source`]).
//! - `system_views.caches`: the SSTable block cache (Cassandra's `chunks` cache).
//! - `system_views.disk_usage`: the mebibytes of SSTables of each stored table.
//! - `system_views.sstable_tasks`: the compactions running now, with their progress in bytes
//!   (`nodetool compactionstats`; [`khata_storage::Engine::sstable_tasks`]).
//! - `system_views.local_read_latency`, `local_write_latency`, `local_scan_latency`: per
//!   stored table, the engine's reads, writes and range scans counted since the node started,
//!   with the median, 99th percentile, maximum and rate of the last minute or two
//!   ([`khata_storage::Engine::table_histograms`]).
//! - `system_views.thread_pools`: the node's kinds of work as Cassandra's pools (`nodetool
//!   tpstats`): the engine's compactions and flushes ([`khata_storage::Engine::pools`]) and
//!   what the server adds (its CQL requests, [`crate::Replica::set_pools_source`]).
//! - `system_views.rows_per_read`, `tombstones_per_read`: per stored table, the live rows and
//!   the tombstones each partition read met (the same windows).
//! - `system_views.coordinator_read_latency`, `coordinator_write_latency`,
//!   `coordinator_scan_latency`: the same of the requests the node coordinated, from receipt
//!   to answer (given by the coordinator, [`crate::Replica::set_coordinator_latency_source`]).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;
use khata_storage::{ReadResult, ScanPosition, ScanResult};
use khata_types::LocalTime;
use khata_types::latency::LatencySnapshot;
use khata_types::partition::Partition;
use khata_types::pools::PoolStats;
use khata_types::schema::{ColumnKind, CqlType, KeyspaceDef, Replication, TableDef};
use khata_types::token::{DecoratedKey, Token};
use khata_types::type_text::type_text;

use crate::error::Result;
use crate::rows::{RowWriter, SysValue};
use crate::schema::{KeyspaceSchema, add_fixed_tables};
use crate::system_tables::table;

pub const SYSTEM_VIRTUAL_SCHEMA: &str = "system_virtual_schema";
pub const SYSTEM_VIEWS: &str = "system_views";

/// Whether `name` is a virtual keyspace.
pub fn is_virtual_keyspace(name: &str) -> bool {
    matches!(name, SYSTEM_VIRTUAL_SCHEMA | SYSTEM_VIEWS)
}

/// A connected client, as `system_views.clients` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientInfo {
    pub address: IpAddr,
    pub port: u16,
    /// `established` until STARTUP, `ready` after (`authenticating` while it logs in).
    pub connection_stage: String,
    pub driver_name: Option<String>,
    pub driver_version: Option<String>,
    pub protocol_version: i32,
    pub request_count: i64,
    pub username: Option<String>,
}

/// What lists the connected clients.
pub type ClientsSource = Arc<dyn Fn() -> Vec<ClientInfo> + Send + Sync>;

/// The pools the layers above the replica run (the CQL server's requests).
pub type PoolsSource = Arc<dyn Fn() -> Vec<PoolStats> + Send + Sync>;

/// A table's read, write and range-read latencies, as a latency table shows one of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableLatencies {
    pub read: LatencySnapshot,
    pub write: LatencySnapshot,
    pub scan: LatencySnapshot,
}

/// The coordinator's latencies of a table's requests (`None`: none seen yet).
pub type CoordinatorLatencySource = Arc<dyn Fn(uuid::Uuid) -> Option<TableLatencies> + Send + Sync>;

/// The node state the virtual tables show that the replica does not own.
#[derive(Default)]
pub(crate) struct VirtualState {
    pub(crate) settings: parking_lot::RwLock<Vec<(String, String)>>,
    pub(crate) clients: parking_lot::RwLock<Option<ClientsSource>>,
    pub(crate) coordinator_latency: parking_lot::RwLock<Option<CoordinatorLatencySource>>,
    pub(crate) pools: parking_lot::RwLock<Option<PoolsSource>>,
}

impl std::fmt::Debug for VirtualState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualState")
            .field("settings", &self.settings.read().len())
            .field("clients", &self.clients.read().is_some())
            .finish()
    }
}

fn text() -> CqlType {
    CqlType::Text
}

fn with_comment(mut def: TableDef, comment: &str) -> TableDef {
    def.options.comment = comment.to_string();
    def
}

/// The virtual keyspaces' definitions.
pub fn keyspace_defs() -> Vec<KeyspaceDef> {
    [SYSTEM_VIEWS, SYSTEM_VIRTUAL_SCHEMA]
        .into_iter()
        .map(|name| KeyspaceDef {
            name: name.to_string(),
            replication: Replication::Local,
            durable_writes: false,
        })
        .collect()
}

/// Every virtual table's definition.
pub fn all() -> Vec<TableDef> {
    let vs = SYSTEM_VIRTUAL_SCHEMA;
    let views = SYSTEM_VIEWS;
    vec![
        with_comment(
            table(vs, "keyspaces", &[("keyspace_name", text())], &[], &[]),
            "virtual keyspace definitions",
        ),
        with_comment(
            table(
                vs,
                "tables",
                &[("keyspace_name", text())],
                &[("table_name", text())],
                &[("comment", text())],
            ),
            "virtual table definitions",
        ),
        with_comment(
            table(
                vs,
                "columns",
                &[("keyspace_name", text())],
                &[("table_name", text()), ("column_name", text())],
                &[
                    ("clustering_order", text()),
                    ("column_name_bytes", CqlType::Blob),
                    ("kind", text()),
                    ("position", CqlType::Int),
                    ("type", text()),
                ],
            ),
            "virtual column definitions",
        ),
        with_comment(
            table(
                views,
                "caches",
                &[("name", text())],
                &[],
                &[
                    ("capacity_bytes", CqlType::Bigint),
                    ("entry_count", CqlType::Int),
                    ("hit_count", CqlType::Bigint),
                    ("hit_ratio", CqlType::Double),
                    ("recent_hit_rate_per_second", CqlType::Bigint),
                    ("recent_request_rate_per_second", CqlType::Bigint),
                    ("request_count", CqlType::Bigint),
                    ("size_bytes", CqlType::Bigint),
                ],
            ),
            "system caches",
        ),
        with_comment(
            table(
                views,
                "clients",
                &[("address", CqlType::Inet)],
                &[("port", CqlType::Int)],
                &[
                    ("connection_stage", text()),
                    ("driver_name", text()),
                    ("driver_version", text()),
                    ("hostname", text()),
                    ("protocol_version", CqlType::Int),
                    ("request_count", CqlType::Bigint),
                    ("ssl_cipher_suite", text()),
                    ("ssl_enabled", CqlType::Boolean),
                    ("ssl_protocol", text()),
                    ("username", text()),
                ],
            ),
            "currently connected clients",
        ),
        per_table(views, "disk_usage", "", &[("mebibytes", CqlType::Bigint)]),
        with_comment(
            table(
                views,
                "sstable_tasks",
                &[("keyspace_name", text())],
                &[("table_name", text()), ("task_id", CqlType::Uuid)],
                &[
                    ("kind", text()),
                    ("progress", CqlType::Bigint),
                    ("total", CqlType::Bigint),
                    ("unit", text()),
                ],
            ),
            "current sstable tasks",
        ),
        latency_table(
            views,
            "coordinator_read_latency",
            "Coordinator read latency",
        ),
        latency_table(
            views,
            "coordinator_scan_latency",
            "Coordinator range latency",
        ),
        latency_table(
            views,
            "coordinator_write_latency",
            "Coordinator write latency",
        ),
        latency_table(views, "local_read_latency", "Local read latency"),
        latency_table(views, "local_scan_latency", "Local range latency"),
        latency_table(views, "local_write_latency", "Local write latency"),
        count_table(views, "rows_per_read", "Rows read per query"),
        count_table(views, "tombstones_per_read", "Tombstones scanned per read"),
        with_comment(
            table(
                views,
                "thread_pools",
                &[("name", text())],
                &[],
                &[
                    ("active_tasks", CqlType::Int),
                    ("active_tasks_limit", CqlType::Int),
                    ("blocked_tasks", CqlType::Bigint),
                    ("blocked_tasks_all_time", CqlType::Bigint),
                    ("completed_tasks", CqlType::Bigint),
                    ("pending_tasks", CqlType::Int),
                ],
            ),
            "",
        ),
        with_comment(
            table(
                views,
                "settings",
                &[("name", text())],
                &[],
                &[("value", text())],
            ),
            "current settings",
        ),
    ]
}

/// The virtual keyspaces with their tables, for the schema.
pub(crate) fn keyspaces() -> BTreeMap<String, KeyspaceSchema> {
    let mut out: BTreeMap<String, KeyspaceSchema> = keyspace_defs()
        .into_iter()
        .map(|def| (def.name.clone(), KeyspaceSchema::new(def)))
        .collect();
    add_fixed_tables(&mut out, all());
    out
}

/// A per-table latency table of Cassandra 4: `(keyspace_name, table_name)` and the latency
/// columns.
fn latency_table(keyspace: &str, name: &str, comment: &str) -> TableDef {
    per_table(
        keyspace,
        name,
        comment,
        &[
            ("count", CqlType::Bigint),
            ("max_ms", CqlType::Double),
            ("p50th_ms", CqlType::Double),
            ("p99th_ms", CqlType::Double),
            ("per_second", CqlType::Double),
        ],
    )
}

/// A per-table histogram of counts of Cassandra 4 (`rows_per_read`, `tombstones_per_read`).
fn count_table(keyspace: &str, name: &str, comment: &str) -> TableDef {
    per_table(
        keyspace,
        name,
        comment,
        &[
            ("count", CqlType::Bigint),
            ("max", CqlType::Double),
            ("p50th", CqlType::Double),
            ("p99th", CqlType::Double),
        ],
    )
}

/// A table of one row per stored table: `(keyspace_name, table_name)` and `columns`.
fn per_table(keyspace: &str, name: &str, comment: &str, columns: &[(&str, CqlType)]) -> TableDef {
    with_comment(
        table(
            keyspace,
            name,
            &[("keyspace_name", CqlType::Text)],
            &[("table_name", CqlType::Text)],
            columns,
        ),
        comment,
    )
}

/// Which histogram a per-table histogram table shows: one of the engine's own (`local_*`,
/// `rows_per_read`, `tombstones_per_read`) or one of the coordinator's (`coordinator_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HistogramTable {
    LocalRead,
    LocalWrite,
    LocalScan,
    RowsPerRead,
    TombstonesPerRead,
    CoordinatorRead,
    CoordinatorWrite,
    CoordinatorScan,
}

impl HistogramTable {
    /// The histogram a `system_views` table shows, if it shows one.
    pub(crate) fn of_table(name: &str) -> Option<HistogramTable> {
        Some(match name {
            "local_read_latency" => HistogramTable::LocalRead,
            "local_write_latency" => HistogramTable::LocalWrite,
            "local_scan_latency" => HistogramTable::LocalScan,
            "rows_per_read" => HistogramTable::RowsPerRead,
            "tombstones_per_read" => HistogramTable::TombstonesPerRead,
            "coordinator_read_latency" => HistogramTable::CoordinatorRead,
            "coordinator_write_latency" => HistogramTable::CoordinatorWrite,
            "coordinator_scan_latency" => HistogramTable::CoordinatorScan,
            _ => return None,
        })
    }

    /// Whether the table counts things (rows, tombstones) rather than timing them.
    pub(crate) fn counts(self) -> bool {
        matches!(
            self,
            HistogramTable::RowsPerRead | HistogramTable::TombstonesPerRead
        )
    }

    /// Its histogram of a table: from the engine's, or from the coordinator's if it has seen
    /// a request of the table (empty if not).
    pub(crate) fn pick(
        self,
        local: impl FnOnce() -> khata_storage::Result<khata_storage::TableHistogramsSnapshot>,
        coordinator: impl FnOnce() -> Option<TableLatencies>,
    ) -> khata_storage::Result<LatencySnapshot> {
        use HistogramTable::*;
        let coordinated = || coordinator().unwrap_or_default();
        match self {
            LocalRead => local().map(|l| l.read),
            LocalWrite => local().map(|l| l.write),
            LocalScan => local().map(|l| l.scan),
            RowsPerRead => local().map(|l| l.rows_per_read),
            TombstonesPerRead => local().map(|l| l.tombstones_per_read),
            CoordinatorRead => Ok(coordinated().read),
            CoordinatorWrite => Ok(coordinated().write),
            CoordinatorScan => Ok(coordinated().scan),
        }
    }
}

/// What the virtual tables read from the node, gathered by the replica.
pub(crate) struct NodeState<'a> {
    pub settings: &'a [(String, String)],
    pub clients: Vec<ClientInfo>,
    pub cache: khata_storage::sstable::BlockCacheStats,
    /// `(keyspace, table, bytes of SSTables)` of every stored table.
    pub disk_usage: Vec<(String, String, u64)>,
    pub sstable_tasks: Vec<khata_storage::SsTableTask>,
    /// `(keyspace, table, latencies)` of every stored table, for a latency table.
    pub latencies: Vec<(String, String, LatencySnapshot)>,
    pub pools: Vec<PoolStats>,
}

/// The rows of virtual table `def`, by partition.
pub(crate) fn partitions(
    def: &TableDef,
    state: &NodeState<'_>,
    ts: i64,
    now: LocalTime,
) -> Result<BTreeMap<DecoratedKey, Partition>> {
    let mut rows: Vec<RowWriter<'_>> = Vec::new();
    let text = |s: &str| SysValue::Text(s.to_string());
    match (def.keyspace.as_str(), def.name.as_str()) {
        (SYSTEM_VIRTUAL_SCHEMA, "keyspaces") => {
            for ks in keyspace_defs() {
                rows.push(RowWriter::new(def).set("keyspace_name", SysValue::Text(ks.name)));
            }
        }
        (SYSTEM_VIRTUAL_SCHEMA, "tables") => {
            for t in all() {
                rows.push(
                    RowWriter::new(def)
                        .set("keyspace_name", SysValue::Text(t.keyspace.clone()))
                        .set("table_name", SysValue::Text(t.name.clone()))
                        .set("comment", SysValue::Text(t.options.comment.clone())),
                );
            }
        }
        (SYSTEM_VIRTUAL_SCHEMA, "columns") => {
            for t in all() {
                for c in &t.columns {
                    let (kind, order, position) = match c.kind {
                        ColumnKind::PartitionKey { position } => {
                            ("partition_key", "none", i32::from(position))
                        }
                        ColumnKind::Clustering { position, .. } => {
                            ("clustering", "asc", i32::from(position))
                        }
                        ColumnKind::Static => ("static", "none", -1),
                        ColumnKind::Regular => ("regular", "none", -1),
                    };
                    rows.push(
                        RowWriter::new(def)
                            .set("keyspace_name", SysValue::Text(t.keyspace.clone()))
                            .set("table_name", SysValue::Text(t.name.clone()))
                            .set("column_name", SysValue::Text(c.name.clone()))
                            .set("clustering_order", text(order))
                            .set(
                                "column_name_bytes",
                                SysValue::Blob(Bytes::copy_from_slice(c.name.as_bytes())),
                            )
                            .set("kind", text(kind))
                            .set("position", SysValue::Int(position))
                            .set("type", SysValue::Text(type_text(&c.ty))),
                    );
                }
            }
        }
        (SYSTEM_VIEWS, "settings") => {
            for (name, value) in state.settings {
                rows.push(
                    RowWriter::new(def)
                        .set("name", SysValue::Text(name.clone()))
                        .set("value", SysValue::Text(value.clone())),
                );
            }
        }
        (SYSTEM_VIEWS, "clients") => {
            for c in &state.clients {
                rows.push(
                    RowWriter::new(def)
                        .set("address", SysValue::Inet(c.address))
                        .set("port", SysValue::Int(i32::from(c.port)))
                        .set(
                            "connection_stage",
                            SysValue::Text(c.connection_stage.clone()),
                        )
                        .set_opt("driver_name", c.driver_name.clone().map(SysValue::Text))
                        .set_opt(
                            "driver_version",
                            c.driver_version.clone().map(SysValue::Text),
                        )
                        .set("hostname", SysValue::Text(c.address.to_string()))
                        .set("protocol_version", SysValue::Int(c.protocol_version))
                        .set("request_count", SysValue::BigInt(c.request_count))
                        .set("ssl_enabled", SysValue::Bool(false))
                        .set_opt("username", c.username.clone().map(SysValue::Text)),
                );
            }
        }
        (SYSTEM_VIEWS, "caches") => {
            let c = &state.cache;
            let requests = c.hits + c.misses;
            let ratio = if requests == 0 {
                f64::NAN
            } else {
                c.hits as f64 / requests as f64
            };
            rows.push(
                RowWriter::new(def)
                    .set("name", text("chunks"))
                    .set("capacity_bytes", SysValue::BigInt(c.capacity_bytes as i64))
                    .set(
                        "entry_count",
                        SysValue::Int(i32::try_from(c.entries).unwrap_or(i32::MAX)),
                    )
                    .set("hit_count", SysValue::BigInt(c.hits as i64))
                    .set("hit_ratio", SysValue::Double(ratio))
                    .set("recent_hit_rate_per_second", SysValue::BigInt(0))
                    .set("recent_request_rate_per_second", SysValue::BigInt(0))
                    .set("request_count", SysValue::BigInt(requests as i64))
                    .set("size_bytes", SysValue::BigInt(c.size_bytes as i64)),
            );
        }
        (SYSTEM_VIEWS, "disk_usage") => {
            for (keyspace, name, bytes) in &state.disk_usage {
                rows.push(
                    RowWriter::new(def)
                        .set("keyspace_name", SysValue::Text(keyspace.clone()))
                        .set("table_name", SysValue::Text(name.clone()))
                        .set(
                            "mebibytes",
                            SysValue::BigInt(bytes.div_ceil(1 << 20) as i64),
                        ),
                );
            }
        }
        (SYSTEM_VIEWS, name)
            if HistogramTable::of_table(name).is_some_and(HistogramTable::counts) =>
        {
            let value = |v: u64| SysValue::Double(v as f64);
            for (keyspace, name, l) in &state.latencies {
                rows.push(
                    RowWriter::new(def)
                        .set("keyspace_name", SysValue::Text(keyspace.clone()))
                        .set("table_name", SysValue::Text(name.clone()))
                        .set("count", SysValue::BigInt(bigint(l.count)))
                        .set("max", value(l.max_micros))
                        .set("p50th", value(l.quantile_micros(0.5)))
                        .set("p99th", value(l.quantile_micros(0.99))),
                );
            }
        }
        (SYSTEM_VIEWS, name) if HistogramTable::of_table(name).is_some() => {
            let ms = |micros: u64| SysValue::Double(micros as f64 / 1000.0);
            for (keyspace, name, l) in &state.latencies {
                rows.push(
                    RowWriter::new(def)
                        .set("keyspace_name", SysValue::Text(keyspace.clone()))
                        .set("table_name", SysValue::Text(name.clone()))
                        .set("count", SysValue::BigInt(bigint(l.count)))
                        .set("max_ms", ms(l.max_micros))
                        .set("p50th_ms", ms(l.quantile_micros(0.5)))
                        .set("p99th_ms", ms(l.quantile_micros(0.99)))
                        .set("per_second", SysValue::Double(l.per_second())),
                );
            }
        }
        (SYSTEM_VIEWS, "thread_pools") => {
            let int = |n: u64| SysValue::Int(i32::try_from(n).unwrap_or(i32::MAX));
            for p in &state.pools {
                rows.push(
                    RowWriter::new(def)
                        .set("name", SysValue::Text(p.name.clone()))
                        .set("active_tasks", int(p.active))
                        .set_opt("active_tasks_limit", p.active_limit.map(int))
                        .set("blocked_tasks", SysValue::BigInt(bigint(p.blocked)))
                        .set(
                            "blocked_tasks_all_time",
                            SysValue::BigInt(bigint(p.blocked_all_time)),
                        )
                        .set("completed_tasks", SysValue::BigInt(bigint(p.completed)))
                        .set("pending_tasks", int(p.pending)),
                );
            }
        }
        (SYSTEM_VIEWS, "sstable_tasks") => {
            for t in &state.sstable_tasks {
                rows.push(
                    RowWriter::new(def)
                        .set("keyspace_name", SysValue::Text(t.keyspace.clone()))
                        .set("table_name", SysValue::Text(t.table_name.clone()))
                        .set("task_id", SysValue::Uuid(t.id))
                        .set("kind", text(t.kind))
                        .set("progress", SysValue::BigInt(bigint(t.progress)))
                        .set("total", SysValue::BigInt(bigint(t.total)))
                        .set("unit", text(t.unit)),
                );
            }
        }
        _ => {}
    }
    let mut out: BTreeMap<DecoratedKey, Partition> = BTreeMap::new();
    for row in rows {
        let (key, update) = row.build(ts, now)?;
        match out.entry(key) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(update),
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(update);
            }
        }
    }
    Ok(out)
}

/// A byte count as CQL's `bigint`.
fn bigint(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Whether `clustering` lies in one of `ranges` (half-open).
fn in_ranges(ranges: &[(Bytes, Bytes)], clustering: &Bytes) -> bool {
    ranges
        .iter()
        .any(|(start, end)| clustering >= start && clustering < end)
}

/// Keep the first `n` rows.
fn keep_first(rows: &mut BTreeMap<Bytes, khata_types::row::Row>, n: usize) {
    if let Some(cut) = rows.keys().nth(n).cloned() {
        rows.split_off(&cut);
    }
}

/// A read of one partition of a virtual table, as [`khata_storage::Engine::read`] answers it.
pub(crate) fn read(
    mut partitions: BTreeMap<DecoratedKey, Partition>,
    key: &DecoratedKey,
    ranges: &[(Bytes, Bytes)],
    reversed: bool,
    row_limit: Option<usize>,
) -> ReadResult {
    let mut partition = partitions.remove(key).unwrap_or_default();
    partition.rows.retain(|c, _| in_ranges(ranges, c));
    let total = partition.rows.len();
    let limit = row_limit.unwrap_or(usize::MAX);
    if total > limit {
        if reversed {
            // The last `limit` rows: those from the limit-th from the end on.
            match partition
                .rows
                .keys()
                .rev()
                .nth(limit.saturating_sub(1))
                .cloned()
            {
                Some(first) if limit > 0 => partition.rows = partition.rows.split_off(&first),
                _ => partition.rows.clear(),
            }
        } else {
            keep_first(&mut partition.rows, limit);
        }
    }
    ReadResult {
        live_rows: partition.rows.len(),
        partition,
        tombstones_scanned: 0,
        limit_reached: total > limit,
        warnings: Vec::new(),
        sstables_read: 0,
    }
}

/// A scan of a token range of a virtual table, as [`khata_storage::Engine::scan`] answers it.
pub(crate) fn scan(
    partitions: BTreeMap<DecoratedKey, Partition>,
    start: Bound<Token>,
    end: Bound<Token>,
    resume: Option<&ScanPosition>,
    row_limit: usize,
) -> ScanResult {
    let in_range = |t: Token| {
        (match start {
            Bound::Included(s) => t >= s,
            Bound::Excluded(s) => t > s,
            Bound::Unbounded => true,
        }) && (match end {
            Bound::Included(e) => t <= e,
            Bound::Excluded(e) => t < e,
            Bound::Unbounded => true,
        })
    };
    let mut out = ScanResult::default();
    let mut taken = 0usize;
    for (key, mut partition) in partitions {
        if !in_range(key.token) {
            continue;
        }
        if let Some(r) = resume {
            match key.cmp(&r.key) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => match &r.last_clustering {
                    None => continue,
                    Some(last) => partition.rows.retain(|c, _| c > last),
                },
                std::cmp::Ordering::Greater => {}
            }
        }
        if partition.rows.is_empty() {
            continue;
        }
        if taken == row_limit {
            // Rows are left: the next page starts after the last partition returned whole.
            out.resume = out.partitions.last().map(|(k, _)| ScanPosition {
                key: k.clone(),
                last_clustering: None,
            });
            break;
        }
        let room = row_limit - taken;
        if partition.rows.len() > room {
            keep_first(&mut partition.rows, room);
            taken += room;
            out.resume = Some(ScanPosition {
                key: key.clone(),
                last_clustering: partition.rows.keys().next_back().cloned(),
            });
            out.partitions.push((key, partition));
            break;
        }
        taken += partition.rows.len();
        out.partitions.push((key, partition));
    }
    out.live_rows = taken;
    out
}
