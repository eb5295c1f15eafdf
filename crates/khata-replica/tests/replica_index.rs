//! Secondary indexes in the replica: entries written with the base rows, stale entries
//! skipped and removed at read time, paging by the resume entry, and a build that a crash
//! interrupted done again when the replica opens.

use std::ops::Bound;

use bytes::Bytes;
use khata_replica::index::index_table_id;
use khata_replica::rows::RowWriter;
use khata_replica::rows::SysValue;
use khata_replica::storage::Mutation;
use khata_replica::{IndexDef, IndexQuery, Replica, SchemaChange, TableSchema};
use khata_types::clustering::full_range;
use khata_types::schema::{ClusteringOrder, ColumnKind, CqlType};
use khata_types::token::DecoratedKey;

mod support;
use support::column;

/// `ks.t (k int, c int, v text, PRIMARY KEY (k, c))`, in a new keyspace.
fn create_table(replica: &Replica) -> TableSchema {
    support::keyspace(replica);
    support::create_table(
        replica,
        "t",
        vec![
            column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
            column(
                "c",
                CqlType::Int,
                ColumnKind::Clustering {
                    position: 0,
                    order: ClusteringOrder::Asc,
                },
            ),
            column("v", CqlType::Text, ColumnKind::Regular),
        ],
    )
}

fn create_index(replica: &Replica) {
    replica
        .change_schema(SchemaChange::CreateIndex {
            keyspace: "ks".into(),
            table: "t".into(),
            index: IndexDef {
                name: "t_v_idx".into(),
                target: "v".into(),
                custom: None,
            },
        })
        .unwrap();
}

fn write(replica: &Replica, table: &TableSchema, k: i32, c: i32, v: &str, ts: i64) {
    let (key, update) = RowWriter::new(&table.def)
        .set("k", SysValue::Int(k))
        .set("c", SysValue::Int(c))
        .set("v", SysValue::Text(v.into()))
        .build(ts, 0)
        .unwrap();
    replica
        .apply(vec![Mutation::new(table.def.id, key, update)], true)
        .unwrap();
}

fn query(replica: &Replica, table: &TableSchema, v: &str, limit: usize) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let mut resume = None;
    loop {
        let result = replica
            .index_query(&IndexQuery {
                table: table.def.id,
                index: "t_v_idx".into(),
                value: Bytes::copy_from_slice(v.as_bytes()),
                start: Bound::Unbounded,
                end: Bound::Unbounded,
                resume: resume.clone(),
                resume_within: None,
                skip_partition: false,
                row_limit: limit,
                now: 0,
            })
            .unwrap();
        let mut page = 0;
        for (key, partition) in &result.partitions {
            let k = i32::from_be_bytes(key.key[..].try_into().unwrap());
            for clustering in partition.rows.keys() {
                // The encoding of an int clustering value: a header byte, then the value with
                // its sign bit flipped.
                let raw: [u8; 4] = clustering[1..5].try_into().unwrap();
                let c = (u32::from_be_bytes(raw) ^ 0x8000_0000) as i32;
                out.push((k, c));
                page += 1;
            }
        }
        assert!(page <= limit, "a page holds at most its limit");
        match result.resume {
            Some(r) => resume = Some(r),
            None => return out,
        }
    }
}

fn live_entries(replica: &Replica, table: &TableSchema, v: &str) -> usize {
    let id = index_table_id(table.def.id, "t_v_idx");
    let read = replica
        .engine()
        .read(
            id,
            &DecoratedKey::new(Bytes::copy_from_slice(v.as_bytes())),
            &[full_range()],
            false,
            None,
            0,
        )
        .unwrap();
    read.partition.live_rows(0).count()
}

fn sorted(mut v: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    v.sort();
    v
}

#[test]
fn entries_follow_the_base_rows_and_stale_ones_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    let table = create_table(&replica);
    create_index(&replica);
    for k in 0..20 {
        for c in 0..3 {
            write(
                &replica,
                &table,
                k,
                c,
                if k % 2 == 0 { "even" } else { "odd" },
                10,
            );
        }
    }
    let even = query(&replica, &table, "even", 7);
    assert_eq!(even.len(), 30);
    assert_eq!(
        sorted(even.clone()),
        (0..20)
            .step_by(2)
            .flat_map(|k| (0..3).map(move |c| (k, c)))
            .collect::<Vec<_>>()
    );
    // Paging gives the same rows as one big page, in the same (token) order.
    assert_eq!(query(&replica, &table, "even", 1000), even);

    // Overwrite five rows: their "even" entries are stale until a query removes them.
    for k in [0, 2, 4, 6, 8] {
        write(&replica, &table, k, 1, "changed", 20);
    }
    assert_eq!(live_entries(&replica, &table, "even"), 30);
    assert_eq!(query(&replica, &table, "even", 1000).len(), 25);
    assert_eq!(live_entries(&replica, &table, "even"), 25);
    assert_eq!(query(&replica, &table, "changed", 1000).len(), 5);

    // An older write of the old value loses to the newer one, in the table and the index.
    write(&replica, &table, 0, 1, "even", 15);
    assert_eq!(query(&replica, &table, "even", 1000).len(), 25);
    // A newer one wins, and is found though an older entry for it was deleted.
    write(&replica, &table, 0, 1, "even", 30);
    assert_eq!(query(&replica, &table, "even", 1000).len(), 26);
}

#[test]
fn an_interrupted_build_is_done_again_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let table = {
        let replica = support::open_single(dir.path());
        let table = create_table(&replica);
        for k in 0..50 {
            write(&replica, &table, k, 0, "x", 10);
        }
        create_index(&replica);
        assert_eq!(query(&replica, &table, "x", 1000).len(), 50);
        // Undo the build as a crash in the middle of it would leave it: no marker, some
        // entries missing.
        let id = index_table_id(table.def.id, "t_v_idx");
        replica.engine().truncate(id).unwrap();
        write(&replica, &table, 7, 0, "x", 11);
        assert_eq!(query(&replica, &table, "x", 1000).len(), 1);
        replica.close().unwrap();
        table
    };
    let replica = support::open_single(dir.path());
    assert_eq!(query(&replica, &table, "x", 1000).len(), 50);
    replica.close().unwrap();
    // Built indexes are not built again.
    let replica = support::open_single(dir.path());
    assert_eq!(query(&replica, &table, "x", 13).len(), 50);
}

#[test]
fn dropping_the_index_or_the_table_drops_its_storage() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    let table = create_table(&replica);
    create_index(&replica);
    let id = index_table_id(table.def.id, "t_v_idx");
    assert!(replica.engine().tables().iter().any(|s| s.id == id));
    replica
        .change_schema(SchemaChange::DropIndex {
            keyspace: "ks".into(),
            name: "t_v_idx".into(),
        })
        .unwrap();
    assert!(!replica.engine().tables().iter().any(|s| s.id == id));
    create_index(&replica);
    assert!(replica.engine().tables().iter().any(|s| s.id == id));
    replica
        .change_schema(SchemaChange::DropTable {
            keyspace: "ks".into(),
            table: "t".into(),
        })
        .unwrap();
    assert!(!replica.engine().tables().iter().any(|s| s.id == id));
}
