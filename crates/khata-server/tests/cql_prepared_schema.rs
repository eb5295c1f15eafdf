//! Prepared statements across schema changes, through the `scylla` driver: the executor keeps
//! a plan per prepared statement (table looked up, columns resolved, result metadata built)
//! and must never run one made for an older schema. After ALTER TABLE ADD and DROP, DROP and
//! CREATE with other types, DROP alone, and in another keyspace, executing the statements
//! prepared before gives the new table's results or the error a fresh PREPARE would.

mod support;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};
use support::TestNode;

async fn connect(node: &TestNode) -> Session {
    SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .expect("driver connects")
}

async fn ddl(session: &Session, cql: &str) {
    session
        .query_unpaged(cql, &[])
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e}"));
}

/// The rows of an EXECUTE, as the driver decodes them with the metadata the server sent.
async fn run(
    session: &Session,
    statement: &PreparedStatement,
    values: impl scylla::serialize::row::SerializeRow,
) -> Result<Vec<Vec<Option<CqlValue>>>, ExecutionError> {
    let result = session.execute_unpaged(statement, values).await?;
    if !result.is_rows() {
        return Ok(Vec::new());
    }
    Ok(result
        .into_rows_result()
        .unwrap()
        .rows::<Row>()
        .unwrap()
        .map(|r| r.unwrap().columns)
        .collect())
}

fn invalid(result: Result<Vec<Vec<Option<CqlValue>>>, ExecutionError>, says: &str) {
    match result {
        Err(ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Invalid,
            message,
        ))) => assert!(message.contains(says), "{message:?} should say {says:?}"),
        other => panic!("expected Invalid ({says}), got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_follow_the_schema() {
    let mut node = TestNode::start().await;
    let session = connect(&node).await;
    for ks in ["ks", "other"] {
        ddl(
            &session,
            &format!(
                "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
            ),
        )
        .await;
    }
    ddl(&session, "CREATE TABLE ks.t (k int PRIMARY KEY, v int)").await;
    let insert = session
        .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    let star = session
        .prepare("SELECT * FROM ks.t WHERE k = ?")
        .await
        .unwrap();
    let one = session
        .prepare("SELECT v FROM ks.t WHERE k = ?")
        .await
        .unwrap();
    // Each statement runs twice on a schema: once making its plan, once from it.
    for _ in 0..2 {
        run(&session, &insert, (1i32, 10i32)).await.unwrap();
        assert_eq!(
            run(&session, &star, (1i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::Int(1)), Some(CqlValue::Int(10))]]
        );
        assert_eq!(
            run(&session, &one, (1i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::Int(10))]]
        );
    }

    // A column added: `SELECT *` returns it, the INSERT still writes its two columns.
    ddl(&session, "ALTER TABLE ks.t ADD w text").await;
    ddl(&session, "INSERT INTO ks.t (k, v, w) VALUES (2, 20, 'two')").await;
    for _ in 0..2 {
        run(&session, &insert, (3i32, 30i32)).await.unwrap();
        assert_eq!(
            run(&session, &star, (2i32,)).await.unwrap(),
            vec![vec![
                Some(CqlValue::Int(2)),
                Some(CqlValue::Int(20)),
                Some(CqlValue::Text("two".into())),
            ]]
        );
        assert_eq!(
            run(&session, &star, (3i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::Int(3)), Some(CqlValue::Int(30)), None]]
        );
    }

    // The column the statements name dropped: the error a fresh PREPARE would give.
    ddl(&session, "ALTER TABLE ks.t DROP v").await;
    for _ in 0..2 {
        invalid(
            run(&session, &insert, (4i32, 40i32)).await,
            "Undefined column name v",
        );
        invalid(
            run(&session, &one, (1i32,)).await,
            "Undefined column name v",
        );
        assert_eq!(
            run(&session, &star, (2i32,)).await.unwrap(),
            vec![vec![
                Some(CqlValue::Int(2)),
                Some(CqlValue::Text("two".into()))
            ]]
        );
    }

    // Dropped and created again with another type for v: the old statements bind their
    // values against the new columns (a 4-byte int is no bigint) and read the new table.
    ddl(&session, "DROP TABLE ks.t").await;
    ddl(&session, "CREATE TABLE ks.t (k int PRIMARY KEY, v bigint)").await;
    ddl(&session, "INSERT INTO ks.t (k, v) VALUES (5, 50)").await;
    for _ in 0..2 {
        invalid(
            run(&session, &insert, (6i32, 60i32)).await,
            "Expected 8 or 0 byte long (4)",
        );
        assert_eq!(
            run(&session, &one, (5i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::BigInt(50))]]
        );
        assert_eq!(
            run(&session, &one, (1i32,)).await.unwrap(),
            Vec::<Vec<_>>::new()
        );
        assert_eq!(
            run(&session, &star, (5i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::Int(5)), Some(CqlValue::BigInt(50))]]
        );
    }

    // Dropped: the table does not exist.
    ddl(&session, "DROP TABLE ks.t").await;
    for _ in 0..2 {
        invalid(run(&session, &one, (5i32,)).await, "does not exist");
        invalid(run(&session, &insert, (5i32, 5i32)).await, "does not exist");
    }

    // Unqualified names: the same text prepared in two keyspaces is two statements, and
    // each keeps reading its own keyspace's table whatever the session USEs later.
    ddl(&session, "CREATE TABLE ks.u (k int PRIMARY KEY, v text)").await;
    ddl(&session, "CREATE TABLE other.u (k int PRIMARY KEY, v int)").await;
    ddl(&session, "INSERT INTO ks.u (k, v) VALUES (1, 'in ks')").await;
    ddl(&session, "INSERT INTO other.u (k, v) VALUES (1, 7)").await;
    session.use_keyspace("ks", false).await.unwrap();
    let in_ks = session
        .prepare("SELECT v FROM u WHERE k = ?")
        .await
        .unwrap();
    session.use_keyspace("other", false).await.unwrap();
    let in_other = session
        .prepare("SELECT v FROM u WHERE k = ?")
        .await
        .unwrap();
    for _ in 0..2 {
        assert_eq!(
            run(&session, &in_ks, (1i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::Text("in ks".into()))]]
        );
        assert_eq!(
            run(&session, &in_other, (1i32,)).await.unwrap(),
            vec![vec![Some(CqlValue::Int(7))]]
        );
    }
    node.stop().await;
}

/// A prepared SELECT naming one row by `=` on its whole primary key binds its values straight
/// into the key (the executor's point-key plan): its rows and errors are those of the same
/// SELECT run unprepared, which goes through the general WHERE-clause restrictions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn point_selects_answer_as_the_general_path() {
    let mut node = TestNode::start().await;
    let session = connect(&node).await;
    ddl(
        &session,
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    )
    .await;
    ddl(
        &session,
        "CREATE TABLE ks.w (a int, b text, c int, d text, s int STATIC, v int, \
         PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC)",
    )
    .await;
    ddl(&session, "CREATE TABLE ks.kv (k text PRIMARY KEY, v int)").await;
    for cql in [
        "INSERT INTO ks.w (a, b, c, d, v) VALUES (1, 'x', 1, 'p', 11)",
        "INSERT INTO ks.w (a, b, c, d, v) VALUES (1, 'x', 2, 'q', 12)",
        "INSERT INTO ks.w (a, b, c, d, v) VALUES (2, 'y', 1, 'p', 21)",
        "INSERT INTO ks.w (a, b, s) VALUES (3, 'z', 30)",
        "INSERT INTO ks.w (a, b, s) VALUES (1, 'x', 10)",
        "INSERT INTO ks.kv (k, v) VALUES ('one', 1)",
    ] {
        ddl(&session, cql).await;
    }
    // Clause order differs from key order; a static column; ORDER BY on a point.
    let by_key = session
        .prepare("SELECT a, b, c, d, s, v FROM ks.w WHERE d = ? AND b = ? AND c = ? AND a = ?")
        .await
        .unwrap();
    let reversed = session
        .prepare("SELECT v FROM ks.w WHERE a = ? AND b = ? AND c = ? AND d = ? ORDER BY c ASC")
        .await
        .unwrap();
    let kv = session
        .prepare("SELECT k, v FROM ks.kv WHERE k = ?")
        .await
        .unwrap();
    let unprepared = async |cql: String| {
        let result = session.query_unpaged(cql, &[]).await.unwrap();
        result
            .into_rows_result()
            .unwrap()
            .rows::<Row>()
            .unwrap()
            .map(|r| r.unwrap().columns)
            .collect::<Vec<_>>()
    };
    let keys = [
        (1, "x", 1, "p"),
        (1, "x", 2, "q"),
        (1, "x", 2, "p"),
        (2, "y", 1, "p"),
        (3, "z", 1, "p"), // only static content: no row, as the general path says
        (9, "n", 1, "p"),
    ];
    for _ in 0..2 {
        for (a, b, c, d) in keys {
            let general = unprepared(format!(
                "SELECT a, b, c, d, s, v FROM ks.w WHERE d = '{d}' AND b = '{b}' AND c = {c} AND a = {a}"
            ))
            .await;
            assert_eq!(
                run(&session, &by_key, (d, b, c, a)).await.unwrap(),
                general,
                "{a} {b} {c} {d}"
            );
            let general = unprepared(format!(
                "SELECT v FROM ks.w WHERE a = {a} AND b = '{b}' AND c = {c} AND d = '{d}' ORDER BY c ASC"
            ))
            .await;
            assert_eq!(
                run(&session, &reversed, (a, b, c, d)).await.unwrap(),
                general
            );
        }
        assert_eq!(
            run(&session, &by_key, ("p", "x", 1, 1)).await.unwrap(),
            vec![vec![
                Some(CqlValue::Int(1)),
                Some(CqlValue::Text("x".into())),
                Some(CqlValue::Int(1)),
                Some(CqlValue::Text("p".into())),
                Some(CqlValue::Int(10)),
                Some(CqlValue::Int(11)),
            ]]
        );
        assert_eq!(
            run(&session, &kv, ("one",)).await.unwrap(),
            vec![vec![
                Some(CqlValue::Text("one".into())),
                Some(CqlValue::Int(1))
            ]]
        );
        assert_eq!(
            run(&session, &kv, ("two",)).await.unwrap(),
            Vec::<Vec<_>>::new()
        );
        // The general path's errors: a null key column, an empty partition key.
        invalid(
            run(&session, &by_key, ("p", None::<&str>, 1, 1)).await,
            "Invalid null value",
        );
        invalid(run(&session, &kv, ("",)).await, "Key may not be empty");
    }
    node.stop().await;
}
