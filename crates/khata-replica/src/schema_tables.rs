//! The schema stored in the `system_schema` tables, as Cassandra stores it: one row per
//! keyspace, table, column, dropped column, type and index, partitioned by keyspace name.
//!
//! A change writes (or deletes) exactly the rows of the objects it touches, at the change's
//! timestamp; at start-up the catalog is read back from these rows. The system keyspaces are
//! rewritten on every start from their definitions in code (an older node's rows for them are
//! deleted first), so that drivers find them in `system_schema` too.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use khata_types::LocalTime;
use khata_types::Timestamp;
use khata_types::cell::DeletionTime;
use khata_types::clustering::{encode_key, end_bound, start_bound};
use khata_types::partition::Partition;
use khata_types::row::Row;
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, ReportedOptions,
    TableDef, TableOptions,
};
use khata_types::table_options::{
    compaction_from_stored_map, compression_from_stored_map, reported_compaction_map,
    reported_compression_map,
};
use khata_types::token::DecoratedKey;
use khata_types::type_text::{parse_type_text, type_text};

use crate::error::{ReplicaError, Result};
use crate::rows::{ReadRow, ReadRowExt, RowWriter, SysValue};
use crate::schema::{
    CustomIndex, DroppedColumn, IndexDef, KeyspaceSchema, TableSchema, UserType, column_id,
};
use crate::system_tables;

/// A write to one system table.
#[derive(Clone, Debug)]
pub struct SystemWrite {
    pub table: TableDef,
    pub key: DecoratedKey,
    pub update: Partition,
}

fn text_key(s: &str) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(s.as_bytes()))
}

fn write(table: TableDef, (key, update): (DecoratedKey, Partition)) -> SystemWrite {
    SystemWrite { table, key, update }
}

/// The `replication` map of a keyspace.
pub fn replication_map(r: &Replication) -> Vec<(String, String)> {
    match r {
        Replication::Simple { replication_factor } => vec![
            (
                "class".into(),
                "org.apache.cassandra.locator.SimpleStrategy".into(),
            ),
            ("replication_factor".into(), replication_factor.to_string()),
        ],
        Replication::NetworkTopology { datacenters } => {
            let mut v = vec![(
                "class".to_string(),
                "org.apache.cassandra.locator.NetworkTopologyStrategy".to_string(),
            )];
            v.extend(
                datacenters
                    .iter()
                    .map(|(dc, rf)| (dc.clone(), rf.to_string())),
            );
            v
        }
        Replication::Local => vec![(
            "class".into(),
            "org.apache.cassandra.locator.LocalStrategy".into(),
        )],
    }
}

fn replication_from_map(map: &[(String, String)]) -> Result<Replication> {
    let get = |k: &str| {
        map.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let class = get("class").unwrap_or_default();
    let class = class.rsplit('.').next().unwrap_or(class);
    let rf = |v: &str| {
        v.parse::<u32>()
            .map_err(|_| ReplicaError::CorruptSchema(format!("replication factor {v}")))
    };
    match class {
        "SimpleStrategy" => Ok(Replication::Simple {
            replication_factor: rf(get("replication_factor").unwrap_or("1"))?,
        }),
        "NetworkTopologyStrategy" => Ok(Replication::NetworkTopology {
            datacenters: map
                .iter()
                .filter(|(k, _)| k != "class")
                .map(|(k, v)| Ok((k.clone(), rf(v)?)))
                .collect::<Result<_>>()?,
        }),
        "LocalStrategy" => Ok(Replication::Local),
        other => Err(ReplicaError::CorruptSchema(format!(
            "replication class {other}"
        ))),
    }
}

/// The rows that describe a keyspace (not its tables).
pub fn keyspace_writes(
    ks: &KeyspaceDef,
    ts: Timestamp,
    now: LocalTime,
) -> Result<Vec<SystemWrite>> {
    let table = system_tables::keyspaces();
    let row = RowWriter::new(&table)
        .set("keyspace_name", SysValue::Text(ks.name.clone()))
        .set("durable_writes", SysValue::Bool(ks.durable_writes))
        .set(
            "replication",
            SysValue::TextMap(replication_map(&ks.replication)),
        )
        .build(ts, now)?;
    Ok(vec![write(table.clone(), row)])
}

/// Deleting a keyspace: its partition in every `system_schema` table.
pub fn keyspace_drop(name: &str, ts: Timestamp, now: LocalTime) -> Vec<SystemWrite> {
    schema_table_defs()
        .into_iter()
        .map(|table| SystemWrite {
            table,
            key: text_key(name),
            update: Partition {
                deletion: Some(DeletionTime::new(ts, now)),
                ..Partition::default()
            },
        })
        .collect()
}

/// The `system_schema` tables that hold per-keyspace rows.
pub fn schema_table_defs() -> Vec<TableDef> {
    vec![
        system_tables::keyspaces(),
        system_tables::tables(),
        system_tables::columns(),
        system_tables::dropped_columns(),
        system_tables::types(),
        system_tables::functions(),
        system_tables::aggregates(),
        system_tables::indexes(),
        system_tables::views(),
        system_tables::triggers(),
    ]
}

fn kind_text(kind: ColumnKind) -> (&'static str, i32, &'static str) {
    match kind {
        ColumnKind::PartitionKey { position } => ("partition_key", i32::from(position), "none"),
        ColumnKind::Clustering { position, order } => (
            "clustering",
            i32::from(position),
            match order {
                ClusteringOrder::Asc => "asc",
                ClusteringOrder::Desc => "desc",
            },
        ),
        ColumnKind::Static => ("static", -1, "none"),
        ColumnKind::Regular => ("regular", -1, "none"),
    }
}

/// `system_schema.tables.flags` of a CQL table: `compound`, and `counter` for a counter table
/// (a set: sorted).
fn flags(o: &TableOptions) -> Vec<String> {
    let mut flags = vec!["compound".to_string()];
    if o.counter {
        flags.push("counter".into());
    }
    flags
}

fn options_row<'a>(w: RowWriter<'a>, t: &TableDef) -> RowWriter<'a> {
    let o = &t.options;
    let map =
        |m: std::collections::BTreeMap<String, String>| SysValue::TextMap(m.into_iter().collect());
    let r = &o.reported;
    w.set(
        "additional_write_policy",
        SysValue::Text(r.additional_write_policy.clone()),
    )
    .set(
        "bloom_filter_fp_chance",
        SysValue::Double(r.bloom_filter_fp_chance),
    )
    .set("caching", map(r.caching.clone()))
    .set("cdc", SysValue::Bool(r.cdc))
    .set("comment", SysValue::Text(o.comment.clone()))
    .set("compaction", map(reported_compaction_map(o)))
    .set("compression", map(reported_compression_map(o)))
    .set("crc_check_chance", SysValue::Double(r.crc_check_chance))
    .set(
        "default_time_to_live",
        SysValue::Int(o.default_time_to_live as i32),
    )
    .set(
        "extensions",
        SysValue::BlobMap(
            o.extensions
                .iter()
                .map(|(k, v)| (k.clone(), Bytes::copy_from_slice(v)))
                .collect(),
        ),
    )
    .set("flags", SysValue::Texts(flags(o)))
    .set("gc_grace_seconds", SysValue::Int(o.gc_grace_seconds as i32))
    .set("id", SysValue::Uuid(t.id))
    .set("max_index_interval", SysValue::Int(r.max_index_interval))
    .set(
        "memtable_flush_period_in_ms",
        SysValue::Int(r.memtable_flush_period_in_ms),
    )
    .set("min_index_interval", SysValue::Int(r.min_index_interval))
    .set("read_repair", SysValue::Text(r.read_repair.clone()))
    .set(
        "speculative_retry",
        SysValue::Text(r.speculative_retry.clone()),
    )
}

/// The rows that describe a table: its options, columns, dropped columns and indexes. Rows
/// of columns no longer in the table are deleted (the caller deletes a whole table with
/// [`table_drop`]).
pub fn table_writes(t: &TableSchema, ts: Timestamp, now: LocalTime) -> Result<Vec<SystemWrite>> {
    let def = &t.def;
    let ks = SysValue::Text(def.keyspace.clone());
    let name = SysValue::Text(def.name.clone());
    let tables = system_tables::tables();
    let mut out = vec![write(
        tables.clone(),
        options_row(
            RowWriter::new(&tables)
                .set("keyspace_name", ks.clone())
                .set("table_name", name.clone()),
            def,
        )
        .build(ts, now)?,
    )];
    // The table's column rows are replaced: a range deletion just below the new rows.
    let columns = system_tables::columns();
    let mut column_rows = Partition::new();
    let prefix = encode_key(
        &[(CqlType::Text, ClusteringOrder::Asc)],
        &[def.name.as_bytes()],
    )
    .map_err(|e| ReplicaError::Invalid(e.to_string()))?;
    column_rows.range_tombstones.add(
        start_bound(&prefix, true),
        end_bound(&prefix, true),
        DeletionTime::new(ts - 1, now),
    );
    for c in &def.columns {
        let (kind, position, order) = kind_text(c.kind);
        let (_, update) = RowWriter::new(&columns)
            .set("keyspace_name", ks.clone())
            .set("table_name", name.clone())
            .set("column_name", SysValue::Text(c.name.clone()))
            .set("clustering_order", SysValue::Text(order.into()))
            .set(
                "column_name_bytes",
                SysValue::Blob(Bytes::copy_from_slice(c.name.as_bytes())),
            )
            .set("kind", SysValue::Text(kind.into()))
            .set("position", SysValue::Int(position))
            .set("type", SysValue::Text(type_text(&c.ty)))
            .build(ts, now)?;
        column_rows.merge(update);
    }
    out.push(SystemWrite {
        table: columns,
        key: text_key(&def.keyspace),
        update: column_rows,
    });
    let dropped = system_tables::dropped_columns();
    for d in &t.dropped {
        out.push(write(
            dropped.clone(),
            RowWriter::new(&dropped)
                .set("keyspace_name", ks.clone())
                .set("table_name", name.clone())
                .set("column_name", SysValue::Text(d.name.clone()))
                .set("dropped_time", SysValue::Timestamp(d.dropped_time / 1000))
                .set(
                    "kind",
                    SysValue::Text(if d.is_static { "static" } else { "regular" }.into()),
                )
                // User types expanded to tuples, as Cassandra records a drop: the record
                // must stay readable once the type is dropped.
                .set("type", SysValue::Text(type_text(&d.ty.expand_user_types())))
                .build(ts, now)?,
        ));
    }
    let indexes = system_tables::indexes();
    let mut index_rows = Partition::new();
    index_rows.range_tombstones.add(
        start_bound(&prefix, true),
        end_bound(&prefix, true),
        DeletionTime::new(ts - 1, now),
    );
    for i in &t.indexes {
        let (_, update) = RowWriter::new(&indexes)
            .set("keyspace_name", ks.clone())
            .set("table_name", name.clone())
            .set("index_name", SysValue::Text(i.name.clone()))
            .set(
                "kind",
                SysValue::Text(
                    if i.custom.is_some() {
                        "CUSTOM"
                    } else {
                        "COMPOSITES"
                    }
                    .into(),
                ),
            )
            .set("options", SysValue::TextMap(index_options(i)))
            .build(ts, now)?;
        index_rows.merge(update);
    }
    out.push(SystemWrite {
        table: indexes,
        key: text_key(&def.keyspace),
        update: index_rows,
    });
    Ok(out)
}

/// The `options` map of an index's row: its target, and a custom index's class and options
/// (sorted by name, as the map column keeps them).
fn index_options(i: &IndexDef) -> Vec<(String, String)> {
    let mut options = std::collections::BTreeMap::new();
    options.insert("target".to_string(), i.target.clone());
    if let Some(c) = &i.custom {
        options.insert("class_name".to_string(), c.class_name.clone());
        for (k, v) in &c.options {
            options.insert(k.clone(), v.clone());
        }
    }
    options.into_iter().collect()
}

/// Deleting a table's rows (options, columns, dropped columns, indexes, triggers).
pub fn table_drop(
    keyspace: &str,
    table: &str,
    ts: Timestamp,
    now: LocalTime,
) -> Result<Vec<SystemWrite>> {
    let prefix = encode_key(
        &[(CqlType::Text, ClusteringOrder::Asc)],
        &[table.as_bytes()],
    )
    .map_err(|e| ReplicaError::Invalid(e.to_string()))?;
    let deletion = DeletionTime::new(ts, now);
    let mut out = Vec::new();
    for def in [
        system_tables::tables(),
        system_tables::columns(),
        system_tables::dropped_columns(),
        system_tables::indexes(),
        system_tables::triggers(),
    ] {
        let mut update = Partition::new();
        if def.name == "tables" {
            update.add_row(
                prefix.clone(),
                Row {
                    deletion: Some(deletion),
                    ..Row::default()
                },
            );
        } else {
            update.range_tombstones.add(
                start_bound(&prefix, true),
                end_bound(&prefix, true),
                deletion,
            );
        }
        out.push(SystemWrite {
            table: def,
            key: text_key(keyspace),
            update,
        });
    }
    Ok(out)
}

/// The row of a user-defined type.
pub fn type_writes(t: &UserType, ts: Timestamp, now: LocalTime) -> Result<Vec<SystemWrite>> {
    let types = system_tables::types();
    let row = RowWriter::new(&types)
        .set("keyspace_name", SysValue::Text(t.keyspace.clone()))
        .set("type_name", SysValue::Text(t.name.clone()))
        .set(
            "field_names",
            SysValue::Texts(t.fields.iter().map(|(n, _)| n.clone()).collect()),
        )
        .set(
            "field_types",
            SysValue::Texts(t.fields.iter().map(|(_, ty)| type_text(ty)).collect()),
        )
        .build(ts, now)?;
    Ok(vec![write(types, row)])
}

/// Deleting a user-defined type's row.
pub fn type_drop(
    keyspace: &str,
    name: &str,
    ts: Timestamp,
    now: LocalTime,
) -> Result<Vec<SystemWrite>> {
    let key = encode_key(&[(CqlType::Text, ClusteringOrder::Asc)], &[name.as_bytes()])
        .map_err(|e| ReplicaError::Invalid(e.to_string()))?;
    let mut update = Partition::new();
    update.add_row(
        key,
        Row {
            deletion: Some(DeletionTime::new(ts, now)),
            ..Row::default()
        },
    );
    Ok(vec![SystemWrite {
        table: system_tables::types(),
        key: text_key(keyspace),
        update,
    }])
}

/// The rows of every `system_schema` table, by table name, as read at start-up.
pub type StoredRows = BTreeMap<String, Vec<ReadRow>>;

fn rows<'a>(
    stored: &'a StoredRows,
    table: &str,
    keyspace: &'a str,
) -> impl Iterator<Item = &'a ReadRow> {
    stored
        .get(table)
        .into_iter()
        .flatten()
        .filter(move |r| r.text_opt("keyspace_name").ok().flatten().as_deref() == Some(keyspace))
}

fn string_map(pairs: Vec<(String, String)>) -> BTreeMap<String, String> {
    pairs.into_iter().collect()
}

/// The replicated system keyspaces' definitions as stored (an ALTER KEYSPACE may have changed
/// their replication), those of `defaults` that have rows; the others as given.
///
/// A keyspace row with no table rows under it was made by a user's `CREATE KEYSPACE` on a
/// khata that did not have that system keyspace yet (`system_auth` or `system_distributed`,
/// which such a khata accepted but could not use): its replication and `durable_writes` are
/// taken as the system keyspace's, as an ALTER KEYSPACE of it would have set them, and the
/// start rewrites its rows with the system tables under it.
pub fn load_system_keyspaces(
    stored: &StoredRows,
    defaults: Vec<KeyspaceDef>,
) -> Result<Vec<KeyspaceDef>> {
    let mut out = defaults;
    for row in stored.get("keyspaces").into_iter().flatten() {
        let name = row.text("keyspace_name")?;
        if !system_tables::is_replicated_system_keyspace(&name) {
            continue;
        }
        if rows(stored, "tables", &name).next().is_none() {
            tracing::warn!(
                keyspace = name,
                "keyspace made by a user before it was a system keyspace: taken as the system \
                 keyspace, with its replication, and given the system tables"
            );
        }
        if let Some(def) = out.iter_mut().find(|d| d.name == name) {
            def.durable_writes = row.bool_opt("durable_writes")?.unwrap_or(true);
            def.replication = replication_from_map(&row.text_map("replication")?)?;
        }
    }
    Ok(out)
}

/// The user keyspaces described by the stored rows (system keyspaces are skipped: their
/// definitions come from code).
pub fn load(stored: &StoredRows) -> Result<BTreeMap<String, KeyspaceSchema>> {
    let mut out = BTreeMap::new();
    for row in stored.get("keyspaces").into_iter().flatten() {
        let name = row.text("keyspace_name")?;
        if system_tables::is_system_keyspace(&name) {
            continue;
        }
        let def = KeyspaceDef {
            name: name.clone(),
            durable_writes: row.bool_opt("durable_writes")?.unwrap_or(true),
            replication: replication_from_map(&row.text_map("replication")?)?,
        };
        let mut ks = KeyspaceSchema::new(def);
        // Types first: columns may use them, and types may use earlier types.
        let mut pending: Vec<&ReadRow> = rows(stored, "types", &name).collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut left = Vec::new();
            for row in pending {
                let type_name = row.text("type_name")?;
                let names = row.texts("field_names")?;
                let types = row.texts("field_types")?;
                let resolved: Result<Vec<CqlType>, _> = types
                    .iter()
                    .map(|t| parse_type_text(t, &|n| ks.types.get(n).map(|u| u.as_type(true))))
                    .collect();
                match resolved {
                    Ok(types) => {
                        ks.types.insert(
                            type_name.clone(),
                            UserType {
                                keyspace: name.clone(),
                                name: type_name,
                                fields: names.into_iter().zip(types).collect(),
                            },
                        );
                    }
                    Err(_) => left.push(row),
                }
            }
            if left.len() == before {
                return Err(ReplicaError::CorruptSchema(format!(
                    "types of keyspace {name} refer to unknown types"
                )));
            }
            pending = left;
        }
        for row in rows(stored, "tables", &name) {
            let table = load_table(stored, &ks, row)?;
            ks.tables.insert(table.def.name.clone(), Arc::new(table));
        }
        out.insert(name, ks);
    }
    Ok(out)
}

/// The options khata reports as given; one missing (older rows) reads as Cassandra's default.
fn reported_options(
    row: &ReadRow,
    compaction: BTreeMap<String, String>,
    compression: BTreeMap<String, String>,
) -> Result<ReportedOptions> {
    let d = ReportedOptions::default();
    let caching = string_map(row.text_map("caching")?);
    Ok(ReportedOptions {
        additional_write_policy: row
            .text_opt("additional_write_policy")?
            .unwrap_or(d.additional_write_policy),
        bloom_filter_fp_chance: row
            .double_opt("bloom_filter_fp_chance")?
            .unwrap_or(d.bloom_filter_fp_chance),
        caching: if caching.is_empty() {
            d.caching
        } else {
            caching
        },
        cdc: row.bool_opt("cdc")?.unwrap_or(d.cdc),
        crc_check_chance: row
            .double_opt("crc_check_chance")?
            .unwrap_or(d.crc_check_chance),
        max_index_interval: row
            .int_opt("max_index_interval")?
            .unwrap_or(d.max_index_interval),
        memtable_flush_period_in_ms: row
            .int_opt("memtable_flush_period_in_ms")?
            .unwrap_or(d.memtable_flush_period_in_ms),
        min_index_interval: row
            .int_opt("min_index_interval")?
            .unwrap_or(d.min_index_interval),
        read_repair: row.text_opt("read_repair")?.unwrap_or(d.read_repair),
        speculative_retry: row
            .text_opt("speculative_retry")?
            .unwrap_or(d.speculative_retry),
        compaction,
        compression,
    })
}

fn load_table(stored: &StoredRows, ks: &KeyspaceSchema, row: &ReadRow) -> Result<TableSchema> {
    let keyspace = ks.def.name.clone();
    let name = row.text("table_name")?;
    let id = row
        .uuid_opt("id")?
        .ok_or_else(|| ReplicaError::CorruptSchema(format!("table {keyspace}.{name} has no id")))?;
    let compaction_map = string_map(row.text_map("compaction")?);
    let compaction =
        compaction_from_stored_map(&compaction_map).map_err(ReplicaError::CorruptSchema)?;
    let compression_map = string_map(row.text_map("compression")?);
    let (compression, chunk_length_bytes) =
        compression_from_stored_map(&compression_map).map_err(ReplicaError::CorruptSchema)?;
    let options = TableOptions {
        gc_grace_seconds: row.int_opt("gc_grace_seconds")?.unwrap_or(864_000).max(0) as u32,
        default_time_to_live: row.int_opt("default_time_to_live")?.unwrap_or(0).max(0) as u32,
        compaction,
        compression,
        chunk_length_bytes,
        comment: row.text_opt("comment")?.unwrap_or_default(),
        extensions: row
            .blob_map("extensions")?
            .into_iter()
            .map(|(k, v)| (k, v.to_vec()))
            .collect(),
        counter: row.texts("flags")?.iter().any(|f| f == "counter"),
        reported: reported_options(row, compaction_map, compression_map)?,
    };
    let mut options = options;
    khata_types::table_options::normalize_reported_maps(&mut options);
    let udt = |n: &str| ks.types.get(n).map(|u| u.as_type(false));
    let mut columns = Vec::new();
    for c in rows(stored, "columns", &keyspace)
        .filter(|c| c.text("table_name").ok() == Some(name.clone()))
    {
        let column_name = c.text("column_name")?;
        let ty = parse_type_text(&c.text("type")?, &udt)
            .map_err(|e| ReplicaError::CorruptSchema(e.to_string()))?;
        let position = c.int_opt("position")?.unwrap_or(-1);
        let position = u16::try_from(position).unwrap_or(0);
        let kind = match c.text("kind")?.as_str() {
            "partition_key" => ColumnKind::PartitionKey { position },
            "clustering" => ColumnKind::Clustering {
                position,
                order: if c.text_opt("clustering_order")?.as_deref() == Some("desc") {
                    ClusteringOrder::Desc
                } else {
                    ClusteringOrder::Asc
                },
            },
            "static" => ColumnKind::Static,
            "regular" => ColumnKind::Regular,
            other => {
                return Err(ReplicaError::CorruptSchema(format!("column kind {other}")));
            }
        };
        columns.push(ColumnDef {
            id: column_id(&column_name),
            name: column_name,
            ty,
            kind,
        });
    }
    // Older nodes wrote `compound` alone: a table with counter columns is a counter table.
    options.counter |= columns.iter().any(|c| c.ty == CqlType::Counter);
    let mut dropped = Vec::new();
    for d in rows(stored, "dropped_columns", &keyspace)
        .filter(|c| c.text("table_name").ok() == Some(name.clone()))
    {
        let column_name = d.text("column_name")?;
        let type_text = d.text("type")?;
        // Older nodes recorded a dropped user type column under the type's name; once the
        // type is dropped too that text no longer parses. The type only decides which
        // re-added columns may read the old cells, so it must not keep the node from
        // starting: such a column is recorded as a blob.
        let ty = parse_type_text(&type_text, &|n| ks.types.get(n).map(|u| u.as_type(true)))
            .map(|t| t.expand_user_types())
            .unwrap_or_else(|e| {
                tracing::warn!(
                    "dropped column {keyspace}.{name}.{column_name} has an unreadable type \
                     {type_text:?} ({e}); it is kept as blob"
                );
                CqlType::Blob
            });
        dropped.push(DroppedColumn {
            name: column_name,
            ty,
            dropped_time: d.timestamp_opt("dropped_time")?.unwrap_or(0) * 1000,
            is_static: d.text_opt("kind")?.as_deref() == Some("static"),
        });
    }
    let mut indexes = Vec::new();
    for i in rows(stored, "indexes", &keyspace)
        .filter(|c| c.text("table_name").ok() == Some(name.clone()))
    {
        let mut options = string_map(i.text_map("options")?);
        let target = options.remove("target").unwrap_or_default();
        // Rows an older khata wrote have no kind but COMPOSITES and no options but the target.
        let custom = (i.text_opt("kind")?.as_deref() == Some("CUSTOM")).then(|| CustomIndex {
            class_name: options.remove("class_name").unwrap_or_default(),
            options: options.into_iter().collect(),
        });
        indexes.push(IndexDef {
            name: i.text("index_name")?,
            target,
            custom,
        });
    }
    Ok(TableSchema {
        def: TableDef {
            id,
            keyspace,
            name,
            columns,
            options,
        },
        dropped,
        indexes,
    })
}
