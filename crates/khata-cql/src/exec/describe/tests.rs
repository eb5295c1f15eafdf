//! The CREATE texts against what Cassandra 4.1 prints for the same schema.

use std::collections::BTreeMap;
use std::sync::Arc;

use khata_coordinator::catalog::{DroppedColumn, IndexDef, KeyspaceSchema, TableSchema, UserType};
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CompactionStrategy, Compression, CqlType, KeyspaceDef,
    Replication, TableDef, TableOptions,
};
use uuid::Uuid;

use super::{Kind, create, keyspace_elements, types_by_dependency};

/// The options of a table created without `WITH`, as Cassandra 4.1 prints them.
const DEFAULT_OPTIONS: &str = "additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = ''
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
    AND memtable = 'default'
    AND crc_check_chance = 1.0
    AND default_time_to_live = 0
    AND extensions = {}
    AND gc_grace_seconds = 864000
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair = 'BLOCKING'
    AND speculative_retry = '99p';";

fn column(name: &str, ty: CqlType, kind: ColumnKind) -> ColumnDef {
    ColumnDef {
        id: khata_coordinator::catalog::column_id(name),
        name: name.to_string(),
        ty,
        kind,
    }
}

fn pk(position: u16) -> ColumnKind {
    ColumnKind::PartitionKey { position }
}

fn ck(position: u16, order: ClusteringOrder) -> ColumnKind {
    ColumnKind::Clustering { position, order }
}

fn table(keyspace: &str, name: &str, columns: Vec<ColumnDef>) -> TableSchema {
    TableSchema {
        def: TableDef {
            id: Uuid::from_u128(0x5a1e_0000_0000_4000_8000_0000_0000_0001),
            keyspace: keyspace.to_string(),
            name: name.to_string(),
            columns,
            options: TableOptions::default(),
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    }
}

fn line_type(frozen: bool) -> CqlType {
    CqlType::Udt {
        keyspace: "shop".into(),
        name: "line".into(),
        fields: vec![("sku".into(), CqlType::Text), ("qty".into(), CqlType::Int)],
        frozen,
    }
}

fn list(element: CqlType, frozen: bool) -> CqlType {
    CqlType::List {
        element: Box::new(element),
        frozen,
    }
}

#[test]
fn compound_key_desc_order_statics_and_collections() {
    // Written in a different order than Cassandra prints it: Cassandra puts the key first,
    // then static columns, then regular ones, simple before collections, each by name.
    let t = table(
        "shop",
        "orders",
        vec![
            column(
                "meta",
                CqlType::Map {
                    key: Box::new(CqlType::Text),
                    value: Box::new(CqlType::Text),
                    frozen: false,
                },
                ColumnKind::Regular,
            ),
            column("item", CqlType::Int, ck(1, ClusteringOrder::Asc)),
            column("total", CqlType::Bigint, ColumnKind::Regular),
            column(
                "tags",
                CqlType::Set {
                    element: Box::new(CqlType::Text),
                    frozen: false,
                },
                ColumnKind::Static,
            ),
            column("region", CqlType::Int, pk(1)),
            column("lines", list(line_type(true), false), ColumnKind::Regular),
            column("note", CqlType::Text, ColumnKind::Static),
            column("placed", CqlType::Timestamp, ck(0, ClusteringOrder::Desc)),
            column("amount", CqlType::Decimal, ColumnKind::Regular),
            column("customer", CqlType::Text, pk(0)),
            column("shipping", line_type(true), ColumnKind::Regular),
            column(
                "history",
                list(list(CqlType::Int, true), true),
                ColumnKind::Regular,
            ),
        ],
    );
    let expected = format!(
        "CREATE TABLE shop.orders (
    customer text,
    region int,
    placed timestamp,
    item int,
    note text static,
    tags set<text> static,
    amount decimal,
    history frozen<list<frozen<list<int>>>>,
    shipping frozen<line>,
    total bigint,
    lines list<frozen<line>>,
    meta map<text, text>,
    PRIMARY KEY ((customer, region), placed, item)
) WITH CLUSTERING ORDER BY (placed DESC, item ASC)
    AND {DEFAULT_OPTIONS}"
    );
    assert_eq!(create::table(&t, false), expected);
}

#[test]
fn single_column_key_and_quoted_identifiers() {
    let t = table(
        "ks",
        "Users",
        vec![
            column("select", CqlType::Text, ColumnKind::Regular),
            column("userId", CqlType::Uuid, pk(0)),
            column("key", CqlType::Int, ColumnKind::Regular),
            column("Name", CqlType::Text, ColumnKind::Regular),
            column("with\"quote", CqlType::Boolean, ColumnKind::Regular),
            column("profile", line_type(false), ColumnKind::Regular),
        ],
    );
    let expected = format!(
        "CREATE TABLE ks.\"Users\" (
    \"userId\" uuid PRIMARY KEY,
    \"Name\" text,
    key int,
    \"select\" text,
    \"with\"\"quote\" boolean,
    profile line
) WITH {DEFAULT_OPTIONS}"
    );
    assert_eq!(create::table(&t, false), expected);
}

#[test]
fn clustering_without_statics_and_one_key_column() {
    let t = table(
        "ks",
        "events",
        vec![
            column("day", CqlType::Date, pk(0)),
            column("at", CqlType::Timeuuid, ck(0, ClusteringOrder::Asc)),
        ],
    );
    let expected = format!(
        "CREATE TABLE ks.events (
    day date,
    at timeuuid,
    PRIMARY KEY (day, at)
) WITH CLUSTERING ORDER BY (at ASC)
    AND {DEFAULT_OPTIONS}"
    );
    assert_eq!(create::table(&t, false), expected);
}

#[test]
fn table_options_as_set() {
    let mut t = table(
        "ks",
        "t",
        vec![
            column("k", CqlType::Int, pk(0)),
            column("v", CqlType::Text, ColumnKind::Regular),
        ],
    );
    t.def.options = TableOptions {
        gc_grace_seconds: 3600,
        default_time_to_live: 86_400,
        compaction: CompactionStrategy::leveled(),
        compression: Compression::None,
        chunk_length_bytes: 16 * 1024,
        comment: "it's a test".into(),
        extensions: Default::default(),
        counter: false,
        reported: Default::default(),
    };
    let text = create::table(&t, false);
    for line in [
        "    AND comment = 'it''s a test'\n",
        "    AND compaction = {'class': 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy', 'fanout_size': '10', 'sstable_size_in_mb': '160'}\n",
        "    AND compression = {'enabled': 'false'}\n",
        "    AND default_time_to_live = 86400\n",
        "    AND gc_grace_seconds = 3600\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
}

#[test]
fn with_internals_shows_the_id_and_dropped_columns() {
    let mut t = table(
        "ks",
        "t",
        vec![
            column("k", CqlType::Int, pk(0)),
            column("c", CqlType::Int, ck(0, ClusteringOrder::Asc)),
            column("v", CqlType::Text, ColumnKind::Regular),
        ],
    );
    t.dropped = vec![
        DroppedColumn {
            name: "old".into(),
            ty: line_type(true),
            dropped_time: 1_700_000_000_000_000,
            is_static: false,
        },
        DroppedColumn {
            name: "v".into(),
            ty: CqlType::Int,
            dropped_time: 1_600_000_000_000_000,
            is_static: false,
        },
    ];
    // In a HashMap of two ByteBuffer keys (table size 4, then 16), "v" (hash 149) iterates
    // before "old" (hash 129350): buckets 1 and 3.
    let expected = format!(
        "CREATE TABLE ks.t (
    k int,
    c int,
    v int,
    old frozen<tuple<text, int>>,
    PRIMARY KEY (k, c)
) WITH ID = 5a1e0000-0000-4000-8000-000000000001
    AND CLUSTERING ORDER BY (c ASC)
    AND {DEFAULT_OPTIONS}
ALTER TABLE ks.t DROP v USING TIMESTAMP 1600000000000000;
ALTER TABLE ks.t ADD v text;
ALTER TABLE ks.t DROP old USING TIMESTAMP 1700000000000000;"
    );
    assert_eq!(create::table(&t, true), expected);
}

#[test]
fn keyspaces() {
    let simple = KeyspaceDef {
        name: "ks".into(),
        replication: Replication::Simple {
            replication_factor: 3,
        },
        durable_writes: true,
    };
    assert_eq!(
        create::keyspace(&simple),
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '3'}  AND durable_writes = true;"
    );
    // Cassandra prints the datacenters in its HashMap's order: dc2 before dc1.
    let nts = KeyspaceDef {
        name: "Multi".into(),
        replication: Replication::NetworkTopology {
            datacenters: BTreeMap::from([("dc1".to_string(), 1), ("dc2".to_string(), 1)]),
        },
        durable_writes: false,
    };
    assert_eq!(
        create::keyspace(&nts),
        "CREATE KEYSPACE \"Multi\" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc2': '1', 'dc1': '1'}  AND durable_writes = false;"
    );
    let local = KeyspaceDef {
        name: "system".into(),
        replication: Replication::Local,
        durable_writes: true,
    };
    assert_eq!(
        create::keyspace(&local),
        "CREATE KEYSPACE system WITH replication = {'class': 'LocalStrategy'}  AND durable_writes = true;"
    );
}

#[test]
fn user_types_and_indexes() {
    let t = UserType {
        keyspace: "shop".into(),
        name: "Address".into(),
        fields: vec![
            ("street".into(), CqlType::Text),
            ("Zip".into(), CqlType::Int),
            ("lines".into(), list(line_type(true), true)),
        ],
    };
    assert_eq!(
        create::user_type(&t),
        "CREATE TYPE shop.\"Address\" (\n    street text,\n    \"Zip\" int,\n    lines frozen<list<frozen<line>>>\n);"
    );
    let orders = table("shop", "orders", vec![column("k", CqlType::Int, pk(0))]);
    let index = IndexDef {
        name: "orders_v_idx".into(),
        target: "v".into(),
        custom: None,
    };
    assert_eq!(
        create::index(&orders.def, &index),
        "CREATE INDEX orders_v_idx ON shop.orders (v);"
    );
}

#[test]
fn custom_indexes_name_their_class_and_options() {
    let orders = table("shop", "orders", vec![column("k", CqlType::Int, pk(0))]);
    let mut index = IndexDef {
        name: "Embedding".into(),
        target: "emb".into(),
        custom: Some(khata_coordinator::catalog::CustomIndex {
            class_name: "StorageAttachedIndex".into(),
            options: Default::default(),
        }),
    };
    assert_eq!(
        create::index(&orders.def, &index),
        "CREATE CUSTOM INDEX \"Embedding\" ON shop.orders (emb) USING 'StorageAttachedIndex';"
    );
    let options = index.custom.as_mut().unwrap();
    options
        .options
        .insert("similarity_function".into(), "dot_product".into());
    options
        .options
        .insert("optimize_for".into(), "recall".into());
    assert_eq!(
        create::index(&orders.def, &index),
        "CREATE CUSTOM INDEX \"Embedding\" ON shop.orders (emb) USING 'StorageAttachedIndex' \
         WITH OPTIONS = {'optimize_for': 'recall', 'similarity_function': 'dot_product'};"
    );
}

#[test]
fn a_keyspace_lists_types_by_dependency_then_tables_by_name() {
    let mut ks = KeyspaceSchema::new(KeyspaceDef {
        name: "shop".into(),
        replication: Replication::Simple {
            replication_factor: 1,
        },
        durable_writes: true,
    });
    // "address" uses "zone": zone comes first although it sorts last.
    let zone = UserType {
        keyspace: "shop".into(),
        name: "zone".into(),
        fields: vec![("id".into(), CqlType::Int)],
    };
    let address = UserType {
        keyspace: "shop".into(),
        name: "address".into(),
        fields: vec![("zone".into(), zone.as_type(true))],
    };
    let basket = UserType {
        keyspace: "shop".into(),
        name: "basket".into(),
        fields: vec![("n".into(), CqlType::Int)],
    };
    for t in [zone, address, basket] {
        ks.types.insert(t.name.clone(), t);
    }
    for name in ["Zeta", "alpha", "beta"] {
        ks.tables.insert(
            name.to_string(),
            Arc::new(table("shop", name, vec![column("k", CqlType::Int, pk(0))])),
        );
    }
    let names: Vec<&str> = types_by_dependency(&ks)
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["zone", "address", "basket"]);
    let elements = keyspace_elements(&ks, false, false);
    let listed: Vec<(Kind, &str)> = elements.iter().map(|e| (e.kind, e.name.as_str())).collect();
    assert_eq!(
        listed,
        [
            (Kind::Keyspace, "shop"),
            (Kind::Type, "zone"),
            (Kind::Type, "address"),
            (Kind::Type, "basket"),
            (Kind::Table, "alpha"),
            (Kind::Table, "beta"),
            (Kind::Table, "Zeta"),
        ]
    );
    assert_eq!(keyspace_elements(&ks, true, false).len(), 1);
}

#[test]
fn identifiers_quoted_as_cassandra_quotes_them() {
    for (name, printed) in [
        ("plain_1", "plain_1"),
        ("key", "key"),
        ("type", "type"),
        ("select", "\"select\""),
        ("table", "\"table\""),
        ("Mixed", "\"Mixed\""),
        ("1st", "\"1st\""),
        ("a\"b", "\"a\"\"b\""),
        ("", "\"\""),
    ] {
        assert_eq!(create::maybe_quote(name), printed, "{name}");
    }
}
