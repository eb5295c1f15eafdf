//! An index's storage and its place in the schema go together: an index whose storage cannot
//! be made is not created, one that an older khata recorded with a name too long for any
//! storage is dropped from the schema when the replica opens (rather than keeping it from
//! opening), and an index built before empty values were indexed is built again.

use std::ops::Bound;

use bytes::Bytes;
use khata_replica::index::index_table_id;
use khata_replica::rows::{RowWriter, SysValue};
use khata_replica::schema_tables;
use khata_replica::storage::Mutation;
use khata_replica::{IndexDef, IndexQuery, Replica, ReplicaError, SchemaChange, TableSchema};
use khata_types::cell::LivenessInfo;
use khata_types::partition::Partition;
use khata_types::row::Row;
use khata_types::schema::{ColumnKind, CqlType};
use khata_types::token::DecoratedKey;

mod support;
use support::column;

/// `ks.t (k int PRIMARY KEY, v text)`, in a new keyspace.
fn create_table(replica: &Replica) -> TableSchema {
    support::keyspace(replica);
    support::create_table(
        replica,
        "t",
        vec![
            column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
            column("v", CqlType::Text, ColumnKind::Regular),
        ],
    )
}

fn create_index(replica: &Replica, name: &str) -> Result<(), ReplicaError> {
    replica
        .change_schema(SchemaChange::CreateIndex {
            keyspace: "ks".into(),
            table: "t".into(),
            index: IndexDef {
                name: name.into(),
                target: "v".into(),
                custom: None,
            },
        })
        .map(|_| ())
}

fn write(replica: &Replica, table: &TableSchema, k: i32, v: &str) {
    let (key, update) = RowWriter::new(&table.def)
        .set("k", SysValue::Int(k))
        .set("v", SysValue::Text(v.into()))
        .build(10, 0)
        .unwrap();
    replica
        .apply(vec![Mutation::new(table.def.id, key, update)], true)
        .unwrap();
}

/// The keys of the rows index `index` finds under `v`.
fn query(replica: &Replica, table: &TableSchema, index: &str, v: &str) -> Vec<i32> {
    let result = replica
        .index_query(&IndexQuery {
            table: table.def.id,
            index: index.into(),
            value: Bytes::copy_from_slice(v.as_bytes()),
            start: Bound::Unbounded,
            end: Bound::Unbounded,
            resume: None,
            resume_within: None,
            skip_partition: false,
            row_limit: 100,
            now: 0,
        })
        .unwrap();
    let mut keys: Vec<i32> = result
        .partitions
        .iter()
        .map(|(key, _)| i32::from_be_bytes(key.key[..].try_into().unwrap()))
        .collect();
    keys.sort();
    keys
}

fn index_names(replica: &Replica) -> Vec<String> {
    let schema = replica.schema();
    let table = schema.table("ks", "t").unwrap();
    table.indexes.iter().map(|i| i.name.clone()).collect()
}

#[test]
fn an_index_whose_storage_cannot_be_made_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    let table = create_table(&replica);
    write(&replica, &table, 1, "a");
    // A file where the index's directory would go: creating its storage fails.
    let id = index_table_id(table.def.id, "i");
    let obstacle = dir
        .path()
        .join("data/ks")
        .join(format!("t.i-{}", id.simple()));
    std::fs::write(&obstacle, b"in the way").unwrap();
    let failed = create_index(&replica, "i");
    assert!(
        matches!(failed, Err(ReplicaError::Storage(_))),
        "{failed:?}"
    );
    assert!(index_names(&replica).is_empty());
    replica.close().unwrap();

    // Nor is it in the stored schema: the replica opens without it, and once the way is clear
    // the index can be made.
    let replica = support::open_single(dir.path());
    assert!(index_names(&replica).is_empty());
    std::fs::remove_file(&obstacle).unwrap();
    create_index(&replica, "i").unwrap();
    assert_eq!(query(&replica, &table, "i", "a"), [1]);
}

#[test]
fn a_name_too_long_for_the_index_storage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    create_table(&replica);
    // `t.<name>-<32 hex digits>` is one file name of at most 255 bytes.
    let refused = create_index(&replica, &"x".repeat(221));
    assert!(
        matches!(&refused, Err(ReplicaError::Invalid(m)) if m.contains("more than 220 characters")),
        "{refused:?}"
    );
    let refused = create_index(&replica, "índice");
    assert!(
        matches!(&refused, Err(ReplicaError::Invalid(m)) if m == "Illegal index name índice"),
        "{refused:?}"
    );
    assert!(index_names(&replica).is_empty());
    create_index(&replica, &"x".repeat(220)).unwrap();
    assert_eq!(index_names(&replica), ["x".repeat(220)]);
}

#[test]
fn an_index_recorded_with_a_name_no_storage_can_have_is_dropped_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(500);
    let table = {
        let replica = support::open_single(dir.path());
        let table = create_table(&replica);
        create_index(&replica, "t_v_idx").unwrap();
        for k in 0..10 {
            write(&replica, &table, k, "a");
        }
        // What an older khata left: the index in `system_schema.indexes`, no storage (its
        // directory name was too long to create).
        let mut recorded = replica.schema().table("ks", "t").unwrap().as_ref().clone();
        recorded.indexes.push(IndexDef {
            name: long.clone(),
            target: "v".into(),
            custom: None,
        });
        let ts = replica.clock().now_micros();
        let writes = schema_tables::table_writes(&recorded, ts, 0).unwrap();
        let mutations = writes
            .into_iter()
            .map(|w| Mutation::new(w.table.id, w.key, w.update))
            .collect();
        replica.engine().apply_batch(mutations, true).unwrap();
        replica.close().unwrap();
        table
    };
    let replica = support::open_single(dir.path());
    assert_eq!(index_names(&replica), ["t_v_idx"]);
    assert_eq!(
        query(&replica, &table, "t_v_idx", "a"),
        (0..10).collect::<Vec<_>>()
    );
    write(&replica, &table, 10, "a");
    replica.close().unwrap();
    // The drop was recorded: the next open finds nothing to drop.
    let replica = support::open_single(dir.path());
    assert_eq!(index_names(&replica), ["t_v_idx"]);
    assert_eq!(query(&replica, &table, "t_v_idx", "a").len(), 11);
}

#[test]
fn an_index_built_before_empty_values_were_indexed_is_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let table = {
        let replica = support::open_single(dir.path());
        let table = create_table(&replica);
        write(&replica, &table, 1, "");
        write(&replica, &table, 2, "a");
        create_index(&replica, "t_v_idx").unwrap();
        assert_eq!(query(&replica, &table, "t_v_idx", ""), [1]);
        // The index as an older khata built it: no entry for the empty value, and the build
        // marked by the row with the empty clustering in the empty value's partition.
        let id = index_table_id(table.def.id, "t_v_idx");
        replica.engine().truncate(id).unwrap();
        write(&replica, &table, 2, "a");
        let mut marker = Partition::new();
        marker.add_row(
            Bytes::new(),
            Row {
                liveness: Some(LivenessInfo::new(5, None)),
                ..Row::default()
            },
        );
        replica
            .engine()
            .apply_batch(
                vec![Mutation::new(id, DecoratedKey::new(Bytes::new()), marker)],
                true,
            )
            .unwrap();
        assert_eq!(query(&replica, &table, "t_v_idx", ""), Vec::<i32>::new());
        replica.close().unwrap();
        table
    };
    let replica = support::open_single(dir.path());
    assert_eq!(query(&replica, &table, "t_v_idx", ""), [1]);
    assert_eq!(query(&replica, &table, "t_v_idx", "a"), [2]);
}
