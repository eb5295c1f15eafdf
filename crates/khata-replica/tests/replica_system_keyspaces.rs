//! The replicated system keyspaces (`system_traces`, `system_auth`, `system_distributed`) exist
//! from the first start with Cassandra 4.1's replication and tables, take an ALTER KEYSPACE of
//! their replication, as Cassandra's do, and keep it across restarts; the node-local ones take
//! none. A `system_auth` a user created on an older khata becomes the system one.

use std::collections::BTreeMap;

use khata_replica::storage::Mutation;
use khata_replica::{ChangeKind, Replica, ReplicaError, SchemaChange, schema_tables};
use khata_types::schema::{KeyspaceDef, Replication};

mod support;

fn replication(replica: &Replica, keyspace: &str) -> Replication {
    replica
        .schema()
        .keyspace(keyspace)
        .unwrap()
        .def
        .replication
        .clone()
}

fn alter(replica: &Replica, keyspace: &str, replication: Replication) -> Result<(), ReplicaError> {
    let event = replica.change_schema(SchemaChange::AlterKeyspace(KeyspaceDef {
        name: keyspace.into(),
        replication,
        durable_writes: true,
    }))?;
    assert_eq!(event.change, ChangeKind::Updated);
    assert_eq!(event.keyspace, keyspace);
    Ok(())
}

#[test]
fn system_traces_replication_is_altered_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let nts = Replication::NetworkTopology {
        datacenters: BTreeMap::from([("datacenter1".to_string(), 1)]),
    };
    {
        let replica = support::open_single(dir.path());
        assert_eq!(
            replication(&replica, "system_traces"),
            Replication::Simple {
                replication_factor: 2
            }
        );
        let before = replica.schema().version;
        alter(&replica, "system_traces", nts.clone()).unwrap();
        assert_eq!(replication(&replica, "system_traces"), nts);
        assert_ne!(replica.schema().version, before);
        // Its tables are still there, and user keyspaces are untouched.
        assert!(replica.schema().table("system_traces", "events").is_some());
        support::keyspace(&replica);
        assert!(replica.schema().keyspace("ks").is_some());
        replica.close().unwrap();
    }
    let replica = support::open_single(dir.path());
    assert_eq!(replication(&replica, "system_traces"), nts);
    assert!(replica.schema().keyspace("ks").is_some());
    // The node-local ones stay refused.
    let local = Replication::Simple {
        replication_factor: 1,
    };
    assert!(matches!(
        alter(&replica, "system", local.clone()),
        Err(ReplicaError::Invalid(_))
    ));
    assert!(matches!(
        alter(&replica, "system_schema", local),
        Err(ReplicaError::Invalid(_))
    ));
}

const AUTH_TABLES: [&str; 5] = [
    "network_permissions",
    "resource_role_permissons_index",
    "role_members",
    "role_permissions",
    "roles",
];
const DISTRIBUTED_TABLES: [&str; 4] = [
    "parent_repair_history",
    "partition_denylist",
    "repair_history",
    "view_build_status",
];

fn table_names(replica: &Replica, keyspace: &str) -> Vec<String> {
    let schema = replica.schema();
    schema
        .keyspace(keyspace)
        .unwrap()
        .tables
        .keys()
        .cloned()
        .collect()
}

#[test]
fn system_auth_and_system_distributed_exist_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    let simple = |replication_factor| Replication::Simple { replication_factor };
    assert_eq!(replication(&replica, "system_auth"), simple(1));
    assert_eq!(replication(&replica, "system_distributed"), simple(3));
    assert_eq!(table_names(&replica, "system_auth"), AUTH_TABLES);
    assert_eq!(
        table_names(&replica, "system_distributed"),
        DISTRIBUTED_TABLES
    );
    // A CREATE of either finds it there; a DROP is refused.
    for name in ["system_auth", "system_distributed"] {
        let def = KeyspaceDef {
            name: name.into(),
            replication: simple(1),
            durable_writes: true,
        };
        let created = replica.change_schema(SchemaChange::CreateKeyspace(def));
        assert!(
            matches!(created, Err(ReplicaError::AlreadyExists { .. })),
            "{created:?}"
        );
        let dropped = replica.change_schema(SchemaChange::DropKeyspace(name.into()));
        assert!(
            matches!(dropped, Err(ReplicaError::Invalid(_))),
            "{dropped:?}"
        );
    }
    let nts = Replication::NetworkTopology {
        datacenters: BTreeMap::from([("datacenter1".to_string(), 2)]),
    };
    alter(&replica, "system_distributed", nts.clone()).unwrap();
    replica.close().unwrap();
    let replica = support::open_single(dir.path());
    assert_eq!(replication(&replica, "system_distributed"), nts);
    assert_eq!(
        table_names(&replica, "system_distributed"),
        DISTRIBUTED_TABLES
    );
}

/// An older khata took `CREATE KEYSPACE system_auth` as a user keyspace: a row in
/// `system_schema.keyspaces` and nothing else. The node starts with it as the system keyspace,
/// its replication as given, and the system tables under it.
#[test]
fn a_user_made_system_auth_of_an_older_khata_becomes_the_system_one() {
    let dir = tempfile::tempdir().unwrap();
    let nts = Replication::NetworkTopology {
        datacenters: BTreeMap::from([("datacenter1".to_string(), 1)]),
    };
    {
        let replica = support::open_single(dir.path());
        // What the older khata left: the keyspace's row alone, no tables and no storage.
        let ts = replica.clock().now_micros();
        let now = replica.clock().now_seconds();
        let user = KeyspaceDef {
            name: "system_auth".into(),
            replication: nts.clone(),
            durable_writes: true,
        };
        let writes = schema_tables::keyspace_drop("system_auth", ts, now)
            .into_iter()
            .chain(schema_tables::keyspace_writes(&user, ts + 1, now).unwrap());
        let mutations = writes
            .map(|w| Mutation::new(w.table.id, w.key, w.update))
            .collect();
        replica.apply(mutations, true).unwrap();
        for table in replica
            .schema()
            .keyspace("system_auth")
            .unwrap()
            .tables
            .values()
        {
            replica.engine().drop_table(table.def.id).unwrap();
        }
        replica.close().unwrap();
    }
    let replica = support::open_single(dir.path());
    assert_eq!(replication(&replica, "system_auth"), nts);
    assert_eq!(table_names(&replica, "system_auth"), AUTH_TABLES);
    let roles = replica
        .schema()
        .table("system_auth", "roles")
        .unwrap()
        .def
        .id;
    assert!(replica.engine().tables().iter().any(|s| s.id == roles));
    // Its rows in system_schema are the system keyspace's again, tables and all.
    replica.close().unwrap();
    let replica = support::open_single(dir.path());
    assert_eq!(replication(&replica, "system_auth"), nts);
    assert_eq!(table_names(&replica, "system_auth"), AUTH_TABLES);
}
