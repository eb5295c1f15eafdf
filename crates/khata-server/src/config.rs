//! The node's configuration: every setting, its `cassandra.yaml` name, its default, and how
//! the layers combine.
//!
//! # Names and defaults
//!
//! A setting that exists in Cassandra keeps Cassandra's name and Cassandra 4.1's default
//! (`num_tokens: 16`, `commitlog_sync_period: 10000ms`, `compaction_throughput: 64MiB/s`, ...),
//! so an operator's knowledge and most of an existing `cassandra.yaml` carry over. Values with
//! units use Cassandra 4.1's syntax, parsed exactly as Cassandra parses it ([`units`]); the
//! pre-4.1 names with the unit in the name (`commitlog_sync_period_in_ms: 10000`,
//! `compaction_throughput_mb_per_sec: 64`) are accepted where Cassandra 4.1 accepts them.
//! Settings Cassandra does not have are khata's own and say so in `khata.yaml`: `data_dir`,
//! `dynamo_port`, `admin_port`, `dc`/`rack` (Cassandra reads those from
//! `cassandra-rackdc.properties`), `seeds` (Cassandra nests them in `seed_provider`, which is
//! accepted too), `memtable_flush_size`, `gc_grace_seconds` (a table option in Cassandra; here
//! the default for new tables) and `ttl_scan_period_seconds` (DynamoDB TTL).
//!
//! The shipped `khata.yaml` (in this crate's directory) lists every key with its default and
//! what it does; a test checks it parses to [`Config::default`].
//!
//! # Layers
//!
//! [`Config::default`], then the YAML file (`--config`), then each `--set key=value` in order
//! (same names and value syntax as the YAML: the value is read as a YAML scalar), then the
//! dedicated flags (`--cql-port`, ...); a later layer overrides an earlier one. Then
//! [`Config::validate`] checks the settings that constrain each other.
//!
//! # Errors
//!
//! An unknown key is an error naming it, as in Cassandra ("Invalid yaml. Please remove
//! properties [...]"), with the nearest known name as a hint. A bad value is an error naming
//! the key, the value and the reason (Cassandra's own message for unit syntax). Two names of
//! one setting in the same file (`commitlog_sync_period` and `commitlog_sync_period_in_ms`) are
//! refused rather than letting whichever comes last win silently, as Cassandra 4.1 does.
//!
//! # Why not `#[derive(Deserialize)]`
//!
//! Settings are applied key by key from a parsed YAML mapping through one table
//! ([`keys`]) rather than deserialized into a struct: a setting can have several names with
//! different value syntaxes, every error must name the key and the value, `--set` must reuse
//! exactly the same parsing, and the table also renders the effective configuration back to
//! YAML ([`Config::to_yaml`]).

mod keys;
pub mod units;
mod values;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde_norway::{Mapping, Value};

use crate::error::ConfigError;

pub use values::{parse_bind_address, parse_seed};

/// Cassandra's limit on `num_tokens`.
pub const MAX_NUM_TOKENS: u32 = 1536;

/// Cassandra raises any request timeout below this to it; khata refuses such a value instead
/// of changing it silently.
pub const LOWEST_ACCEPTED_TIMEOUT: Duration = Duration::from_millis(10);

/// When a write is acknowledged relative to the commit log's fsync (`commitlog_sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CommitLogSync {
    /// Acknowledge once the record is handed to the OS; fsync every `commitlog_sync_period`.
    #[default]
    Periodic,
    /// Acknowledge after an fsync shared by the writes of one `commitlog_sync_group_window`.
    Group,
    /// Acknowledge after an fsync shared by the writes waiting for it, with no window.
    Batch,
}

impl CommitLogSync {
    /// The `cassandra.yaml` spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            CommitLogSync::Periodic => "periodic",
            CommitLogSync::Group => "group",
            CommitLogSync::Batch => "batch",
        }
    }

    /// Parses the `cassandra.yaml` spelling (lower case, as Cassandra's enum constants).
    pub fn parse(text: &str) -> Option<CommitLogSync> {
        Some(match text {
            "periodic" => CommitLogSync::Periodic,
            "group" => CommitLogSync::Group,
            "batch" => CommitLogSync::Batch,
            _ => return None,
        })
    }
}

impl fmt::Display for CommitLogSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A seed node: an IP address and, if it listens elsewhere than this node's `storage_port`,
/// its internode port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Seed {
    pub address: IpAddr,
    pub port: Option<u16>,
}

impl Seed {
    /// The seed's internode address, with `default_port` when it names none.
    pub fn socket_addr(&self, default_port: u16) -> SocketAddr {
        SocketAddr::new(self.address, self.port.unwrap_or(default_port))
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            None => write!(f, "{}", self.address),
            Some(port) => write!(f, "{}", SocketAddr::new(self.address, port)),
        }
    }
}

impl std::str::FromStr for Seed {
    type Err = String;

    fn from_str(text: &str) -> Result<Seed, String> {
        parse_seed(text)
    }
}

/// Every setting of a node. Field names carry their unit where the type does not.
///
/// The YAML name of each field is given in its doc; see `khata.yaml` for the full story.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `cluster_name`: nodes refuse to gossip with a different cluster.
    pub cluster_name: String,
    /// `data_dir` (khata): everything the node stores lives under it, the commit log in
    /// `commitlog/` and the tables in `data/`. Relative to the working directory.
    pub data_dir: PathBuf,
    /// `listen_address`: the IP every server of this node binds (CQL, DynamoDB, internode,
    /// admin) and that peers and clients are told.
    pub listen_address: IpAddr,
    /// `native_transport_port` (flag `--cql-port`, alias `cql_port`).
    pub native_transport_port: u16,
    /// `dynamo_port` (khata): the DynamoDB API.
    pub dynamo_port: u16,
    /// `dynamo_access_keys` (khata): access key id -> secret access key. Empty (the default):
    /// the DynamoDB API takes any request; otherwise requests must be SigV4-signed with one.
    pub dynamo_access_keys: BTreeMap<String, String>,
    /// `storage_port` (flag `--internode-port`, alias `internode_port`): gossip and messaging.
    pub storage_port: u16,
    /// `admin_port` (khata): admin HTTP API and `/metrics`.
    pub admin_port: u16,
    /// `seeds` (khata; Cassandra's `seed_provider` is accepted too). Empty: this node starts a
    /// cluster of its own.
    pub seeds: Vec<Seed>,
    /// `dc` (khata; Cassandra's `cassandra-rackdc.properties`).
    pub dc: String,
    /// `rack` (khata; Cassandra's `cassandra-rackdc.properties`).
    pub rack: String,
    /// `num_tokens`: ring positions this node owns.
    pub num_tokens: u32,
    /// `default_keyspace_rf`: the replication factor of a keyspace created (or altered) without
    /// one, `{'class': 'SimpleStrategy'}` or `{'class': 'NetworkTopologyStrategy'}` (for every
    /// datacenter).
    pub default_keyspace_rf: u32,
    /// `commitlog_sync`.
    pub commitlog_sync: CommitLogSync,
    /// `commitlog_sync_period` (old: `commitlog_sync_period_in_ms`).
    pub commitlog_sync_period: Duration,
    /// `commitlog_sync_group_window` (old: `commitlog_sync_group_window_in_ms`).
    pub commitlog_sync_group_window: Duration,
    /// `commitlog_segment_size` (old: `commitlog_segment_size_in_mb`).
    pub commitlog_segment_size_bytes: u64,
    /// `commitlog_total_space` (old: `commitlog_total_space_in_mb`).
    pub commitlog_total_space_bytes: u64,
    /// `memtable_heap_space` (old: `memtable_heap_space_in_mb`): memory for all memtables.
    pub memtable_heap_space_bytes: u64,
    /// `memtable_flush_size` (khata): a table's memtable is flushed past this size.
    pub memtable_flush_size_bytes: u64,
    /// `file_cache_size` (old: `file_cache_size_in_mb`): decompressed SSTable blocks kept in
    /// memory (Cassandra's chunk cache).
    pub file_cache_size_bytes: u64,
    /// `compaction_throughput` (old: `compaction_throughput_mb_per_sec`); 0 = unthrottled.
    pub compaction_throughput_bytes_per_second: u64,
    /// `concurrent_compactors`.
    pub concurrent_compactors: u32,
    /// `gc_grace_seconds` (khata; a table option in Cassandra): the default for new tables.
    pub gc_grace_seconds: u32,
    /// `tombstone_warn_threshold`.
    pub tombstone_warn_threshold: u32,
    /// `tombstone_failure_threshold`.
    pub tombstone_failure_threshold: u32,
    /// `batch_size_warn_threshold` (old: `batch_size_warn_threshold_in_kb`).
    pub batch_size_warn_threshold_bytes: u64,
    /// `batch_size_fail_threshold` (old: `batch_size_fail_threshold_in_kb`).
    pub batch_size_fail_threshold_bytes: u64,
    /// `native_transport_max_frame_size` (old: `native_transport_max_frame_size_in_mb`).
    pub native_transport_max_frame_size_bytes: u64,
    /// `native_transport_max_concurrent_connections`; `None` (written -1) = no limit.
    pub native_transport_max_concurrent_connections: Option<u64>,
    /// `concurrent_reads`: reads on storage threads at once (Cassandra's read stage).
    pub concurrent_reads: u32,
    /// `request_timeout` (old: `request_timeout_in_ms`): operations with no timeout of their
    /// own (schema changes, truncate).
    pub request_timeout: Duration,
    /// `read_request_timeout` (old: `read_request_timeout_in_ms`).
    pub read_request_timeout: Duration,
    /// `write_request_timeout` (old: `write_request_timeout_in_ms`).
    pub write_request_timeout: Duration,
    /// `range_request_timeout` (old: `range_request_timeout_in_ms`).
    pub range_request_timeout: Duration,
    /// `cas_contention_timeout` (old: `cas_contention_timeout_in_ms`).
    pub cas_contention_timeout: Duration,
    /// `max_hint_window` (old: `max_hint_window_in_ms`).
    pub max_hint_window: Duration,
    /// `ttl_scan_period_seconds` (khata): how often expired DynamoDB TTL items are looked for.
    pub ttl_scan_period_seconds: u32,
    /// `size_estimates_recording_interval` (khata; Cassandra's `cassandra.size_recorder_interval`
    /// system property): how often `system.size_estimates` and `system.table_estimates` are
    /// rewritten.
    pub size_estimates_recording_interval: Duration,
    /// `dynamo_item_collection_size_limit` (khata): the largest item collection of a DynamoDB
    /// table with local secondary indexes (DynamoDB's 10 GB; lower it to test the limit).
    pub dynamo_item_collection_size_limit_bytes: u64,
}

impl Default for Config {
    /// The embedded single-node default (DESIGN.md §1): Cassandra 4.1's defaults, one node on
    /// loopback, data in `./khata-data`.
    fn default() -> Config {
        Config {
            cluster_name: "Test Cluster".to_owned(),
            data_dir: PathBuf::from("./khata-data"),
            listen_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            native_transport_port: 9042,
            dynamo_port: 8000,
            dynamo_access_keys: BTreeMap::new(),
            storage_port: 7000,
            admin_port: 7070,
            seeds: Vec::new(),
            dc: "datacenter1".to_owned(),
            rack: "rack1".to_owned(),
            num_tokens: 16,
            default_keyspace_rf: 1,
            commitlog_sync: CommitLogSync::Periodic,
            commitlog_sync_period: Duration::from_secs(10),
            commitlog_sync_group_window: Duration::from_millis(1),
            commitlog_segment_size_bytes: 32 << 20,
            commitlog_total_space_bytes: 8192 << 20,
            memtable_heap_space_bytes: 256 << 20,
            memtable_flush_size_bytes: 64 << 20,
            file_cache_size_bytes: 128 << 20,
            compaction_throughput_bytes_per_second: 64 << 20,
            // Cassandra: min(8, max(2, min(data directories, cores))), which is 2 for khata's
            // single data directory.
            concurrent_compactors: 2,
            gc_grace_seconds: 864_000,
            tombstone_warn_threshold: 1000,
            tombstone_failure_threshold: 100_000,
            batch_size_warn_threshold_bytes: 5 << 10,
            batch_size_fail_threshold_bytes: 50 << 10,
            native_transport_max_frame_size_bytes: 16 << 20,
            native_transport_max_concurrent_connections: None,
            concurrent_reads: 32,
            request_timeout: Duration::from_secs(10),
            read_request_timeout: Duration::from_secs(5),
            write_request_timeout: Duration::from_secs(2),
            range_request_timeout: Duration::from_secs(10),
            cas_contention_timeout: Duration::from_secs(1),
            max_hint_window: Duration::from_secs(3 * 3600),
            ttl_scan_period_seconds: 60,
            size_estimates_recording_interval: Duration::from_secs(300),
            dynamo_item_collection_size_limit_bytes: 10 << 30,
        }
    }
}

impl Config {
    /// The defaults overlaid with a YAML document, validated.
    pub fn from_yaml_str(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.apply_yaml_str(text, origin)?;
        config.validate()?;
        Ok(config)
    }

    /// Applies every key of a YAML document; `origin` names it in errors. An empty document
    /// changes nothing. Does not [`validate`](Self::validate).
    pub fn apply_yaml_str(&mut self, text: &str, origin: &str) -> Result<(), ConfigError> {
        let document: Value = serde_norway::from_str(text).map_err(|e| ConfigError::Yaml {
            origin: origin.to_owned(),
            message: e.to_string(),
        })?;
        match document {
            Value::Null => Ok(()),
            Value::Mapping(mapping) => self.apply_mapping(&mapping, origin),
            other => Err(ConfigError::NotAMapping {
                origin: origin.to_owned(),
                found: values::display(&other),
            }),
        }
    }

    /// Applies one `--set key=value`: `value` is read as YAML, exactly as it would be in the
    /// file. Does not [`validate`](Self::validate).
    pub fn apply_set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let origin = format!("--set {key}={value}");
        let parsed: Value = serde_norway::from_str(value).map_err(|e| ConfigError::Yaml {
            origin: origin.clone(),
            message: e.to_string(),
        })?;
        let mut mapping = Mapping::new();
        mapping.insert(Value::String(key.to_owned()), parsed);
        self.apply_mapping(&mapping, &origin)
    }

    fn apply_mapping(&mut self, mapping: &Mapping, origin: &str) -> Result<(), ConfigError> {
        // Which name set each setting in this source, to refuse two names of one setting.
        let mut set_by: HashMap<&'static str, String> = HashMap::new();
        for (key, value) in mapping {
            let name = match key {
                Value::String(s) => s.clone(),
                other => values::display(other),
            };
            let Some((canonical, setter)) = keys::lookup(&name) else {
                return Err(ConfigError::UnknownKey {
                    origin: origin.to_owned(),
                    suggestion: keys::nearest(&name).map(str::to_owned),
                    key: name,
                });
            };
            if let Some(other) = set_by.insert(canonical, name.clone()) {
                return Err(ConfigError::DuplicateSetting {
                    origin: origin.to_owned(),
                    key: other,
                    other: name,
                });
            }
            setter(self, value).map_err(|reason| ConfigError::InvalidValue {
                origin: origin.to_owned(),
                key: name.clone(),
                value: values::display(value),
                reason,
            })?;
        }
        Ok(())
    }

    /// Checks the settings that constrain one another (each value alone was checked when it
    /// was set).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |reason: String| Err(ConfigError::Inconsistent(reason));
        // The flag's parser refuses the wildcard too; this covers a Config built in code.
        if self.listen_address.is_unspecified() {
            return fail(format!(
                "listen_address {} is the wildcard address",
                self.listen_address
            ));
        }
        let ports = [
            ("native_transport_port", self.native_transport_port),
            ("dynamo_port", self.dynamo_port),
            ("storage_port", self.storage_port),
            ("admin_port", self.admin_port),
        ];
        for (i, (a, port_a)) in ports.iter().enumerate() {
            for (b, port_b) in &ports[i + 1..] {
                // Port 0 asks the OS for a free port, so zeros never clash.
                if port_a == port_b && *port_a != 0 {
                    return fail(format!("{a} and {b} are both {port_a}"));
                }
            }
        }
        match self.commitlog_sync {
            CommitLogSync::Periodic if self.commitlog_sync_period.is_zero() => {
                return fail(
                    "commitlog_sync is periodic but commitlog_sync_period is 0ms; give it a \
                     positive period"
                        .to_owned(),
                );
            }
            CommitLogSync::Group if self.commitlog_sync_group_window.is_zero() => {
                return fail(
                    "commitlog_sync is group but commitlog_sync_group_window is 0ms; give it a \
                     positive window (or use batch)"
                        .to_owned(),
                );
            }
            _ => {}
        }
        if self.memtable_flush_size_bytes > self.memtable_heap_space_bytes {
            return fail(format!(
                "memtable_flush_size ({}) is larger than memtable_heap_space ({}); a memtable \
                 would never fit",
                units::format_storage(
                    self.memtable_flush_size_bytes,
                    units::StorageUnit::Mebibytes
                ),
                units::format_storage(
                    self.memtable_heap_space_bytes,
                    units::StorageUnit::Mebibytes
                ),
            ));
        }
        let timeouts = [
            ("request_timeout", self.request_timeout),
            ("read_request_timeout", self.read_request_timeout),
            ("write_request_timeout", self.write_request_timeout),
            ("range_request_timeout", self.range_request_timeout),
            ("cas_contention_timeout", self.cas_contention_timeout),
        ];
        for (name, timeout) in timeouts {
            if timeout < LOWEST_ACCEPTED_TIMEOUT {
                return fail(format!(
                    "{name} is {}; the lowest accepted timeout is 10ms",
                    units::format_duration(timeout, units::TimeUnit::Milliseconds)
                ));
            }
        }
        Ok(())
    }

    /// The configuration as YAML with every key under its 4.1 name, in `khata.yaml`'s order.
    /// Parsing it gives this configuration back.
    pub fn to_yaml(&self) -> String {
        let mut mapping = Mapping::new();
        for key in keys::KEYS {
            mapping.insert(Value::String(key.name.to_owned()), (key.get)(self));
        }
        serde_norway::to_string(&Value::Mapping(mapping))
            .expect("a mapping of strings, numbers and strings serializes")
    }

    /// Every key's 4.1 name with its value as `khata.yaml` writes it (a string as is, a list or
    /// mapping as YAML), in `khata.yaml`'s order: what `system_views.settings` lists. Secret
    /// keys are never shown: `dynamo_access_keys` lists the access key ids only.
    pub fn settings(&self) -> Vec<(String, String)> {
        keys::KEYS
            .iter()
            .map(|key| {
                if key.name == "dynamo_access_keys" {
                    let ids: Vec<&str> =
                        self.dynamo_access_keys.keys().map(String::as_str).collect();
                    return (key.name.to_string(), ids.join(", "));
                }
                let value = match (key.get)(self) {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    Value::Bool(b) => b.to_string(),
                    Value::Number(n) => n.to_string(),
                    other => serde_norway::to_string(&other)
                        .map(|s| s.trim_end().to_string())
                        .unwrap_or_default(),
                };
                (key.name.to_string(), value)
            })
            .collect()
    }

    /// Every key's 4.1 name, in `khata.yaml`'s order (older names and aliases not included).
    pub fn key_names() -> impl Iterator<Item = &'static str> {
        keys::KEYS.iter().map(|k| k.name)
    }

    /// The commit log's directory: `commitlog/` under `data_dir`.
    pub fn commitlog_dir(&self) -> PathBuf {
        self.data_dir.join("commitlog")
    }

    /// Where the CQL server listens.
    pub fn cql_address(&self) -> SocketAddr {
        SocketAddr::new(self.listen_address, self.native_transport_port)
    }

    /// Where the DynamoDB API listens.
    pub fn dynamo_address(&self) -> SocketAddr {
        SocketAddr::new(self.listen_address, self.dynamo_port)
    }

    /// Where internode messaging listens.
    pub fn internode_address(&self) -> SocketAddr {
        SocketAddr::new(self.listen_address, self.storage_port)
    }

    /// Where the admin HTTP API listens.
    pub fn admin_address(&self) -> SocketAddr {
        SocketAddr::new(self.listen_address, self.admin_port)
    }

    /// The seeds' internode addresses (a seed without a port uses this node's `storage_port`).
    pub fn seed_addresses(&self) -> Vec<SocketAddr> {
        self.seeds
            .iter()
            .map(|s| s.socket_addr(self.storage_port))
            .collect()
    }
}
