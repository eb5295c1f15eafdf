//! The Rust `scylla` driver against a node started by the test: connecting (it reads the
//! system tables and the schema), DDL with schema agreement, prepared statements, paging,
//! token-aware routing agreeing with the server's `token()`, and errors that leave the
//! connection usable.

mod support;

use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::Statement;
use support::TestNode;

async fn connect(node: &TestNode) -> Session {
    SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .expect("driver connects")
}

fn db_error(e: &ExecutionError) -> Option<&DbError> {
    match e {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => Some(db),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_paging_and_schema() {
    let mut node = TestNode::start().await;
    let session = connect(&node).await;
    session
        .query_unpaged(
            "CREATE KEYSPACE chat WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "CREATE TABLE chat.messages (channel int, seq bigint, author text, body text, \
             PRIMARY KEY (channel, seq)) WITH CLUSTERING ORDER BY (seq DESC)",
            &[],
        )
        .await
        .unwrap();
    // The driver's metadata learned the table through system_schema.
    session.refresh_metadata().await.unwrap();
    let state = session.get_cluster_state();
    let ks = state
        .get_keyspace("chat")
        .expect("keyspace in driver metadata");
    let table = ks.tables.get("messages").expect("table in driver metadata");
    assert_eq!(table.partition_key, vec!["channel".to_string()]);
    assert_eq!(table.clustering_key, vec!["seq".to_string()]);

    let insert = session
        .prepare("INSERT INTO chat.messages (channel, seq, author, body) VALUES (?, ?, ?, ?)")
        .await
        .unwrap();
    for seq in 0..95i64 {
        session
            .execute_unpaged(&insert, (7i32, seq, "ana", format!("message {seq}")))
            .await
            .unwrap();
    }
    // One partition, newest first, in pages of 10.
    let mut select = session
        .prepare("SELECT seq, body FROM chat.messages WHERE channel = ?")
        .await
        .unwrap();
    select.set_page_size(10);
    let rows: Vec<(i64, String)> = session
        .execute_iter(select.clone(), (7i32,))
        .await
        .unwrap()
        .rows_stream::<(i64, String)>()
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rows.len(), 95);
    assert_eq!(rows[0], (94, "message 94".to_string()));
    assert!(
        rows.windows(2).all(|w| w[0].0 > w[1].0),
        "DESC order across pages"
    );

    // A slice with a limit, forwards through ORDER BY.
    let slice = session
        .query_unpaged(
            "SELECT seq FROM chat.messages WHERE channel = 7 AND seq >= 10 AND seq < 20 ORDER BY seq ASC LIMIT 3",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let seqs: Vec<i64> = slice
        .rows::<(i64,)>()
        .unwrap()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(seqs, vec![10, 11, 12]);

    let count = session
        .query_unpaged("SELECT count(*) FROM chat.messages WHERE channel = 7", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(i64,)>()
        .unwrap();
    assert_eq!(count.0, 95);

    // Deleting a range and a row.
    session
        .query_unpaged(
            "DELETE FROM chat.messages WHERE channel = 7 AND seq < 50",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "DELETE FROM chat.messages WHERE channel = 7 AND seq = 94",
            &[],
        )
        .await
        .unwrap();
    let count = session
        .query_unpaged("SELECT count(*) FROM chat.messages WHERE channel = 7", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(i64,)>()
        .unwrap();
    assert_eq!(count.0, 44);
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_aware_routing_agrees_with_the_server() {
    let mut node = TestNode::start().await;
    let session = connect(&node).await;
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "CREATE TABLE ks.t (a bigint, b int, v text, PRIMARY KEY ((a, b)))",
            &[],
        )
        .await
        .unwrap();
    let insert = session
        .prepare("INSERT INTO ks.t (a, b, v) VALUES (?, ?, ?)")
        .await
        .unwrap();
    let select = session
        .prepare("SELECT token(a, b) FROM ks.t WHERE a = ? AND b = ?")
        .await
        .unwrap();
    for (a, b) in [(42i64, 498_091i32), (-1, 0), (i64::MAX, i32::MIN), (7, 7)] {
        session.execute_unpaged(&insert, (a, b, "x")).await.unwrap();
        let driver_token = insert
            .calculate_token(&(a, b, "x"))
            .unwrap()
            .expect("the driver knows the partition key")
            .value();
        let (server_token,) = session
            .execute_unpaged(&select, (a, b))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row::<(i64,)>()
            .unwrap();
        assert_eq!(driver_token, server_token, "({a}, {b})");
    }
    // The example of the issue: (bigint 42, int 498091).
    let (t,) = session
        .execute_unpaged(&select, (42i64, 498_091i32))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(i64,)>()
        .unwrap();
    assert_eq!(t, 3043735101766377467);
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_keep_the_connection_and_the_data() {
    let mut node = TestNode::start().await;
    let session = connect(&node).await;
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged("CREATE TABLE ks.t (k int PRIMARY KEY, v text)", &[])
        .await
        .unwrap();
    session
        .query_unpaged("INSERT INTO ks.t (k, v) VALUES (1, 'kept')", &[])
        .await
        .unwrap();

    let e = session
        .query_unpaged("SELEKT * FROM ks.t", &[])
        .await
        .unwrap_err();
    assert!(matches!(db_error(&e), Some(DbError::SyntaxError)), "{e}");
    let e = session
        .query_unpaged("SELECT * FROM ks.nope", &[])
        .await
        .unwrap_err();
    assert!(matches!(db_error(&e), Some(DbError::Invalid)), "{e}");
    let e = session
        .query_unpaged("CREATE TABLE ks.t (k int PRIMARY KEY)", &[])
        .await
        .unwrap_err();
    assert!(
        matches!(db_error(&e), Some(DbError::AlreadyExists { keyspace, table }) if keyspace == "ks" && table == "t"),
        "{e}"
    );
    let e = session
        .query_unpaged("INSERT INTO ks.t (k, v) VALUES ('x', 'y')", &[])
        .await
        .unwrap_err();
    assert!(matches!(db_error(&e), Some(DbError::Invalid)), "{e}");
    let e = session
        .query_unpaged("SELECT * FROM ks.t WHERE v = 'kept'", &[])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("ALLOW FILTERING"), "{e}");
    // RF 3 on one node: QUORUM is unavailable, ONE works.
    session
        .query_unpaged(
            "CREATE KEYSPACE ks3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged("CREATE TABLE ks3.t (k int PRIMARY KEY)", &[])
        .await
        .unwrap();
    let mut quorum = Statement::new("INSERT INTO ks3.t (k) VALUES (1)");
    quorum.set_consistency(scylla::statement::Consistency::Quorum);
    let e = session.query_unpaged(quorum, &[]).await.unwrap_err();
    assert!(
        matches!(
            db_error(&e),
            Some(DbError::Unavailable {
                required: 2,
                alive: 1,
                ..
            })
        ),
        "{e}"
    );
    // Cassandra's words; the counts are the error's fields.
    assert!(
        e.to_string()
            .ends_with("Cannot achieve consistency level QUORUM"),
        "{e}"
    );

    // The connection still works and the data is there.
    let (v,) = session
        .query_unpaged("SELECT v FROM ks.t WHERE k = 1", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(String,)>()
        .unwrap();
    assert_eq!(v, "kept");
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_and_schema_survive_a_restart() {
    let mut node = TestNode::start().await;
    let session = connect(&node).await;
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged("CREATE TABLE ks.t (k int PRIMARY KEY, v text)", &[])
        .await
        .unwrap();
    for k in 0..20 {
        session
            .query_unpaged(
                "INSERT INTO ks.t (k, v) VALUES (?, ?)",
                (k, format!("v{k}")),
            )
            .await
            .unwrap();
    }
    drop(session);
    let dir = node.dir.path().to_path_buf();
    node.stop().await;
    let restarted = khata_server::node::Node::start(&support::test_config(&dir))
        .await
        .unwrap();
    let session = SessionBuilder::new()
        .known_node_addr(restarted.cql_address())
        .build()
        .await
        .unwrap();
    let rows = session
        .query_unpaged("SELECT k, v FROM ks.t", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let mut got: Vec<(i32, String)> = rows
        .rows::<(i32, String)>()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    got.sort();
    assert_eq!(got.len(), 20);
    assert_eq!(got[3], (3, "v3".to_string()));
    drop(session);
    restarted.shutdown().await;
}
