//! The CREATE statements `DESCRIBE` returns, character for character as Cassandra 4.1 prints
//! them (`KeyspaceMetadata.toCqlString`, `TableMetadata.toCqlString`, `UserType.toCqlString`,
//! `IndexMetadata.toCqlString`, over `CqlBuilder`'s four-space indentation).
//!
//! A table's columns come in Cassandra's create order: the partition key, the clustering
//! columns, then the static columns and then the regular ones, each group in
//! `ColumnMetadata`'s order (simple columns before non-frozen collections and UDTs, then by
//! name). Options are the ones `system_schema.tables` reports for the table, in Cassandra's
//! order (see `schema_tables.rs` in khata-replica, which writes the same values).

use std::cmp::Ordering;

use khata_coordinator::catalog::{DroppedColumn, IndexDef, TableSchema, UserType};
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef,
};
use khata_types::table_options::{reported_compaction_map, reported_compression_map};
use khata_types::type_text::type_text;

use super::java_order;

/// An identifier as Cassandra prints it (`ColumnIdentifier.maybeQuote`): bare when it reads
/// `[a-z][a-z0-9_]*` and is not a reserved keyword, double-quoted otherwise.
pub(super) fn maybe_quote(name: &str) -> String {
    khata_types::type_text::quote_identifier(name)
}

/// A string literal: single-quoted, inner quotes doubled (`CqlBuilder.appendWithSingleQuotes`).
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `{'k': 'v', ...}` in key order (`CqlBuilder.append(Map)` sorts through a `TreeMap`).
fn quoted_map<'a>(entries: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let mut entries: Vec<_> = entries.into_iter().collect();
    entries.sort();
    let body: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{}: {}", quoted(k), quoted(v)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// `CREATE KEYSPACE ks WITH replication = {...}  AND durable_writes = true;` (the two spaces
/// are Cassandra's).
pub(super) fn keyspace(def: &KeyspaceDef) -> String {
    format!(
        "CREATE KEYSPACE {} WITH replication = {}  AND durable_writes = {};",
        maybe_quote(&def.name),
        replication(&def.replication),
        def.durable_writes
    )
}

/// A virtual keyspace as Cassandra describes one: a warning, and the structure in a comment.
pub(super) fn virtual_keyspace(def: &KeyspaceDef) -> String {
    format!(
        "/*\nWarning: Keyspace {name} is a virtual keyspace and cannot be recreated with CQL.\n\
         Structure, for reference:\nVIRTUAL KEYSPACE {name};\n*/",
        name = maybe_quote(&def.name)
    )
}

/// A virtual table as Cassandra describes one: a warning, and in a comment its columns and
/// primary key as `CREATE TABLE` gives them, with its comment as the only option.
pub(super) fn virtual_table(t: &TableSchema) -> String {
    let create = table(t, false);
    let columns = create
        .split_once("\n) WITH ")
        .map_or(create.as_str(), |(columns, _)| columns);
    let columns = columns.strip_prefix("CREATE TABLE ").unwrap_or(columns);
    format!(
        "/*\nWarning: Table {name} is a virtual table and cannot be recreated with CQL.\n\
         Structure, for reference:\nVIRTUAL TABLE {columns}\n) WITH comment = {comment};\n*/",
        name = table_name(&t.def),
        comment = quoted(&t.def.options.comment),
    )
}

/// The replication map as `ReplicationParams.appendCqlTo` writes it: the strategy's simple
/// class name first, then the options in the order of Cassandra's `HashMap` of them.
fn replication(replication: &Replication) -> String {
    let (class, mut options): (&str, Vec<(String, String)>) = match replication {
        Replication::Simple { replication_factor } => (
            "SimpleStrategy",
            vec![(
                "replication_factor".to_string(),
                replication_factor.to_string(),
            )],
        ),
        Replication::NetworkTopology { datacenters } => (
            "NetworkTopologyStrategy",
            datacenters
                .iter()
                .map(|(dc, rf)| (dc.clone(), rf.to_string()))
                .collect(),
        ),
        Replication::Local => ("LocalStrategy", Vec::new()),
    };
    // `ReplicationParams.fromMap` copies the stored map, `class` included, into a HashMap
    // and removes `class`; the stored map comes in key order (a CQL map), which decides the
    // order inside a bucket. The sort is stable and the options are already in key order.
    let capacity = java_order::copied_capacity(options.len() + 1);
    options.sort_by_key(|(k, _)| java_order::bucket(java_order::string_hash(k), capacity));
    let mut out = format!("{{'class': {}", quoted(class));
    for (k, v) in &options {
        out.push_str(&format!(", {}: {}", quoted(k), quoted(v)));
    }
    out.push('}');
    out
}

/// `CREATE TYPE ks.t (\n    f type,\n    ...\n);`
pub(super) fn user_type(t: &UserType) -> String {
    let fields: Vec<String> = t
        .fields
        .iter()
        .map(|(name, ty)| format!("    {} {}", maybe_quote(name), type_text(ty)))
        .collect();
    format!(
        "CREATE TYPE {}.{} (\n{}\n);",
        maybe_quote(&t.keyspace),
        maybe_quote(&t.name),
        fields.join(",\n")
    )
}

/// `CREATE INDEX i ON ks.t (target);` (the target as kept in the index's options), or for a
/// custom index Cassandra 5.0's `IndexMetadata.appendCqlTo`: `CREATE CUSTOM INDEX i ON ks.t
/// (target) USING 'class'`, then ` WITH OPTIONS = {'k': 'v', ...}` (sorted, as `CqlBuilder`
/// appends a map) when it has options besides its target and class.
pub(super) fn index(table: &TableDef, index: &IndexDef) -> String {
    let Some(custom) = &index.custom else {
        return format!(
            "CREATE INDEX {} ON {} ({});",
            maybe_quote(&index.name),
            table_name(table),
            index.target
        );
    };
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let mut text = format!(
        "CREATE CUSTOM INDEX {} ON {} ({}) USING {}",
        maybe_quote(&index.name),
        table_name(table),
        index.target,
        quote(&custom.class_name)
    );
    if !custom.options.is_empty() {
        let options: Vec<String> = custom
            .options
            .iter()
            .map(|(k, v)| format!("{}: {}", quote(k), quote(v)))
            .collect();
        text.push_str(&format!(" WITH OPTIONS = {{{}}}", options.join(", ")));
    }
    text.push(';');
    text
}

fn table_name(def: &TableDef) -> String {
    format!("{}.{}", maybe_quote(&def.keyspace), maybe_quote(&def.name))
}

/// The position of a static or regular column in Cassandra's create order
/// (`ColumnMetadata.compareTo` within `Columns`): simple before complex, then the
/// `comparisonOrder` name prefix (the first six bytes, the first byte's top bit flipped, so
/// names starting with a non-ASCII character come first), then the whole name's bytes.
fn non_key_order(a: &ColumnDef, b: &ColumnDef) -> Ordering {
    fn prefix(name: &str) -> u64 {
        let bytes = name.as_bytes();
        let mut prefix = 0u64;
        for i in 0..8 {
            prefix = (prefix << 8) | u64::from(bytes.get(i).copied().unwrap_or(0));
        }
        (prefix ^ (1 << 63)) >> 16
    }
    let key = |c: &ColumnDef| (c.ty.is_multi_cell(), prefix(&c.name));
    key(a)
        .cmp(&key(b))
        .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
}

/// Every column in Cassandra's create order.
fn columns_in_create_order(def: &TableDef) -> Vec<&ColumnDef> {
    let mut statics: Vec<&ColumnDef> = Vec::new();
    let mut regulars: Vec<&ColumnDef> = Vec::new();
    for c in &def.columns {
        match c.kind {
            ColumnKind::Static => statics.push(c),
            ColumnKind::Regular => regulars.push(c),
            ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. } => {}
        }
    }
    statics.sort_by(|a, b| non_key_order(a, b));
    regulars.sort_by(|a, b| non_key_order(a, b));
    let mut out = def.partition_key();
    out.extend(def.clustering().into_iter().map(|(c, _)| c));
    out.extend(statics);
    out.extend(regulars);
    out
}

/// `name type[ static]` (`ColumnMetadata.appendCqlTo`).
fn column_definition(name: &str, ty: &CqlType, is_static: bool) -> String {
    let mut out = format!("{} {}", maybe_quote(name), type_text(ty));
    if is_static {
        out.push_str(" static");
    }
    out
}

/// A dropped column's type as Cassandra records it: user types become tuples of their
/// fields (`SchemaKeyspace` stores dropped types with user types expanded).
fn without_user_types(ty: &CqlType) -> CqlType {
    match ty {
        CqlType::Udt { fields, .. } => {
            CqlType::Tuple(fields.iter().map(|(_, f)| without_user_types(f)).collect())
        }
        CqlType::List { element, frozen } => CqlType::List {
            element: Box::new(without_user_types(element)),
            frozen: *frozen,
        },
        CqlType::Set { element, frozen } => CqlType::Set {
            element: Box::new(without_user_types(element)),
            frozen: *frozen,
        },
        CqlType::Map { key, value, frozen } => CqlType::Map {
            key: Box::new(without_user_types(key)),
            value: Box::new(without_user_types(value)),
            frozen: *frozen,
        },
        CqlType::Tuple(elements) => {
            CqlType::Tuple(elements.iter().map(without_user_types).collect())
        }
        CqlType::Vector { element, dimension } => CqlType::Vector {
            element: Box::new(without_user_types(element)),
            dimension: *dimension,
        },
        other => other.clone(),
    }
}

/// The dropped columns in the order Cassandra iterates them after loading the table from
/// `system_schema.dropped_columns` (rows in name order put one by one into a `HashMap`, which
/// `TableMetadata.Builder` copies into another).
fn dropped_in_java_order(dropped: &[DroppedColumn]) -> Vec<&DroppedColumn> {
    let loaded = java_order::grown_capacity(dropped.len());
    let copied = java_order::copied_capacity(dropped.len());
    let mut out: Vec<&DroppedColumn> = dropped.iter().collect();
    out.sort_by_cached_key(|d| {
        let hash = java_order::byte_buffer_hash(d.name.as_bytes());
        (
            java_order::bucket(hash, copied),
            java_order::bucket(hash, loaded),
            d.name.clone().into_bytes(),
        )
    });
    out
}

/// `CREATE TABLE ...` as `TableMetadata.toCqlString(withInternals, withInternals, false)`
/// writes it: with internals, the table id and the dropped columns (defined in the column
/// list, then dropped again, and re-added when a column of that name exists now).
pub(super) fn table(table: &TableSchema, internals: bool) -> String {
    let def = &table.def;
    let name = table_name(def);
    let partition_key = def.partition_key();
    let clustering = def.clustering();
    let single_column_key = partition_key.len() == 1 && clustering.is_empty();
    let dropped = if internals {
        dropped_in_java_order(&table.dropped)
    } else {
        Vec::new()
    };
    let is_dropped = |name: &str| dropped.iter().any(|d| d.name == name);

    let mut out = format!("CREATE TABLE {name} (\n");
    let columns = columns_in_create_order(def);
    for (i, c) in columns.iter().enumerate() {
        if is_dropped(&c.name) {
            // Re-added after a drop: defined by the ALTER TABLE ... ADD below.
            continue;
        }
        out.push_str("    ");
        out.push_str(&column_definition(
            &c.name,
            &c.ty,
            c.kind == ColumnKind::Static,
        ));
        if single_column_key && matches!(c.kind, ColumnKind::PartitionKey { .. }) {
            out.push_str(" PRIMARY KEY");
        }
        if !single_column_key || !dropped.is_empty() || i + 1 < columns.len() {
            out.push(',');
        }
        out.push('\n');
    }
    for d in &dropped {
        out.push_str("    ");
        out.push_str(&column_definition(
            &d.name,
            &without_user_types(&d.ty),
            d.is_static,
        ));
        // Cassandra's condition here looks at the exhausted column iterator, so the last
        // dropped column of a table keyed by one column gets no comma; kept as printed.
        if !single_column_key {
            out.push(',');
        }
        out.push('\n');
    }
    if !single_column_key {
        let names = |cols: &[&ColumnDef]| -> String {
            cols.iter()
                .map(|c| maybe_quote(&c.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str("    PRIMARY KEY (");
        if partition_key.len() > 1 {
            out.push_str(&format!("({})", names(&partition_key)));
        } else {
            out.push_str(&names(&partition_key));
        }
        if !clustering.is_empty() {
            let clustering_columns: Vec<&ColumnDef> = clustering.iter().map(|(c, _)| *c).collect();
            out.push_str(", ");
            out.push_str(&names(&clustering_columns));
        }
        out.push_str(")\n");
    }
    out.push_str(") WITH ");
    if internals {
        out.push_str(&format!("ID = {}\n    AND ", def.id));
    }
    if !clustering.is_empty() {
        let orders: Vec<String> = clustering
            .iter()
            .map(|(c, order)| {
                let order = match order {
                    ClusteringOrder::Asc => "ASC",
                    ClusteringOrder::Desc => "DESC",
                };
                format!("{} {order}", maybe_quote(&c.name))
            })
            .collect();
        out.push_str(&format!(
            "CLUSTERING ORDER BY ({})\n    AND ",
            orders.join(", ")
        ));
    }
    out.push_str(&options(def));
    out.push(';');
    for d in &dropped {
        out.push_str(&format!(
            "\nALTER TABLE {name} DROP {} USING TIMESTAMP {};",
            maybe_quote(&d.name),
            d.dropped_time
        ));
        if let Some(c) = def.column(&d.name) {
            out.push_str(&format!(
                "\nALTER TABLE {name} ADD {};",
                column_definition(&c.name, &c.ty, c.kind == ColumnKind::Static)
            ));
        }
    }
    out
}

/// The `WITH` options in `TableParams.appendCqlTo`'s order, as khata reports them in
/// `system_schema.tables`.
fn options(def: &TableDef) -> String {
    let o = &def.options;
    let r = &o.reported;
    let lines = [
        format!(
            "additional_write_policy = {}",
            quoted(&r.additional_write_policy)
        ),
        format!(
            "bloom_filter_fp_chance = {}",
            super::super::ddl::java_double(r.bloom_filter_fp_chance)
        ),
        format!("caching = {}", quoted_map(&r.caching)),
        format!("cdc = {}", r.cdc),
        format!("comment = {}", quoted(&o.comment)),
        format!("compaction = {}", quoted_map(&reported_compaction_map(o))),
        format!("compression = {}", quoted_map(&reported_compression_map(o))),
        "memtable = 'default'".to_string(),
        format!(
            "crc_check_chance = {}",
            super::super::ddl::java_double(r.crc_check_chance)
        ),
        format!("default_time_to_live = {}", o.default_time_to_live),
        "extensions = {}".to_string(),
        format!("gc_grace_seconds = {}", o.gc_grace_seconds),
        format!("max_index_interval = {}", r.max_index_interval),
        format!(
            "memtable_flush_period_in_ms = {}",
            r.memtable_flush_period_in_ms
        ),
        format!("min_index_interval = {}", r.min_index_interval),
        format!("read_repair = {}", quoted(&r.read_repair)),
        format!("speculative_retry = {}", quoted(&r.speculative_retry)),
    ];
    lines.join("\n    AND ")
}
