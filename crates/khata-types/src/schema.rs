//! Schema: keyspaces, tables, columns and CQL types (DESIGN.md §3).
//!
//! These are plain descriptions; the replica layer owns the schema tables and versioning. Column
//! ids are assigned by the table and never reused, so that data on disk names columns by id.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::row::ColumnId;

/// A CQL data type. `varchar` is an alias of `text` and parses to [`CqlType::Text`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CqlType {
    Ascii,
    Bigint,
    Blob,
    Boolean,
    Counter,
    Date,
    Decimal,
    Double,
    Duration,
    Float,
    Inet,
    Int,
    Smallint,
    Text,
    Time,
    Timestamp,
    Timeuuid,
    Tinyint,
    Uuid,
    Varint,
    List {
        element: Box<CqlType>,
        frozen: bool,
    },
    Set {
        element: Box<CqlType>,
        frozen: bool,
    },
    Map {
        key: Box<CqlType>,
        value: Box<CqlType>,
        frozen: bool,
    },
    /// Tuples are always frozen.
    Tuple(Vec<CqlType>),
    Udt {
        keyspace: String,
        name: String,
        fields: Vec<(String, CqlType)>,
        frozen: bool,
    },
    Vector {
        element: Box<CqlType>,
        dimension: u32,
    },
}

impl CqlType {
    /// The length of every value of a fixed-width type (Cassandra's `valueLengthIfFixed`);
    /// `None` for a type of variable length.
    pub fn fixed_length(&self) -> Option<usize> {
        Some(match self {
            CqlType::Boolean | CqlType::Tinyint => 1,
            CqlType::Smallint => 2,
            CqlType::Int | CqlType::Float | CqlType::Date => 4,
            CqlType::Bigint
            | CqlType::Counter
            | CqlType::Double
            | CqlType::Time
            | CqlType::Timestamp => 8,
            CqlType::Uuid | CqlType::Timeuuid => 16,
            _ => return None,
        })
    }

    /// Whether the type is, or holds anywhere inside it, user type `keyspace.name`.
    pub fn mentions_udt(&self, keyspace: &str, name: &str) -> bool {
        match self {
            CqlType::Udt {
                keyspace: k,
                name: n,
                fields,
                ..
            } => {
                (k == keyspace && n == name)
                    || fields.iter().any(|(_, t)| t.mentions_udt(keyspace, name))
            }
            CqlType::List { element, .. }
            | CqlType::Set { element, .. }
            | CqlType::Vector { element, .. } => element.mentions_udt(keyspace, name),
            CqlType::Map { key, value, .. } => {
                key.mentions_udt(keyspace, name) || value.mentions_udt(keyspace, name)
            }
            CqlType::Tuple(elements) => elements.iter().any(|t| t.mentions_udt(keyspace, name)),
            _ => false,
        }
    }

    /// The type with every user type replaced by a tuple of its fields' types, at any depth
    /// (Cassandra's `AbstractType.expandUserTypes`): how a dropped column's type is recorded,
    /// so that the record outlives the user type.
    pub fn expand_user_types(&self) -> CqlType {
        match self {
            CqlType::Udt { fields, .. } => {
                CqlType::Tuple(fields.iter().map(|(_, t)| t.expand_user_types()).collect())
            }
            CqlType::List { element, frozen } => CqlType::List {
                element: Box::new(element.expand_user_types()),
                frozen: *frozen,
            },
            CqlType::Set { element, frozen } => CqlType::Set {
                element: Box::new(element.expand_user_types()),
                frozen: *frozen,
            },
            CqlType::Map { key, value, frozen } => CqlType::Map {
                key: Box::new(key.expand_user_types()),
                value: Box::new(value.expand_user_types()),
                frozen: *frozen,
            },
            CqlType::Vector { element, dimension } => CqlType::Vector {
                element: Box::new(element.expand_user_types()),
                dimension: *dimension,
            },
            CqlType::Tuple(elements) => {
                CqlType::Tuple(elements.iter().map(CqlType::expand_user_types).collect())
            }
            other => other.clone(),
        }
    }

    /// Whether values of this type are stored as one cell per element (non-frozen collections
    /// and UDTs).
    pub fn is_multi_cell(&self) -> bool {
        match self {
            CqlType::List { frozen, .. }
            | CqlType::Set { frozen, .. }
            | CqlType::Map { frozen, .. }
            | CqlType::Udt { frozen, .. } => !frozen,
            _ => false,
        }
    }
}

/// Clustering order of one clustering column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ClusteringOrder {
    #[default]
    Asc,
    Desc,
}

/// The role of a column in its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// Component `position` of the partition key.
    PartitionKey {
        position: u16,
    },
    /// Component `position` of the clustering key.
    Clustering {
        position: u16,
        order: ClusteringOrder,
    },
    /// One value per partition.
    Static,
    Regular,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnDef {
    pub id: ColumnId,
    pub name: String,
    pub ty: CqlType,
    pub kind: ColumnKind,
}

/// Replication of a keyspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replication {
    Simple {
        replication_factor: u32,
    },
    NetworkTopology {
        datacenters: BTreeMap<String, u32>,
    },
    /// Node-local system keyspaces.
    Local,
}

/// A keyspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyspaceDef {
    pub name: String,
    pub replication: Replication,
    pub durable_writes: bool,
}

/// How a table's SSTables are compacted. Defaults follow Cassandra.
#[derive(Clone, Debug, PartialEq)]
pub enum CompactionStrategy {
    /// `SizeTieredCompactionStrategy`: merge `min_threshold`..`max_threshold` SSTables of
    /// similar size (within `bucket_low`..`bucket_high` of the bucket's average).
    SizeTiered {
        min_threshold: usize,
        max_threshold: usize,
        bucket_low: f64,
        bucket_high: f64,
        min_sstable_size_bytes: u64,
    },
    /// `LeveledCompactionStrategy`: non-overlapping levels, each `fanout_size` times larger.
    Leveled {
        sstable_size_bytes: u64,
        fanout_size: u32,
    },
    /// `TimeWindowCompactionStrategy`: one SSTable per time window once the window is past.
    TimeWindow { window_size_seconds: u64 },
}

impl CompactionStrategy {
    pub fn size_tiered() -> Self {
        CompactionStrategy::SizeTiered {
            min_threshold: 4,
            max_threshold: 32,
            bucket_low: 0.5,
            bucket_high: 1.5,
            min_sstable_size_bytes: 50 * 1024 * 1024,
        }
    }

    pub fn leveled() -> Self {
        CompactionStrategy::Leveled {
            sstable_size_bytes: 160 * 1024 * 1024,
            fanout_size: 10,
        }
    }

    /// TWCS with Cassandra's default window of one day.
    pub fn time_window() -> Self {
        CompactionStrategy::TimeWindow {
            window_size_seconds: 24 * 60 * 60,
        }
    }
}

impl Default for CompactionStrategy {
    fn default() -> Self {
        CompactionStrategy::size_tiered()
    }
}

/// Block compression of SSTables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    Lz4,
    None,
}

/// Table options (`WITH ...`).
#[derive(Clone, Debug, PartialEq)]
pub struct TableOptions {
    pub gc_grace_seconds: u32,
    pub default_time_to_live: u32,
    pub compaction: CompactionStrategy,
    pub compression: Compression,
    /// Uncompressed size of one SSTable data block (Cassandra's `chunk_length_in_kb`).
    pub chunk_length_bytes: u32,
    pub comment: String,
    /// Opaque per-table metadata kept by front ends, by name (Cassandra's
    /// `system_schema.tables.extensions`, where ScyllaDB's Alternator keeps a DynamoDB
    /// table's tags). The engine ignores it; the replica persists it with the schema.
    pub extensions: BTreeMap<String, Vec<u8>>,
    /// Options Cassandra keeps that khata reports as given without acting on them.
    pub reported: ReportedOptions,
    /// A counter table (the `counter` flag of Cassandra's `system_schema.tables.flags`): its
    /// regular and static columns are counters, and it stays a counter table once its last
    /// counter column is dropped.
    pub counter: bool,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            gc_grace_seconds: 864_000,
            default_time_to_live: 0,
            compaction: CompactionStrategy::default(),
            compression: Compression::default(),
            chunk_length_bytes: 16 * 1024,
            comment: String::new(),
            extensions: BTreeMap::new(),
            counter: false,
            reported: ReportedOptions::default(),
        }
    }
}

/// Table options of Cassandra's that khata validates as Cassandra does and keeps as given, so
/// that `DESCRIBE`, `system_schema.tables` and drivers' metadata show what the user wrote; khata
/// behaves its own way whatever they say (its caches, bloom filters, checksums and read
/// repair are not tuned per table).
#[derive(Clone, Debug, PartialEq)]
pub struct ReportedOptions {
    pub additional_write_policy: String,
    pub bloom_filter_fp_chance: f64,
    /// `keys` and `rows_per_partition`, as Cassandra's `CachingParams.asMap` writes them.
    pub caching: BTreeMap<String, String>,
    pub cdc: bool,
    pub crc_check_chance: f64,
    pub max_index_interval: i32,
    pub memtable_flush_period_in_ms: i32,
    pub min_index_interval: i32,
    pub read_repair: String,
    pub speculative_retry: String,
    /// The `compaction` map as Cassandra keeps it (`CompactionParams.asMap`: the options given,
    /// the class in full, the thresholds' defaults added); empty: the map of
    /// [`TableOptions::compaction`].
    pub compaction: BTreeMap<String, String>,
    /// The `compression` map as Cassandra keeps it (`CompressionParams.asMap`: the compressor
    /// named in full); empty: the map of [`TableOptions::compression`].
    pub compression: BTreeMap<String, String>,
}

impl Default for ReportedOptions {
    /// Cassandra 4.1's defaults.
    fn default() -> Self {
        ReportedOptions {
            additional_write_policy: "99p".into(),
            bloom_filter_fp_chance: 0.01,
            caching: BTreeMap::from([
                ("keys".to_string(), "ALL".to_string()),
                ("rows_per_partition".to_string(), "NONE".to_string()),
            ]),
            cdc: false,
            crc_check_chance: 1.0,
            max_index_interval: 2048,
            memtable_flush_period_in_ms: 0,
            min_index_interval: 128,
            read_repair: "BLOCKING".into(),
            speculative_retry: "99p".into(),
            compaction: BTreeMap::new(),
            compression: BTreeMap::new(),
        }
    }
}

/// A table.
#[derive(Clone, Debug, PartialEq)]
pub struct TableDef {
    pub id: Uuid,
    pub keyspace: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub options: TableOptions,
}

impl TableDef {
    /// Partition key columns in key order.
    pub fn partition_key(&self) -> Vec<&ColumnDef> {
        let mut cols: Vec<&ColumnDef> = self
            .columns
            .iter()
            .filter(|c| matches!(c.kind, ColumnKind::PartitionKey { .. }))
            .collect();
        cols.sort_by_key(|c| match c.kind {
            ColumnKind::PartitionKey { position } => position,
            _ => unreachable!("filtered to partition key columns"),
        });
        cols
    }

    /// Clustering columns in key order, with their orders.
    pub fn clustering(&self) -> Vec<(&ColumnDef, ClusteringOrder)> {
        let mut cols: Vec<(&ColumnDef, u16, ClusteringOrder)> = self
            .columns
            .iter()
            .filter_map(|c| match c.kind {
                ColumnKind::Clustering { position, order } => Some((c, position, order)),
                _ => None,
            })
            .collect();
        cols.sort_by_key(|(_, p, _)| *p);
        cols.into_iter().map(|(c, _, o)| (c, o)).collect()
    }

    pub fn column(&self, name: &str) -> Option<&ColumnDef> {
        self.columns.iter().find(|c| c.name == name)
    }

    pub fn column_by_id(&self, id: ColumnId) -> Option<&ColumnDef> {
        self.columns.iter().find(|c| c.id == id)
    }
}
