//! Schema changes are written to `system_schema` and read back on restart; the node keeps its
//! host id and tokens; `system.local` reflects the schema version.

use std::collections::BTreeMap;

use khata_replica::rows::{ReadRowExt, read_rows};
use khata_replica::{Replica, ReplicaError, SchemaChange, TableSchema, UserType, system_tables};
use khata_types::schema::{
    ClusteringOrder, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef, TableOptions,
};
use khata_types::token::{DecoratedKey, Token};
use uuid::Uuid;

mod support;
use support::column;

fn open(dir: &std::path::Path, host: Uuid) -> Replica {
    support::open(dir, host, vec![Token(-5), Token(7)])
}

fn chat_table() -> TableSchema {
    TableSchema {
        def: TableDef {
            id: Uuid::new_v4(),
            keyspace: "chat".into(),
            name: "messages_by_channel".into(),
            columns: vec![
                column(
                    "channel_id",
                    CqlType::Uuid,
                    ColumnKind::PartitionKey { position: 0 },
                ),
                column(
                    "bucket",
                    CqlType::Int,
                    ColumnKind::PartitionKey { position: 1 },
                ),
                column(
                    "message_id",
                    CqlType::Timeuuid,
                    ColumnKind::Clustering {
                        position: 0,
                        order: ClusteringOrder::Desc,
                    },
                ),
                column("author", CqlType::Text, ColumnKind::Regular),
                column(
                    "tags",
                    CqlType::Set {
                        element: Box::new(CqlType::Text),
                        frozen: false,
                    },
                    ColumnKind::Regular,
                ),
                column(
                    "place",
                    CqlType::Udt {
                        keyspace: "chat".into(),
                        name: "address".into(),
                        fields: vec![("street".into(), CqlType::Text)],
                        frozen: true,
                    },
                    ColumnKind::Regular,
                ),
                column("topic", CqlType::Text, ColumnKind::Static),
            ],
            options: TableOptions {
                gc_grace_seconds: 3600,
                comment: "hello".into(),
                // Front ends' metadata (DynamoDB's) round-trips through
                // system_schema.tables.extensions, bytes exactly.
                extensions: BTreeMap::from([
                    ("khata:test".to_string(), vec![0, 1, 255]),
                    ("empty".to_string(), Vec::new()),
                ]),
                ..TableOptions::default()
            },
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    }
}

#[test]
fn schema_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let host = Uuid::new_v4();
    let replica = open(dir.path(), host);
    let empty_version = replica.schema().version;
    replica
        .change_schema(SchemaChange::CreateKeyspace(KeyspaceDef {
            name: "chat".into(),
            replication: Replication::NetworkTopology {
                datacenters: BTreeMap::from([("datacenter1".to_string(), 3)]),
            },
            durable_writes: true,
        }))
        .unwrap();
    replica
        .change_schema(SchemaChange::CreateType(UserType {
            keyspace: "chat".into(),
            name: "address".into(),
            fields: vec![("street".into(), CqlType::Text)],
        }))
        .unwrap();
    let table = chat_table();
    replica
        .change_schema(SchemaChange::CreateTable(table.clone()))
        .unwrap();
    assert!(matches!(
        replica.change_schema(SchemaChange::CreateTable(table.clone())),
        Err(ReplicaError::AlreadyExists { .. })
    ));
    let version = replica.schema().version;
    assert_ne!(version, empty_version);
    let before = replica.schema();
    replica.close().unwrap();
    drop(replica);

    let replica = open(dir.path(), Uuid::new_v4());
    assert_eq!(replica.host_id(), host, "the host id is kept");
    assert_eq!(replica.tokens(), &[Token(-5), Token(7)]);
    let after = replica.schema();
    assert_eq!(after.version, version);
    let loaded = after.table("chat", "messages_by_channel").unwrap();
    let mut expected = before
        .table("chat", "messages_by_channel")
        .unwrap()
        .def
        .columns
        .clone();
    let mut got = loaded.def.columns.clone();
    expected.sort_by(|a, b| a.name.cmp(&b.name));
    got.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(got, expected);
    assert_eq!(loaded.def.options, table.def.options);
    assert_eq!(loaded.def.id, table.def.id);
    assert!(after.table("system_schema", "columns").is_some());

    // system.local carries the current schema version.
    let local = system_tables::local();
    let key = DecoratedKey::new(bytes::Bytes::from_static(b"local"));
    let now = replica.clock().now_seconds();
    let read = replica
        .read(
            local.id,
            &key,
            &[khata_types::clustering::full_range()],
            false,
            None,
            now,
        )
        .unwrap();
    let rows = read_rows(&local, &key, &read.partition, now).unwrap();
    assert_eq!(rows[0].uuid_opt("schema_version").unwrap(), Some(version));
    assert_eq!(rows[0].text("release_version").unwrap(), "4.1.0");

    // Dropping the type is refused while a table uses it; dropping the keyspace drops all.
    assert!(matches!(
        replica.change_schema(SchemaChange::DropType {
            keyspace: "chat".into(),
            name: "address".into()
        }),
        Err(ReplicaError::Invalid(_))
    ));
    replica
        .change_schema(SchemaChange::DropKeyspace("chat".into()))
        .unwrap();
    replica.close().unwrap();
    drop(replica);
    let replica = open(dir.path(), host);
    assert!(replica.schema().keyspace("chat").is_none());
    assert_eq!(replica.schema().version, empty_version);
}
