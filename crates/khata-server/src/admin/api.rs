//! The JSON documents of the admin API, shared by the server (which serializes them) and
//! `khata admin` (which reads them back), so the two cannot drift apart.
//!
//! Sizes are bytes and durations are named with their unit (`uptime_seconds`,
//! `sync_period_ms`). Fields are only ever added; `khata admin` ignores fields it does not
//! know, so an older client can talk to a newer node.

use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `GET /status`: the cluster as this node sees it (today: this node).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub cluster_name: String,
    pub nodes: Vec<NodeStatus>,
}

/// One node in `/status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeStatus {
    pub address: IpAddr,
    /// Whether the node answers (`U`p or `D`own in nodetool's first letter).
    pub up: bool,
    /// `normal`, `joining`, `leaving` or `moving` (nodetool's second letter).
    pub state: NodeState,
    pub host_id: Uuid,
    pub data_center: String,
    pub rack: String,
    pub tokens: usize,
    /// Bytes of live SSTable data on disk (nodetool's "Load").
    pub load_bytes: u64,
    pub schema_version: Uuid,
}

/// A node's place in the ring's life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    Normal,
    Joining,
    Leaving,
    Moving,
}

impl NodeState {
    /// nodetool's letter: `N`, `J`, `L`, `M`.
    pub fn letter(self) -> char {
        match self {
            NodeState::Normal => 'N',
            NodeState::Joining => 'J',
            NodeState::Leaving => 'L',
            NodeState::Moving => 'M',
        }
    }
}

/// `GET /info`: this node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Info {
    pub host_id: Uuid,
    pub cluster_name: String,
    pub data_center: String,
    pub rack: String,
    /// Cassandra-compatible release version the node reports to drivers.
    pub release_version: String,
    /// khata's own version.
    pub khata_version: String,
    pub uptime_seconds: u64,
    pub native_transport_address: SocketAddr,
    pub cql_connections: usize,
    pub tokens: usize,
    pub schema_version: Uuid,
    pub data_dir: String,
    pub load_bytes: u64,
    /// Resident memory of the process (from `/proc/self/status`; absent where unreadable).
    pub resident_memory_bytes: Option<u64>,
    /// Bytes in memtables (active and being flushed) and the budget for them.
    pub memtable_bytes: u64,
    pub memtable_space_bytes: u64,
    /// Bytes in the SSTable block cache and its capacity.
    pub block_cache_bytes: u64,
    pub block_cache_capacity_bytes: u64,
    pub pending_compactions: usize,
    pub compactions_completed: u64,
    pub commitlog: CommitLogInfo,
}

/// The commit-log settings in `/info`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitLogInfo {
    /// `periodic`, `group` or `batch`.
    pub sync: String,
    /// `commitlog_sync_period` (meaningful in periodic mode).
    pub sync_period_ms: u64,
    /// `commitlog_sync_group_window` (meaningful in group mode).
    pub sync_group_window_ms: u64,
    pub segment_size_bytes: u64,
}

/// `GET /compactionstats`: the compactions waiting and running (`nodetool compactionstats`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionStats {
    /// Compactions the tables' strategies would run now, summed over the tables.
    pub pending_tasks: usize,
    /// The tables with pending compactions, in keyspace then table order.
    pub pending: Vec<PendingCompactions>,
    /// The compactions running now.
    pub running: Vec<RunningCompaction>,
    /// `compaction_throughput` in force (0 = unthrottled): what nodetool divides the bytes
    /// left by for "Active compaction remaining time".
    pub throughput_bytes_per_second: u64,
}

/// `GET /tpstats`: the node's kinds of work as Cassandra's thread pools (`nodetool tpstats`),
/// by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TpStats {
    pub pools: Vec<PoolStats>,
}

/// One pool in `/tpstats` (and `system_views.thread_pools`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolStats {
    pub name: String,
    pub active: u64,
    /// At most this many at once; null when there is no fixed bound.
    pub active_limit: Option<u64>,
    pub pending: u64,
    pub completed: u64,
    pub blocked: u64,
    pub blocked_all_time: u64,
}

/// `GET /compactionthroughput`, and the answer of `POST /compactionthroughput?bytes_per_second=N`
/// (`nodetool getcompactionthroughput` / `setcompactionthroughput`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionThroughput {
    /// Bytes per second compaction may read, counted as they lie on disk; 0 = unthrottled.
    pub bytes_per_second: u64,
}

/// `GET /traceprobability`, and the answer of `POST /traceprobability?probability=P`
/// (`nodetool gettraceprobability` / `settraceprobability`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceProbability {
    /// The share of requests traced without being asked, 0 to 1.
    pub probability: f64,
}

/// A table's pending compactions in `/compactionstats`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCompactions {
    pub keyspace: String,
    pub table: String,
    pub tasks: usize,
}

/// A running compaction in `/compactionstats` (and `system_views.sstable_tasks`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningCompaction {
    pub id: Uuid,
    /// `compaction`.
    pub kind: String,
    pub keyspace: String,
    pub table: String,
    /// Bytes of the inputs' Data files (uncompressed) passed so far, of `total`.
    pub completed: u64,
    pub total: u64,
    /// `bytes`.
    pub unit: String,
}

/// `GET /tablestats`: per table, in keyspace then table order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableStatsReport {
    pub tables: Vec<TableStats>,
}

/// One table in `/tablestats`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableStats {
    pub keyspace: String,
    pub table: String,
    pub id: Uuid,
    pub sstable_count: usize,
    /// SSTables per level (leveled compaction; everything is level 0 otherwise).
    pub sstables_per_level: Vec<usize>,
    /// Bytes of live SSTable data.
    pub space_used_bytes: u64,
    /// Partitions summed over SSTables (a partition in several SSTables counts in each).
    pub partitions_estimate: u64,
    pub memtable_bytes: u64,
    pub memtable_partitions: usize,
    /// Tombstones in the table's SSTables.
    pub tombstones: u64,
    pub pending_compactions: usize,
    /// Partition reads since the node started, and the SSTables they read in all (Bloom
    /// filters, partition deletions and one-row reads in timestamp order skip the others).
    #[serde(default)]
    pub partition_reads: u64,
    #[serde(default)]
    pub sstables_read: u64,
    /// The largest partitions on disk, largest first (at most ten).
    pub largest_partitions: Vec<LargePartition>,
    /// The engine's reads (partitions), writes (mutations) and range scans (pages) of the
    /// table: counts since the node started, the rest over the last minute or two.
    #[serde(default)]
    pub local_read: LatencySummary,
    #[serde(default)]
    pub local_write: LatencySummary,
    #[serde(default)]
    pub local_scan: LatencySummary,
    /// Live rows and tombstones each partition read met, over the last minute or two.
    #[serde(default)]
    pub rows_per_read: CountSummary,
    #[serde(default)]
    pub tombstones_per_read: CountSummary,
}

/// A distribution of counts in `/tablestats` (the mean is null when nothing was recorded
/// lately).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CountSummary {
    pub count: u64,
    pub mean: Option<f64>,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// A latency distribution in `/tablestats` (times in milliseconds; the mean is null when
/// nothing was recorded lately).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ms: Option<f64>,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub per_second: f64,
}

/// A large partition: its key (the partition key as serialized for the token, in hex) and
/// its size in one SSTable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LargePartition {
    pub key_hex: String,
    pub size_bytes: u64,
}

/// `POST /flush`: what was flushed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlushReport {
    pub tables: Vec<TableName>,
}

/// A table by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableName {
    pub keyspace: String,
    pub table: String,
}

/// `POST /compact`: what each table's major compaction did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactReport {
    pub tables: Vec<TableCompaction>,
}

/// One table's major compaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableCompaction {
    pub keyspace: String,
    pub table: String,
    /// Compaction tasks run (0 when there was nothing to compact).
    pub tasks: usize,
    pub sstables_before: usize,
    pub sstables_after: usize,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub tombstones_purged: usize,
}

/// The body of every error answer (4xx and 5xx).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
}

/// The `?keyspace=..&table=..` of `/flush`, `/compact` and `/tablestats`: every table when
/// both are absent, a keyspace's tables, or one table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    pub keyspace: Option<String>,
    pub table: Option<String>,
}

impl Scope {
    /// The query string for this scope (`""`, `?keyspace=ks`, `?keyspace=ks&table=t`).
    pub fn query(&self) -> String {
        let mut parts = Vec::new();
        if let Some(ks) = &self.keyspace {
            parts.push(format!("keyspace={}", percent_encode(ks)));
        }
        if let Some(t) = &self.table {
            parts.push(format!("table={}", percent_encode(t)));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// Percent-encoding of a query value: everything but RFC 3986's unreserved characters.
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_queries_are_encoded() {
        assert_eq!(Scope::default().query(), "");
        let scope = Scope {
            keyspace: Some("chat".into()),
            table: Some("Quoted Name&x".into()),
        };
        assert_eq!(scope.query(), "?keyspace=chat&table=Quoted%20Name%26x");
    }
}
