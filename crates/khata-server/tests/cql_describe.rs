//! Server-side `DESCRIBE`, as cqlsh 6 sends it to a 4.x server: the result rows read through
//! the `scylla` driver, and `cqlsh -e "DESCRIBE ..."` itself when cqlsh is installed.

mod support;

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::process::Command;

use khata_server::node::Node;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use support::TestNode;

const SCHEMA: &[&str] = &[
    "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TYPE shop.address (street text, zip int)",
    "CREATE TABLE shop.orders (customer text, region int, placed timestamp, item int, \
     note text STATIC, total bigint, tags set<text>, ship frozen<address>, \
     PRIMARY KEY ((customer, region), placed, item)) \
     WITH CLUSTERING ORDER BY (placed DESC, item ASC) AND comment = 'orders'",
    "CREATE TABLE shop.\"Items\" (\"Sku\" text PRIMARY KEY, price decimal)",
];

const ORDERS: &str = "CREATE TABLE shop.orders (
    customer text,
    region int,
    placed timestamp,
    item int,
    note text static,
    ship frozen<address>,
    total bigint,
    tags set<text>,
    PRIMARY KEY ((customer, region), placed, item)
) WITH CLUSTERING ORDER BY (placed DESC, item ASC)
    AND additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = 'orders'
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

const KEYSPACE: &str = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;";

const ADDRESS: &str = "CREATE TYPE shop.address (\n    street text,\n    zip int\n);";

type Element = (String, String, String, String);
type Listed = (String, String, String);
/// `DESCRIBE CLUSTER` with a keyspace in use: cluster, partitioner, snitch, range ownership.
type ClusterWithRanges = (String, String, String, BTreeMap<String, Vec<String>>);

async fn connect(address: SocketAddr) -> Session {
    SessionBuilder::new()
        .known_node_addr(address)
        .build()
        .await
        .expect("driver connects")
}

async fn create_schema(session: &Session) {
    for statement in SCHEMA {
        session.query_unpaged(*statement, &[]).await.unwrap();
    }
}

async fn column_names(session: &Session, statement: &str) -> Vec<String> {
    let result = session
        .query_unpaged(statement, &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    result
        .column_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect()
}

async fn elements(session: &Session, statement: &str) -> Vec<Element> {
    session
        .query_unpaged(statement, &[])
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
        .into_rows_result()
        .unwrap()
        .rows::<Element>()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

async fn listed(session: &Session, statement: &str) -> Vec<Listed> {
    session
        .query_unpaged(statement, &[])
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
        .into_rows_result()
        .unwrap()
        .rows::<Listed>()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

async fn invalid(session: &Session, statement: &str) -> String {
    let e = session.query_unpaged(statement, &[]).await.unwrap_err();
    match &e {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(DbError::Invalid, m)) => {
            m.clone()
        }
        _ => panic!("{statement}: expected Invalid, got {e}"),
    }
}

fn kinds_and_names(rows: &[Element]) -> Vec<(&str, &str)> {
    rows.iter()
        .map(|(_, kind, name, _)| (kind.as_str(), name.as_str()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_results_through_the_driver() {
    let mut node = TestNode::start().await;
    let session = connect(node.cql_address()).await;
    create_schema(&session).await;

    assert_eq!(
        column_names(&session, "DESCRIBE KEYSPACE shop").await,
        ["keyspace_name", "type", "name", "create_statement"]
    );
    let rows = elements(&session, "DESCRIBE KEYSPACE shop").await;
    assert_eq!(
        kinds_and_names(&rows),
        [
            ("keyspace", "shop"),
            ("type", "address"),
            ("table", "\"Items\""),
            ("table", "orders"),
        ]
    );
    assert!(rows.iter().all(|r| r.0 == "shop"));
    assert_eq!(rows[0].3, KEYSPACE);
    assert_eq!(rows[1].3, ADDRESS);
    assert!(
        rows[2]
            .3
            .starts_with("CREATE TABLE shop.\"Items\" (\n    \"Sku\" text PRIMARY KEY,\n    price decimal\n) WITH additional_write_policy = '99p'\n"),
        "{}",
        rows[2].3
    );
    assert_eq!(rows[3].3, ORDERS);

    let only = elements(&session, "DESCRIBE ONLY KEYSPACE shop").await;
    assert_eq!(kinds_and_names(&only), [("keyspace", "shop")]);
    let table = elements(&session, "DESCRIBE TABLE shop.orders").await;
    assert_eq!(table.len(), 1);
    assert_eq!(table[0].3, ORDERS);
    let ty = elements(&session, "DESC TYPE shop.address").await;
    assert_eq!(
        ty,
        [(
            "shop".into(),
            "type".into(),
            "address".into(),
            ADDRESS.into()
        )]
    );
    // A bare name: a keyspace, else a table (or index, or type) of the named keyspace.
    assert_eq!(elements(&session, "DESCRIBE shop").await, rows);
    assert_eq!(elements(&session, "DESCRIBE shop.orders").await, table);

    assert_eq!(
        column_names(&session, "DESCRIBE KEYSPACES").await,
        ["keyspace_name", "type", "name"]
    );
    let keyspaces = listed(&session, "DESCRIBE KEYSPACES").await;
    let names: Vec<&str> = keyspaces.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(
        names,
        [
            "shop",
            "system",
            "system_auth",
            "system_distributed",
            "system_schema",
            "system_traces",
            "system_views",
            "system_virtual_schema"
        ]
    );
    assert!(keyspaces.iter().all(|r| r.1 == "keyspace" && r.0 == r.2));

    // The schema leaves the system keyspaces out; the full schema has them.
    let schema = elements(&session, "DESCRIBE SCHEMA").await;
    assert_eq!(schema, rows);
    let full = elements(&session, "DESCRIBE FULL SCHEMA").await;
    assert!(full.len() > schema.len());
    assert!(full.iter().any(|r| r.0 == "system" && r.2 == "local"));
    assert!(full.starts_with(&rows));

    // Listings without a keyspace in use cover every keyspace.
    let tables = listed(&session, "DESCRIBE TABLES").await;
    assert!(tables.contains(&("shop".into(), "table".into(), "orders".into())));
    assert!(tables.iter().any(|r| r.0 == "system_schema"));
    assert!(listed(&session, "DESCRIBE FUNCTIONS").await.is_empty());
    assert!(listed(&session, "DESCRIBE AGGREGATES").await.is_empty());

    // DESCRIBE CLUSTER: three columns, and range ownership once a keyspace is in use.
    assert_eq!(
        column_names(&session, "DESCRIBE CLUSTER").await,
        ["cluster", "partitioner", "snitch"]
    );
    let cluster: Vec<(String, String, String)> = session
        .query_unpaged("DESCRIBE CLUSTER", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        cluster,
        [(
            "Test Cluster".to_string(),
            "Murmur3Partitioner".to_string(),
            "DynamicEndpointSnitch".to_string()
        )]
    );

    // Errors, with Cassandra's messages.
    for (statement, message) in [
        (
            "DESCRIBE TABLE shop.nope",
            "Table 'nope' not found in keyspace 'shop'",
        ),
        ("DESCRIBE KEYSPACE nope", "'nope' not found in keyspaces"),
        (
            "DESCRIBE INDEX shop.nope_idx",
            "Table for existing index 'nope_idx' not found in 'shop'",
        ),
        (
            "DESCRIBE MATERIALIZED VIEW shop.nope_view",
            "Materialized view 'nope_view' not found in 'shop'",
        ),
        (
            "DESCRIBE TYPE shop.nope",
            "User defined type 'nope' not found in 'shop'",
        ),
        (
            "DESCRIBE FUNCTION shop.nope",
            "User defined function 'nope' not found in 'shop'",
        ),
        ("DESCRIBE shop.nope", "'nope' not found in keyspace 'shop'"),
        ("DESCRIBE nope", "'nope' not found in keyspaces"),
        (
            "DESCRIBE TABLE orders",
            "No keyspace specified and no current keyspace",
        ),
    ] {
        assert_eq!(invalid(&session, statement).await, message, "{statement}");
    }

    // With a keyspace in use: unqualified names and listings resolve in it.
    session.use_keyspace("shop", false).await.unwrap();
    assert_eq!(elements(&session, "DESCRIBE TABLE orders").await, table);
    assert_eq!(elements(&session, "DESCRIBE KEYSPACE").await, rows);
    assert_eq!(elements(&session, "DESCRIBE address").await, ty);
    assert_eq!(
        listed(&session, "DESCRIBE TABLES").await,
        [
            ("shop".into(), "table".into(), "\"Items\"".into()),
            ("shop".into(), "table".into(), "orders".into()),
        ]
    );
    assert_eq!(
        listed(&session, "DESCRIBE TYPES").await,
        [("shop".into(), "type".into(), "address".into())]
    );
    assert_eq!(
        column_names(&session, "DESCRIBE CLUSTER").await,
        ["cluster", "partitioner", "snitch", "range_ownership"]
    );
    let ownership: Vec<ClusterWithRanges> = session
        .query_unpaged("DESCRIBE CLUSTER", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let ranges = &ownership[0].3;
    let tokens = node.node.as_ref().unwrap().coordinator().tokens().len();
    assert_eq!(ranges.len(), tokens);
    for (end, replicas) in ranges {
        end.parse::<i64>()
            .expect("a range is named by its end token");
        assert_eq!(replicas.len(), 1, "{replicas:?}");
        assert!(replicas[0].starts_with("/127.0.0.1:"), "{replicas:?}");
    }

    drop(session);
    node.stop().await;
}

/// A loopback port nothing listens on right now (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn cqlsh(port: u16, statement: &str) -> std::process::Output {
    Command::new("cqlsh")
        .args(["127.0.0.1", &port.to_string(), "-e", statement])
        .output()
        .expect("cqlsh runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cqlsh_describes_a_keyspace() {
    if Command::new("cqlsh").arg("--version").output().is_err() {
        println!("cqlsh is not installed: skipping the cqlsh DESCRIBE test (CI installs it)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = support::test_config(dir.path());
    config.native_transport_port = free_port();
    let node = Node::start(&config).await.expect("node starts");
    let port = node.cql_address().port();
    let session = connect(node.cql_address()).await;
    create_schema(&session).await;
    drop(session);

    let output = tokio::task::spawn_blocking(move || {
        [
            cqlsh(port, "DESCRIBE KEYSPACE shop"),
            cqlsh(port, "DESCRIBE TABLES"),
            cqlsh(port, "USE shop; DESCRIBE CLUSTER"),
        ]
    })
    .await
    .unwrap();
    node.shutdown().await;

    let text = |o: &std::process::Output| {
        (
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (keyspace, errors) = text(&output[0]);
    assert!(output[0].status.success(), "{keyspace}\n{errors}");
    for expected in [KEYSPACE, ADDRESS, ORDERS, "CREATE TABLE shop.\"Items\" ("] {
        assert!(
            keyspace.contains(expected),
            "{expected}\nnot in\n{keyspace}"
        );
    }
    let (tables, errors) = text(&output[1]);
    assert!(output[1].status.success(), "{tables}\n{errors}");
    assert!(tables.contains("Keyspace shop"), "{tables}");
    assert!(tables.contains("orders"), "{tables}");
    let (cluster, errors) = text(&output[2]);
    assert!(output[2].status.success(), "{cluster}\n{errors}");
    assert!(cluster.contains("Cluster: Test Cluster"), "{cluster}");
    assert!(
        cluster.contains("Partitioner: Murmur3Partitioner"),
        "{cluster}"
    );
    assert!(cluster.contains("Range ownership:"), "{cluster}");
}
