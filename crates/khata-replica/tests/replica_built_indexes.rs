//! `system."IndexInfo"` lists the built secondary indexes by keyspace and name, as Cassandra
//! 4.1 does: a row once an index's build completes, none once it is dropped (alone, with its
//! table or with its keyspace), and the rows a data directory lacks (an index built by an
//! older khata, or one whose build a crash interrupted) written when the replica opens.

use std::ops::Bound;

use khata_replica::index::index_table_id;
use khata_replica::rows::{ReadRowExt, read_rows};
use khata_replica::system_tables;
use khata_replica::{IndexDef, Replica, SchemaChange, TableSchema};
use khata_types::schema::{ColumnKind, CqlType};

mod support;
use support::column;

/// `ks.<name> (k int PRIMARY KEY, v text)`.
fn create_table(replica: &Replica, name: &str) -> TableSchema {
    support::create_table(
        replica,
        name,
        vec![
            column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
            column("v", CqlType::Text, ColumnKind::Regular),
        ],
    )
}

fn create_index(replica: &Replica, table: &str, name: &str) {
    replica
        .change_schema(SchemaChange::CreateIndex {
            keyspace: "ks".into(),
            table: table.into(),
            index: IndexDef {
                name: name.into(),
                target: "v".into(),
                custom: None,
            },
        })
        .unwrap();
}

fn drop_index(replica: &Replica, name: &str) {
    replica
        .change_schema(SchemaChange::DropIndex {
            keyspace: "ks".into(),
            name: name.into(),
        })
        .unwrap();
}

/// What `SELECT table_name, index_name FROM system."IndexInfo"` answers.
fn listed(replica: &Replica) -> Vec<(String, String)> {
    let def = system_tables::built_indexes();
    let now = replica.clock().now_seconds();
    let page = replica
        .scan(def.id, Bound::Unbounded, Bound::Unbounded, None, 1000, now)
        .unwrap();
    assert!(page.resume.is_none());
    let mut out = Vec::new();
    for (key, partition) in &page.partitions {
        for row in read_rows(&def, key, partition, now).unwrap() {
            assert!(!row.contains_key("value"), "value stays null");
            out.push((
                row.text("table_name").unwrap(),
                row.text("index_name").unwrap(),
            ));
        }
    }
    out
}

fn pairs(names: &[(&str, &str)]) -> Vec<(String, String)> {
    names
        .iter()
        .map(|(k, i)| (k.to_string(), i.to_string()))
        .collect()
}

#[test]
fn built_indexes_are_listed_until_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    assert_eq!(listed(&replica), pairs(&[]));
    support::keyspace(&replica);
    create_table(&replica, "t");
    create_table(&replica, "u");
    create_index(&replica, "t", "t_idx");
    create_index(&replica, "u", "u_idx");
    assert_eq!(listed(&replica), pairs(&[("ks", "t_idx"), ("ks", "u_idx")]));
    drop_index(&replica, "t_idx");
    assert_eq!(listed(&replica), pairs(&[("ks", "u_idx")]));
    // Made again under the same name: listed again, after its deletion.
    create_index(&replica, "t", "t_idx");
    assert_eq!(listed(&replica), pairs(&[("ks", "t_idx"), ("ks", "u_idx")]));
    replica
        .change_schema(SchemaChange::DropTable {
            keyspace: "ks".into(),
            table: "u".into(),
        })
        .unwrap();
    assert_eq!(listed(&replica), pairs(&[("ks", "t_idx")]));
    replica.close().unwrap();
    let replica = support::open_single(dir.path());
    assert_eq!(listed(&replica), pairs(&[("ks", "t_idx")]));
    replica
        .change_schema(SchemaChange::DropKeyspace("ks".into()))
        .unwrap();
    assert_eq!(listed(&replica), pairs(&[]));
}

#[test]
fn missing_rows_are_written_on_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let replica = support::open_single(dir.path());
        support::keyspace(&replica);
        create_table(&replica, "t");
        let crashed = create_table(&replica, "u");
        create_index(&replica, "t", "old_idx");
        create_index(&replica, "u", "crashed_idx");
        // A data directory from before the table existed: no rows. And a build a crash
        // interrupted: no built marker (its storage emptied).
        replica
            .engine()
            .truncate(system_tables::built_indexes().id)
            .unwrap();
        replica
            .engine()
            .truncate(index_table_id(crashed.def.id, "crashed_idx"))
            .unwrap();
        assert_eq!(listed(&replica), pairs(&[]));
        replica.close().unwrap();
    }
    let replica = support::open_single(dir.path());
    assert_eq!(
        listed(&replica),
        pairs(&[("ks", "crashed_idx"), ("ks", "old_idx")])
    );
}
