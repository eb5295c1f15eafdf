//! The tables of the `system`, `system_schema` and `system_traces` keyspaces (and, through
//! [`crate::replicated_system_tables`], of `system_auth` and `system_distributed`), with the
//! columns and types Cassandra 4.1 gives them, because drivers and cqlsh read them on connect
//! (`../shared/reference/cql-driver-connect.md`).
//!
//! They are ordinary tables of the storage engine with fixed definitions and fixed ids (derived
//! from their names), created on every start; their definitions are in code, not in
//! `system_schema` itself, though `system_schema` lists them so that driver metadata knows them.

use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef,
    TableOptions,
};
use uuid::Uuid;

use crate::schema::column_id;

pub const SYSTEM: &str = "system";
pub const SYSTEM_SCHEMA: &str = "system_schema";
/// Query traces (`TRACING ON`): Cassandra's keyspace, tables and columns.
pub const SYSTEM_TRACES: &str = "system_traces";
pub use crate::replicated_system_tables::{SYSTEM_AUTH, SYSTEM_DISTRIBUTED};

/// Whether a keyspace is one of the node's own (not created, altered or dropped by users).
pub fn is_system_keyspace(name: &str) -> bool {
    matches!(name, SYSTEM | SYSTEM_SCHEMA)
        || is_replicated_system_keyspace(name)
        || crate::virtual_tables::is_virtual_keyspace(name)
}

/// Whether a system keyspace is replicated (`system_traces`, `system_auth`,
/// `system_distributed`): its replication may be altered, as Cassandra lets `ALTER KEYSPACE`
/// change it, and is kept in `system_schema` across restarts.
pub fn is_replicated_system_keyspace(name: &str) -> bool {
    matches!(name, SYSTEM_TRACES | SYSTEM_AUTH | SYSTEM_DISTRIBUTED)
}

/// The fixed id of a system table: a name-based UUID of `keyspace.table`.
pub fn system_table_id(keyspace: &str, table: &str) -> Uuid {
    let name = format!("{keyspace}.{table}");
    let hi = khata_types::token::murmur3_token(name.as_bytes()) as u64;
    let lo = khata_types::token::murmur3_token(format!("{name}#").as_bytes()) as u64;
    let bytes = ((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes();
    uuid::Builder::from_bytes(bytes)
        .with_variant(uuid::Variant::RFC4122)
        .with_version(uuid::Version::Md5)
        .into_uuid()
}

fn text() -> CqlType {
    CqlType::Text
}

fn frozen_map(key: CqlType, value: CqlType) -> CqlType {
    CqlType::Map {
        key: Box::new(key),
        value: Box::new(value),
        frozen: true,
    }
}

fn frozen_list(element: CqlType) -> CqlType {
    CqlType::List {
        element: Box::new(element),
        frozen: true,
    }
}

fn frozen_set(element: CqlType) -> CqlType {
    CqlType::Set {
        element: Box::new(element),
        frozen: true,
    }
}

fn text_set() -> CqlType {
    CqlType::Set {
        element: Box::new(CqlType::Text),
        frozen: false,
    }
}

/// A table definition from its key columns and regular columns.
pub(crate) fn table(
    keyspace: &str,
    name: &str,
    partition_key: &[(&str, CqlType)],
    clustering: &[(&str, CqlType)],
    regular: &[(&str, CqlType)],
) -> TableDef {
    let mut columns = Vec::new();
    for (i, (n, ty)) in partition_key.iter().enumerate() {
        columns.push(ColumnDef {
            id: column_id(n),
            name: (*n).to_string(),
            ty: ty.clone(),
            kind: ColumnKind::PartitionKey { position: i as u16 },
        });
    }
    for (i, (n, ty)) in clustering.iter().enumerate() {
        columns.push(ColumnDef {
            id: column_id(n),
            name: (*n).to_string(),
            ty: ty.clone(),
            kind: ColumnKind::Clustering {
                position: i as u16,
                order: ClusteringOrder::Asc,
            },
        });
    }
    for (n, ty) in regular {
        columns.push(ColumnDef {
            id: column_id(n),
            name: (*n).to_string(),
            ty: ty.clone(),
            kind: ColumnKind::Regular,
        });
    }
    TableDef {
        id: system_table_id(keyspace, name),
        keyspace: keyspace.to_string(),
        name: name.to_string(),
        columns,
        options: TableOptions {
            gc_grace_seconds: 0,
            ..TableOptions::default()
        },
    }
}

/// `system.local`: this node.
pub fn local() -> TableDef {
    table(
        SYSTEM,
        "local",
        &[("key", text())],
        &[],
        &[
            ("bootstrapped", text()),
            ("broadcast_address", CqlType::Inet),
            ("broadcast_port", CqlType::Int),
            ("cluster_name", text()),
            ("cql_version", text()),
            ("data_center", text()),
            ("gossip_generation", CqlType::Int),
            ("host_id", CqlType::Uuid),
            ("listen_address", CqlType::Inet),
            ("listen_port", CqlType::Int),
            ("native_protocol_version", text()),
            ("partitioner", text()),
            ("rack", text()),
            ("release_version", text()),
            ("rpc_address", CqlType::Inet),
            ("rpc_port", CqlType::Int),
            ("schema_version", CqlType::Uuid),
            ("tokens", text_set()),
        ],
    )
}

/// `system.peers`: the other nodes (protocol v4 drivers).
pub fn peers() -> TableDef {
    table(
        SYSTEM,
        "peers",
        &[("peer", CqlType::Inet)],
        &[],
        &[
            ("data_center", text()),
            ("host_id", CqlType::Uuid),
            ("preferred_ip", CqlType::Inet),
            ("rack", text()),
            ("release_version", text()),
            ("rpc_address", CqlType::Inet),
            ("schema_version", CqlType::Uuid),
            ("tokens", text_set()),
        ],
    )
}

/// `system.peers_v2`: the other nodes, with ports.
pub fn peers_v2() -> TableDef {
    table(
        SYSTEM,
        "peers_v2",
        &[("peer", CqlType::Inet)],
        &[("peer_port", CqlType::Int)],
        &[
            ("data_center", text()),
            ("host_id", CqlType::Uuid),
            ("native_address", CqlType::Inet),
            ("native_port", CqlType::Int),
            ("preferred_ip", CqlType::Inet),
            ("preferred_port", CqlType::Int),
            ("rack", text()),
            ("release_version", text()),
            ("schema_version", CqlType::Uuid),
            ("tokens", text_set()),
        ],
    )
}

/// The table options columns every `system_schema.tables` (and `views`) row has.
fn table_option_columns() -> Vec<(&'static str, CqlType)> {
    vec![
        ("additional_write_policy", text()),
        ("bloom_filter_fp_chance", CqlType::Double),
        ("caching", frozen_map(text(), text())),
        ("cdc", CqlType::Boolean),
        ("comment", text()),
        ("compaction", frozen_map(text(), text())),
        ("compression", frozen_map(text(), text())),
        ("crc_check_chance", CqlType::Double),
        ("default_time_to_live", CqlType::Int),
        ("extensions", frozen_map(text(), CqlType::Blob)),
        ("flags", frozen_set(text())),
        ("gc_grace_seconds", CqlType::Int),
        ("id", CqlType::Uuid),
        ("max_index_interval", CqlType::Int),
        ("memtable_flush_period_in_ms", CqlType::Int),
        ("min_index_interval", CqlType::Int),
        ("read_repair", text()),
        ("speculative_retry", text()),
    ]
}

pub fn keyspaces() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "keyspaces",
        &[("keyspace_name", text())],
        &[],
        &[
            ("durable_writes", CqlType::Boolean),
            ("replication", frozen_map(text(), text())),
        ],
    )
}

pub fn tables() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "tables",
        &[("keyspace_name", text())],
        &[("table_name", text())],
        &table_option_columns(),
    )
}

pub fn columns() -> TableDef {
    table(
        SYSTEM_SCHEMA,
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
    )
}

pub fn dropped_columns() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "dropped_columns",
        &[("keyspace_name", text())],
        &[("table_name", text()), ("column_name", text())],
        &[
            ("dropped_time", CqlType::Timestamp),
            ("kind", text()),
            ("type", text()),
        ],
    )
}

pub fn types() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "types",
        &[("keyspace_name", text())],
        &[("type_name", text())],
        &[
            ("field_names", frozen_list(text())),
            ("field_types", frozen_list(text())),
        ],
    )
}

pub fn functions() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "functions",
        &[("keyspace_name", text())],
        &[
            ("function_name", text()),
            ("argument_types", frozen_list(text())),
        ],
        &[
            ("argument_names", frozen_list(text())),
            ("body", text()),
            ("called_on_null_input", CqlType::Boolean),
            ("language", text()),
            ("return_type", text()),
        ],
    )
}

pub fn aggregates() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "aggregates",
        &[("keyspace_name", text())],
        &[
            ("aggregate_name", text()),
            ("argument_types", frozen_list(text())),
        ],
        &[
            ("final_func", text()),
            ("initcond", text()),
            ("return_type", text()),
            ("state_func", text()),
            ("state_type", text()),
        ],
    )
}

pub fn indexes() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "indexes",
        &[("keyspace_name", text())],
        &[("table_name", text()), ("index_name", text())],
        &[("kind", text()), ("options", frozen_map(text(), text()))],
    )
}

pub fn views() -> TableDef {
    let mut regular = vec![
        ("base_table_id", CqlType::Uuid),
        ("base_table_name", text()),
        ("include_all_columns", CqlType::Boolean),
        ("where_clause", text()),
    ];
    regular.extend(table_option_columns());
    table(
        SYSTEM_SCHEMA,
        "views",
        &[("keyspace_name", text())],
        &[("view_name", text())],
        &regular,
    )
}

pub fn triggers() -> TableDef {
    table(
        SYSTEM_SCHEMA,
        "triggers",
        &[("keyspace_name", text())],
        &[("table_name", text()), ("trigger_name", text())],
        &[("options", frozen_map(text(), text()))],
    )
}

/// `system."IndexInfo"`: the secondary indexes whose build has completed, one row each, as
/// Cassandra 4.1 keeps them (`SystemKeyspace.BuiltIndexes`; tools and tests wait on it for a
/// new index). Despite its name, `table_name` is the index's keyspace; `value` stays null.
pub fn built_indexes() -> TableDef {
    table(
        SYSTEM,
        BUILT_INDEXES,
        &[("table_name", text())],
        &[("index_name", text())],
        &[("value", CqlType::Blob)],
    )
}

/// The name of [`built_indexes`], which CQL has to quote.
pub const BUILT_INDEXES: &str = "IndexInfo";

/// `system.size_estimates`: per table and local primary token range, the partitions and their
/// mean size (Cassandra 3's layout, which Spark's connector and other tools read to split
/// their scans).
pub fn size_estimates() -> TableDef {
    table(
        SYSTEM,
        "size_estimates",
        &[("keyspace_name", text())],
        &[
            ("table_name", text()),
            ("range_start", text()),
            ("range_end", text()),
        ],
        &[
            ("mean_partition_size", CqlType::Bigint),
            ("partitions_count", CqlType::Bigint),
        ],
    )
}

/// `system.table_estimates`: the same per `range_type` (`primary`, `local_primary`), as
/// Cassandra 4 keeps it.
pub fn table_estimates() -> TableDef {
    table(
        SYSTEM,
        "table_estimates",
        &[("keyspace_name", text())],
        &[
            ("table_name", text()),
            ("range_type", text()),
            ("range_start", text()),
            ("range_end", text()),
        ],
        &[
            ("mean_partition_size", CqlType::Bigint),
            ("partitions_count", CqlType::Bigint),
        ],
    )
}

/// `system_traces.sessions`: one row per traced request.
pub fn trace_sessions() -> TableDef {
    table(
        SYSTEM_TRACES,
        "sessions",
        &[("session_id", CqlType::Uuid)],
        &[],
        &[
            ("client", CqlType::Inet),
            ("command", text()),
            ("coordinator", CqlType::Inet),
            ("coordinator_port", CqlType::Int),
            ("duration", CqlType::Int),
            (
                "parameters",
                CqlType::Map {
                    key: Box::new(text()),
                    value: Box::new(text()),
                    frozen: false,
                },
            ),
            ("request", text()),
            ("started_at", CqlType::Timestamp),
        ],
    )
}

/// `system_traces.events`: what a traced request did, one row per step.
pub fn trace_events() -> TableDef {
    table(
        SYSTEM_TRACES,
        "events",
        &[("session_id", CqlType::Uuid)],
        &[("event_id", CqlType::Timeuuid)],
        &[
            ("activity", text()),
            ("source", CqlType::Inet),
            ("source_elapsed", CqlType::Int),
            ("source_port", CqlType::Int),
            ("thread", text()),
        ],
    )
}

/// Every system table, `system` first.
pub fn all() -> Vec<TableDef> {
    let mut all = vec![
        local(),
        peers(),
        peers_v2(),
        built_indexes(),
        size_estimates(),
        table_estimates(),
        keyspaces(),
        tables(),
        columns(),
        dropped_columns(),
        types(),
        functions(),
        aggregates(),
        indexes(),
        views(),
        triggers(),
        trace_sessions(),
        trace_events(),
    ];
    all.extend(crate::replicated_system_tables::all());
    all
}

/// The definitions of the system keyspaces: `system` and `system_schema` node-local,
/// `system_traces`, `system_auth` and `system_distributed` replicated as Cassandra 4.1 creates
/// them (SimpleStrategy with two, one and three replicas: `TraceKeyspace`, `AuthKeyspace` and
/// `SystemDistributedKeyspace`'s `DEFAULT_RF`), until an ALTER KEYSPACE changes it.
pub fn keyspace_defs() -> Vec<KeyspaceDef> {
    let simple = |replication_factor| Replication::Simple { replication_factor };
    [
        (SYSTEM, Replication::Local),
        (SYSTEM_SCHEMA, Replication::Local),
        (SYSTEM_TRACES, simple(2)),
        (SYSTEM_AUTH, simple(1)),
        (SYSTEM_DISTRIBUTED, simple(3)),
    ]
    .into_iter()
    .map(|(name, replication)| KeyspaceDef {
        name: name.to_string(),
        replication,
        durable_writes: true,
    })
    .collect()
}
