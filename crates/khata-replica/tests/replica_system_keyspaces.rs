//! The replicated system keyspace (`system_traces`) takes an ALTER KEYSPACE of its replication,
//! as Cassandra's do, and keeps it across restarts; the node-local ones take none.

use std::collections::BTreeMap;

use khata_replica::{ChangeKind, Replica, ReplicaError, SchemaChange};
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
