//! `DESCRIBE CLUSTER`: one row of `cluster`, `partitioner` and `snitch`, plus
//! `range_ownership` (`map<text, list<text>>`, token range end to replica endpoints) when the
//! session uses a keyspace that is not a system keyspace, as Cassandra 4.1 answers it.

use std::net::IpAddr;

use bytes::Bytes;
use khata_coordinator::catalog::{PARTITIONER, Schema};
use khata_types::schema::Replication;

use super::{describe_column, is_system_keyspace, keyspace_not_found, rows_result};
use crate::exec::error::ExecError;
use crate::exec::{Executor, Run};
use crate::frame::{ColumnType, ResultBody};

/// What Cassandra reports with its default `endpoint_snitch: SimpleSnitch`: the configured
/// snitch is wrapped in the dynamic snitch (`dynamic_snitch: true`), whose class it names.
const SNITCH: &str = "DynamicEndpointSnitch";

/// An endpoint as Cassandra 4's `InetAddressAndPort.toString()` writes it, in the style of
/// `InetAddress.toString()` (an empty host name, then `/`): `/127.0.0.1:7000`,
/// `/[0:0:0:0:0:0:0:1]:7000` (Java writes IPv6 addresses uncompressed).
fn endpoint(address: IpAddr, port: u16) -> String {
    match address {
        IpAddr::V4(v4) => format!("/{v4}:{port}"),
        IpAddr::V6(v6) => {
            let segments: Vec<String> = v6.segments().iter().map(|s| format!("{s:x}")).collect();
            format!("/[{}]:{port}", segments.join(":"))
        }
    }
}

/// Cassandra's serialization of a `map<text, list<text>>` value (native protocol v3 and
/// later: `[int]` counts and lengths), entries in key order as `MapSerializer` sorts them.
fn serialize_ownership(mut entries: Vec<(String, Vec<String>)>) -> Bytes {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        // Lengths here are token strings and addresses, far below i32::MAX.
        out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for (key, endpoints) in &entries {
        put(&mut out, key.as_bytes());
        let mut list = Vec::new();
        list.extend_from_slice(&(endpoints.len() as i32).to_be_bytes());
        for e in endpoints {
            put(&mut list, e.as_bytes());
        }
        put(&mut out, &list);
    }
    Bytes::from(out)
}

pub(super) fn describe(
    exec: &Executor,
    schema: &Schema,
    run: &Run<'_>,
) -> Result<ResultBody, ExecError> {
    let coordinator = exec.coordinator();
    let node = coordinator.node();
    let partitioner = PARTITIONER
        .strip_prefix("org.apache.cassandra.dht.")
        .unwrap_or(PARTITIONER);
    let mut columns = vec![
        describe_column("cluster", ColumnType::Varchar),
        describe_column("partitioner", ColumnType::Varchar),
        describe_column("snitch", ColumnType::Varchar),
    ];
    let mut row = vec![
        Some(Bytes::copy_from_slice(node.cluster_name.as_bytes())),
        Some(Bytes::copy_from_slice(partitioner.as_bytes())),
        Some(Bytes::from_static(SNITCH.as_bytes())),
    ];
    if let Some(keyspace) = run.keyspace.as_deref().filter(|k| !is_system_keyspace(k)) {
        let ks = schema
            .keyspace(keyspace)
            .ok_or_else(|| keyspace_not_found(keyspace))?;
        // This node is the only one: it holds every range the keyspace replicates to its
        // datacenter, and no range of a keyspace that leaves its datacenter out.
        let replicated_here = match &ks.def.replication {
            Replication::Simple { replication_factor } => *replication_factor > 0,
            Replication::NetworkTopology { datacenters } => {
                datacenters.get(&node.data_center).is_some_and(|rf| *rf > 0)
            }
            Replication::Local => true,
        };
        let replicas = if replicated_here {
            vec![endpoint(node.listen_address, node.internode_port)]
        } else {
            Vec::new()
        };
        // Each range is named by its end token; this node's tokens end all of them.
        let entries = coordinator
            .tokens()
            .iter()
            .map(|t| (t.0.to_string(), replicas.clone()))
            .collect();
        columns.push(describe_column(
            "range_ownership",
            ColumnType::Map(
                Box::new(ColumnType::Varchar),
                Box::new(ColumnType::List(Box::new(ColumnType::Varchar))),
            ),
        ));
        row.push(Some(serialize_ownership(entries)));
    }
    rows_result(columns, &[row])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_as_java_writes_them() {
        assert_eq!(
            endpoint("127.0.0.1".parse().unwrap(), 7000),
            "/127.0.0.1:7000"
        );
        assert_eq!(
            endpoint("::1".parse().unwrap(), 7000),
            "/[0:0:0:0:0:0:0:1]:7000"
        );
    }

    #[test]
    fn ownership_map_is_sorted_by_key_bytes() {
        let bytes = serialize_ownership(vec![
            ("5".into(), vec!["a:1".into()]),
            ("-7".into(), vec![]),
        ]);
        let mut expected = Vec::new();
        expected.extend_from_slice(&2i32.to_be_bytes());
        expected.extend_from_slice(&2i32.to_be_bytes());
        expected.extend_from_slice(b"-7");
        expected.extend_from_slice(&4i32.to_be_bytes());
        expected.extend_from_slice(&0i32.to_be_bytes());
        expected.extend_from_slice(&1i32.to_be_bytes());
        expected.extend_from_slice(b"5");
        expected.extend_from_slice(&11i32.to_be_bytes());
        expected.extend_from_slice(&1i32.to_be_bytes());
        expected.extend_from_slice(&3i32.to_be_bytes());
        expected.extend_from_slice(b"a:1");
        assert_eq!(&bytes[..], &expected[..]);
    }
}
