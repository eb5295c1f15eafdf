//! User types and the stored schema: a type still used by another type or by a table cannot be
//! dropped (the schema read back at start-up would name a type that is gone), a dropped column
//! of a user type is recorded with the type expanded to a tuple (as Cassandra records it), and
//! a record written by an older node under the type's name does not keep the node from
//! starting once the type is gone.

use bytes::Bytes;
use khata_replica::rows::{ReadRowExt, RowWriter, SysValue, read_rows};
use khata_replica::storage::Mutation;
use khata_replica::{
    DroppedColumn, Replica, ReplicaError, SchemaChange, TableSchema, UserType, system_tables,
};
use khata_types::schema::{ColumnDef, ColumnKind, CqlType, TableDef, TableOptions};
use khata_types::token::{DecoratedKey, Token};
use uuid::Uuid;

mod support;
use support::{column, keyspace};

fn open(dir: &std::path::Path, host: Uuid) -> Replica {
    support::open(dir, host, vec![Token(-5), Token(7)])
}

fn user_type(name: &str, fields: Vec<(&str, CqlType)>) -> UserType {
    UserType {
        keyspace: "ks".into(),
        name: name.into(),
        fields: fields.into_iter().map(|(n, t)| (n.into(), t)).collect(),
    }
}

fn table(name: &str, columns: Vec<ColumnDef>) -> TableSchema {
    TableSchema {
        def: TableDef {
            id: Uuid::new_v4(),
            keyspace: "ks".into(),
            name: name.into(),
            columns,
            options: TableOptions::default(),
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    }
}

fn invalid(result: Result<khata_replica::SchemaEvent, ReplicaError>, message: &str) {
    match result {
        Err(ReplicaError::Invalid(m)) => assert_eq!(m, message),
        other => panic!("expected Invalid({message:?}), got {other:?}"),
    }
}

fn drop_type(replica: &Replica, name: &str) -> Result<khata_replica::SchemaEvent, ReplicaError> {
    replica.change_schema(SchemaChange::DropType {
        keyspace: "ks".into(),
        name: name.into(),
    })
}

#[test]
fn a_type_in_use_cannot_be_dropped_and_the_schema_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let host = Uuid::new_v4();
    let replica = open(dir.path(), host);
    keyspace(&replica);
    let inner = user_type("inner_t", vec![("x", CqlType::Int)]);
    replica
        .change_schema(SchemaChange::CreateType(inner.clone()))
        .unwrap();
    for name in ["outer_t", "other_t"] {
        replica
            .change_schema(SchemaChange::CreateType(user_type(
                name,
                vec![("i", inner.as_type(true))],
            )))
            .unwrap();
    }
    invalid(
        drop_type(&replica, "inner_t"),
        "Cannot drop user type 'ks.inner_t' as it is still used by user types other_t, outer_t",
    );
    let outer = replica.schema().user_type("ks", "outer_t").unwrap().clone();
    for name in ["t1", "t2"] {
        replica
            .change_schema(SchemaChange::CreateTable(table(
                name,
                vec![
                    column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
                    column(
                        "o",
                        CqlType::List {
                            element: Box::new(outer.as_type(true)),
                            frozen: false,
                        },
                        ColumnKind::Regular,
                    ),
                ],
            )))
            .unwrap();
    }
    invalid(
        drop_type(&replica, "outer_t"),
        "Cannot drop user type 'ks.outer_t' as it is still used by tables t1, t2",
    );
    match drop_type(&replica, "nope") {
        Err(ReplicaError::NotFound(m)) => assert_eq!(m, "Type 'ks.nope' doesn't exist"),
        other => panic!("{other:?}"),
    }
    match replica.change_schema(SchemaChange::DropType {
        keyspace: "no_ks".into(),
        name: "t".into(),
    }) {
        Err(ReplicaError::NotFound(m)) => assert_eq!(m, "Type 'no_ks.t' doesn't exist"),
        other => panic!("{other:?}"),
    }
    drop_type(&replica, "other_t").unwrap();
    replica.close().unwrap();
    drop(replica);

    let replica = open(dir.path(), host);
    let schema = replica.schema();
    let ks = schema.keyspace("ks").unwrap();
    assert_eq!(
        ks.types.keys().collect::<Vec<_>>(),
        vec!["inner_t", "outer_t"]
    );
    assert!(ks.tables.contains_key("t1") && ks.tables.contains_key("t2"));
    replica.close().unwrap();
}

fn dropped_column_rows(replica: &Replica) -> Vec<(String, String)> {
    let table = system_tables::dropped_columns();
    let key = DecoratedKey::new(Bytes::from_static(b"ks"));
    let now = replica.clock().now_seconds();
    let read = replica
        .read(
            table.id,
            &key,
            &[khata_types::clustering::full_range()],
            false,
            None,
            now,
        )
        .unwrap();
    read_rows(&table, &key, &read.partition, now)
        .unwrap()
        .iter()
        .map(|r| (r.text("column_name").unwrap(), r.text("type").unwrap()))
        .collect()
}

#[test]
fn a_dropped_user_type_column_outlives_its_type() {
    let dir = tempfile::tempdir().unwrap();
    let host = Uuid::new_v4();
    let replica = open(dir.path(), host);
    keyspace(&replica);
    let addr = user_type(
        "addr",
        vec![("street", CqlType::Text), ("zip", CqlType::Int)],
    );
    replica
        .change_schema(SchemaChange::CreateType(addr.clone()))
        .unwrap();
    let t = table(
        "t",
        vec![
            column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
            column("fa", addr.as_type(true), ColumnKind::Regular),
            column("old", addr.as_type(true), ColumnKind::Regular),
        ],
    );
    replica
        .change_schema(SchemaChange::CreateTable(t.clone()))
        .unwrap();
    let mut next = t.clone();
    next.def.columns.truncate(1);
    for name in ["fa", "old"] {
        next.dropped.push(DroppedColumn {
            name: name.into(),
            ty: addr.as_type(true),
            dropped_time: 1,
            is_static: false,
        });
    }
    replica
        .change_schema(SchemaChange::AlterTable(next))
        .unwrap();
    let expanded = "frozen<tuple<text, int>>".to_string();
    assert_eq!(
        dropped_column_rows(&replica),
        vec![("fa".into(), expanded.clone()), ("old".into(), expanded)]
    );

    // What a node before this fix recorded: the type's name.
    let dropped = system_tables::dropped_columns();
    let (key, update) = RowWriter::new(&dropped)
        .set("keyspace_name", SysValue::Text("ks".into()))
        .set("table_name", SysValue::Text("t".into()))
        .set("column_name", SysValue::Text("old".into()))
        .set("dropped_time", SysValue::Timestamp(1))
        .set("kind", SysValue::Text("regular".into()))
        .set("type", SysValue::Text("frozen<addr>".into()))
        .build(
            replica.clock().now_micros() + 1_000_000,
            replica.clock().now_seconds(),
        )
        .unwrap();
    replica
        .apply(vec![Mutation::new(dropped.id, key, update)], true)
        .unwrap();
    drop_type(&replica, "addr").unwrap();
    replica.close().unwrap();
    drop(replica);

    let replica = open(dir.path(), host);
    let schema = replica.schema();
    let t = schema.table("ks", "t").unwrap();
    let types: Vec<(&str, &CqlType)> = t.dropped.iter().map(|d| (d.name.as_str(), &d.ty)).collect();
    let tuple = CqlType::Tuple(vec![CqlType::Text, CqlType::Int]);
    assert_eq!(types, vec![("fa", &tuple), ("old", &CqlType::Blob)]);
    replica.close().unwrap();
}
