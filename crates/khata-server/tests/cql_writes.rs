//! Writes through the `scylla` driver: lightweight transactions with their `[applied]`
//! results, collection operations, counters, TTL and WRITETIME, batches.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::value::Row;
use support::TestNode;

async fn setup() -> (TestNode, Session) {
    let node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .expect("driver connects");
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session.use_keyspace("ks", false).await.unwrap();
    (node, session)
}

async fn rows(session: &Session, cql: &str) -> Vec<Row> {
    session
        .query_unpaged(cql, &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<Row>()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The `[applied]` column of an LWT result.
async fn applied(session: &Session, cql: &str) -> (bool, Vec<String>) {
    let result = session
        .query_unpaged(cql, &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let names: Vec<String> = result
        .column_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let row = result.first_row::<Row>().unwrap();
    let flag = row.columns[0]
        .as_ref()
        .and_then(|v| v.as_boolean())
        .expect("[applied] is a boolean");
    (flag, names)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lightweight_transactions_claim_usernames() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged(
            "CREATE TABLE users (username text PRIMARY KEY, email text)",
            &[],
        )
        .await
        .unwrap();
    let (ok, names) = applied(
        &session,
        "INSERT INTO users (username, email) VALUES ('ana', 'a@x') IF NOT EXISTS",
    )
    .await;
    assert!(ok);
    assert_eq!(names, vec!["[applied]"]);
    // The second claim fails and shows the row that holds the name.
    let (ok, names) = applied(
        &session,
        "INSERT INTO users (username, email) VALUES ('ana', 'b@x') IF NOT EXISTS",
    )
    .await;
    assert!(!ok);
    assert_eq!(names, vec!["[applied]", "username", "email"]);
    let (ok, names) = applied(
        &session,
        "UPDATE users SET email = 'c@x' WHERE username = 'ana' IF email = 'wrong'",
    )
    .await;
    assert!(!ok);
    assert_eq!(names, vec!["[applied]", "email"]);
    assert!(
        applied(
            &session,
            "UPDATE users SET email = 'c@x' WHERE username = 'ana' IF email = 'a@x'"
        )
        .await
        .0
    );
    assert!(
        !applied(
            &session,
            "UPDATE users SET email = 'z' WHERE username = 'bob' IF EXISTS"
        )
        .await
        .0
    );
    assert!(
        applied(
            &session,
            "DELETE FROM users WHERE username = 'ana' IF EXISTS"
        )
        .await
        .0
    );
    assert!(rows(&session, "SELECT * FROM users").await.is_empty());

    // Concurrent claims of one name: exactly one wins.
    let mut tasks = Vec::new();
    let session = std::sync::Arc::new(session);
    for i in 0..16 {
        let session = session.clone();
        tasks.push(tokio::spawn(async move {
            let cql = format!(
                "INSERT INTO users (username, email) VALUES ('zoe', 'z{i}@x') IF NOT EXISTS"
            );
            applied(&session, &cql).await.0
        }));
    }
    let mut winners = 0;
    for t in tasks {
        winners += usize::from(t.await.unwrap());
    }
    assert_eq!(winners, 1);
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collection_operations() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged(
            "CREATE TABLE t (k int PRIMARY KEY, l list<text>, s set<int>, m map<text, int>)",
            &[],
        )
        .await
        .unwrap();
    for cql in [
        "INSERT INTO t (k, l, s, m) VALUES (1, ['a', 'b'], {3, 1}, {'x': 1})",
        "UPDATE t SET l = ['z'] + l, l = l + ['c'], s = s + {2}, m = m + {'y': 2} WHERE k = 1",
        "UPDATE t SET l[1] = 'A', m['w'] = 9 WHERE k = 1",
        "DELETE m['x'], l[0] FROM t WHERE k = 1",
        "UPDATE t SET l = l - ['c'], s = s - {3} WHERE k = 1",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let (l, s, m) = session
        .query_unpaged("SELECT l, s, m FROM t WHERE k = 1", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(Vec<String>, BTreeSet<i32>, BTreeMap<String, i32>)>()
        .unwrap();
    assert_eq!(l, vec!["A".to_string(), "b".to_string()]);
    assert_eq!(s, BTreeSet::from([1, 2]));
    assert_eq!(
        m,
        BTreeMap::from([("w".to_string(), 9), ("y".to_string(), 2)])
    );
    // An index past the end is refused, as in Cassandra.
    let e = session
        .query_unpaged("UPDATE t SET l[5] = 'x' WHERE k = 1", &[])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("out of bound"), "{e}");
    // Appends and prepends at one timestamp (a batch's statements, two in one UPDATE, two
    // writes USING TIMESTAMP the same) each keep their elements, in the order written.
    for cql in [
        "BEGIN BATCH UPDATE t SET l = l + ['1'] WHERE k = 2; UPDATE t SET l = l + ['2'] WHERE k = 2; \
         UPDATE t SET l = l + ['3'] WHERE k = 2; APPLY BATCH",
        "UPDATE t SET l = l + ['1'], l = l + ['2'] WHERE k = 3",
        "BEGIN BATCH UPDATE t SET l = ['1'] + l WHERE k = 4; UPDATE t SET l = ['2'] + l WHERE k = 4; \
         UPDATE t SET l = ['3', '4'] + l WHERE k = 4; APPLY BATCH",
        "UPDATE t USING TIMESTAMP 5 SET l = l + ['7'] WHERE k = 5",
        "UPDATE t USING TIMESTAMP 5 SET l = l + ['8', '9'] WHERE k = 5",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for (k, expected) in [
        (2, vec!["1", "2", "3"]),
        (3, vec!["1", "2"]),
        (4, vec!["3", "4", "2", "1"]),
        (5, vec!["7", "8", "9"]),
    ] {
        let (l,) = session
            .query_unpaged("SELECT l FROM t WHERE k = ?", (k,))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row::<(Vec<String>,)>()
            .unwrap();
        assert_eq!(l, expected, "k = {k}");
    }
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_add_up_under_concurrency() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged("CREATE TABLE c (k int PRIMARY KEY, hits counter)", &[])
        .await
        .unwrap();
    let session = std::sync::Arc::new(session);
    let update = session
        .prepare("UPDATE c SET hits = hits + ? WHERE k = 1")
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (session, update) = (session.clone(), update.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                session
                    .execute_unpaged(&update, (scylla::value::Counter(2),))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let (hits,) = session
        .query_unpaged("SELECT hits FROM c WHERE k = 1", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(scylla::value::Counter,)>()
        .unwrap();
    assert_eq!(hits.0, 400);
    let e = session
        .query_unpaged("INSERT INTO c (k, hits) VALUES (2, 1)", &[])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("counter tables"), "{e}");
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttl_writetime_and_batches() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged(
            "CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "INSERT INTO t (k, c, v) VALUES (1, 1, 'x') USING TTL 1000 AND TIMESTAMP 1234",
            &[],
        )
        .await
        .unwrap();
    let (ttl, wt) = session
        .query_unpaged(
            "SELECT TTL(v), WRITETIME(v) FROM t WHERE k = 1 AND c = 1",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(i32, i64)>()
        .unwrap();
    assert!((990..=1000).contains(&ttl), "{ttl}");
    assert_eq!(wt, 1234);
    // A logged batch over two partitions and an empty batch (drivers' liveness check).
    session
        .query_unpaged(
            "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (2, 1, 'a'); \
             INSERT INTO t (k, c, v) VALUES (3, 1, 'b'); DELETE FROM t WHERE k = 1; APPLY BATCH",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged("BEGIN BATCH APPLY BATCH", &[])
        .await
        .unwrap();
    let mut keys: Vec<i32> = rows(&session, "SELECT k FROM t")
        .await
        .iter()
        .map(|r| r.columns[0].as_ref().unwrap().as_int().unwrap())
        .collect();
    keys.sort();
    assert_eq!(keys, vec![2, 3]);
    drop(session);
    node.stop().await;
}

/// The rows of a query, deserialized as `T`.
async fn typed<T>(session: &Session, cql: &str) -> Vec<T>
where
    T: for<'f, 'm> scylla::deserialize::row::DeserializeRow<'f, 'm>,
{
    session
        .query_unpaged(cql, &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<T>()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Static columns belong to the partition: an UPDATE that sets only static columns needs only
/// the partition key (plain, prepared, with list operations that read the current list, and
/// conditional), and writes no row; one that also sets a regular column, or names part of the
/// clustering key, is refused as Cassandra refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_columns_update_with_the_partition_key_alone() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged(
            "CREATE TABLE w (a int, b text, c int, d text, s int STATIC, l list<int> STATIC, \
             v int, PRIMARY KEY ((a, b), c, d))",
            &[],
        )
        .await
        .unwrap();
    let run = async |cql: &str| session.query_unpaged(cql, &[]).await.unwrap();
    let fails = async |cql: &str, expected: &str| {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{cql}: {error}");
    };
    run("INSERT INTO w (a, b, c, d, v) VALUES (1, 'x', 1, 'p', 11)").await;
    run("UPDATE w SET s = 10 WHERE a = 1 AND b = 'x'").await;
    run("UPDATE w SET l = [1, 2, 3] WHERE a = 1 AND b = 'x'").await;
    // By index and by value: both read the partition's current static list.
    run("UPDATE w SET l[1] = 20 WHERE a = 1 AND b = 'x'").await;
    run("UPDATE w SET l = l - [3] WHERE a = 1 AND b = 'x'").await;
    let got: Vec<(i32, i32, i32, Vec<i32>, i32)> = typed(
        &session,
        "SELECT a, c, s, l, v FROM w WHERE a = 1 AND b = 'x'",
    )
    .await;
    assert_eq!(got, vec![(1, 1, 10, vec![1, 20], 11)]);

    // A partition with no rows: its static row alone, shown as one row of nulls.
    let prepared = session
        .prepare("UPDATE w SET s = ? WHERE a = ? AND b = ?")
        .await
        .unwrap();
    session
        .execute_unpaged(&prepared, (30i32, 3i32, "z"))
        .await
        .unwrap();
    let got: Vec<(i32, Option<i32>, i32, Option<i32>)> =
        typed(&session, "SELECT a, c, s, v FROM w WHERE a = 3 AND b = 'z'").await;
    assert_eq!(got, vec![(3, None, 30, None)]);
    let count: Vec<(i64,)> = typed(
        &session,
        "SELECT count(*) FROM w WHERE a = 3 AND b = 'z' AND c = 1",
    )
    .await;
    assert_eq!(count, vec![(0,)], "no row was written");

    // Conditional, on the static column.
    let (ok, _) = applied(
        &session,
        "UPDATE w SET s = 11 WHERE a = 1 AND b = 'x' IF s = 10",
    )
    .await;
    assert!(ok);
    let (ok, _) = applied(
        &session,
        "UPDATE w SET s = 12 WHERE a = 1 AND b = 'x' IF s = 10",
    )
    .await;
    assert!(!ok);
    // IF [NOT] EXISTS on a static-only write looks at the static row, not at the rows.
    let (ok, _) = applied(
        &session,
        "INSERT INTO w (a, b, s) VALUES (4, 'q', 40) IF NOT EXISTS",
    )
    .await;
    assert!(ok);
    let (ok, names) = applied(
        &session,
        "INSERT INTO w (a, b, s) VALUES (4, 'q', 41) IF NOT EXISTS",
    )
    .await;
    assert!(!ok);
    assert!(names.contains(&"s".to_string()), "{names:?}");
    let (ok, _) = applied(
        &session,
        "UPDATE w SET s = 42 WHERE a = 4 AND b = 'q' IF EXISTS",
    )
    .await;
    assert!(ok);
    // Partition 2 has a row but no static row.
    run("INSERT INTO w (a, b, c, d, v) VALUES (2, 'y', 1, 'p', 21)").await;
    let (ok, _) = applied(
        &session,
        "UPDATE w SET s = 20 WHERE a = 2 AND b = 'y' IF EXISTS",
    )
    .await;
    assert!(!ok);
    let (ok, _) = applied(
        &session,
        "INSERT INTO w (a, b, s) VALUES (2, 'y', 20) IF NOT EXISTS",
    )
    .await;
    assert!(ok);
    let got: Vec<(i32, i32)> = typed(&session, "SELECT s, v FROM w WHERE a = 2 AND b = 'y'").await;
    assert_eq!(got, vec![(20, 21)]);
    let got: Vec<(i32,)> = typed(&session, "SELECT s FROM w WHERE a = 4 AND b = 'q'").await;
    assert_eq!(got, vec![(42,)]);

    fails(
        "UPDATE w SET v = 1 WHERE a = 1 AND b = 'x'",
        "Some clustering keys are missing: c, d",
    )
    .await;
    fails(
        "UPDATE w SET s = 1, v = 1 WHERE a = 1 AND b = 'x'",
        "Some clustering keys are missing: c, d",
    )
    .await;
    fails(
        "UPDATE w SET s = 1 WHERE a = 1 AND b = 'x' AND c = 1",
        "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns",
    )
    .await;
    let got: Vec<(i32,)> = typed(&session, "SELECT s FROM w WHERE a = 1 AND b = 'x' LIMIT 1").await;
    assert_eq!(got, vec![(11,)], "the refused updates wrote nothing");
    drop(session);
    node.stop().await;
}

/// List operations that need the stored list (`l[i] = v`, `DELETE l[i]`, `l = l - [v]`) work
/// under IF conditions, alone and in a conditional batch, resolved on the list the
/// compare-and-set reads; counters and SERIAL writes get Cassandra's refusals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_list_operations_and_refusals() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged(
            "CREATE TABLE lw (k int, c int, v int, l list<int>, PRIMARY KEY (k, c))",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "INSERT INTO lw (k, c, v, l) VALUES (1, 1, 1, [1, 2, 3])",
            &[],
        )
        .await
        .unwrap();
    let list = async |c: i32| -> Option<Vec<i32>> {
        typed::<(Option<Vec<i32>>,)>(
            &session,
            &format!("SELECT l FROM lw WHERE k = 1 AND c = {c}"),
        )
        .await
        .pop()
        .and_then(|r| r.0)
    };
    for (cql, expect) in [
        (
            "UPDATE lw SET l[0] = 5 WHERE k = 1 AND c = 1 IF v = 1",
            vec![5, 2, 3],
        ),
        (
            "UPDATE lw SET l = l - [2] WHERE k = 1 AND c = 1 IF v = 1",
            vec![5, 3],
        ),
        (
            "DELETE l[0] FROM lw WHERE k = 1 AND c = 1 IF EXISTS",
            vec![3],
        ),
        // Not applied: the list stays.
        (
            "UPDATE lw SET l[0] = 9 WHERE k = 1 AND c = 1 IF v = 2",
            vec![3],
        ),
    ] {
        let (flag, _) = applied(&session, cql).await;
        assert_eq!(flag, !cql.contains("v = 2"), "{cql}");
        assert_eq!(list(1).await, Some(expect), "{cql}");
    }
    // An index past the end fails only when the condition holds.
    let (flag, _) = applied(
        &session,
        "UPDATE lw SET l[7] = 1 WHERE k = 1 AND c = 1 IF v = 3",
    )
    .await;
    assert!(!flag);
    let error = session
        .query_unpaged("UPDATE lw SET l[7] = 1 WHERE k = 1 AND c = 1 IF v = 1", &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("List index 7 out of bound, list has size 1"),
        "{error}"
    );
    // A conditional batch: the condition on one row, list operations on another.
    session
        .query_unpaged("INSERT INTO lw (k, c, l) VALUES (1, 2, [7, 8, 7])", &[])
        .await
        .unwrap();
    let (flag, _) = applied(
        &session,
        "BEGIN BATCH UPDATE lw SET v = 2 WHERE k = 1 AND c = 1 IF v = 1; \
         UPDATE lw SET l = l - [7] WHERE k = 1 AND c = 2; \
         UPDATE lw SET l[0] = 4 WHERE k = 1 AND c = 1; APPLY BATCH",
    )
    .await;
    assert!(flag);
    assert_eq!(list(1).await, Some(vec![4]));
    assert_eq!(list(2).await, Some(vec![8]));
    session
        .query_unpaged("CREATE TABLE cnt (k int PRIMARY KEY, n counter)", &[])
        .await
        .unwrap();
    for (cql, message) in [
        (
            "UPDATE cnt SET n = n + 1 WHERE k = 1 IF n = 1",
            "Conditional updates are not supported on counter tables",
        ),
        (
            "UPDATE cnt USING TTL 5 SET n = n + 1 WHERE k = 1",
            "Cannot provide custom TTL for counter updates",
        ),
        (
            "UPDATE cnt USING TIMESTAMP 5 SET n = n + 1 WHERE k = 1",
            "Cannot provide custom timestamp for counter updates",
        ),
        (
            "ALTER TABLE lw ADD n counter",
            "ks.lw: Cannot have a counter column (\"n\") in a non counter column table",
        ),
        (
            "ALTER TABLE cnt ADD v int",
            "ks.cnt: Cannot have a non counter column (\"v\") in a counter table",
        ),
        // Assignments the column's type does not take, written back as Cassandra does.
        (
            "UPDATE lw SET v = v + 1 WHERE k = 1 AND c = 1",
            "Invalid operation (v = v + 1) for non counter column v",
        ),
        (
            "UPDATE lw SET v = v - 2 WHERE k = 1 AND c = 1",
            "Invalid operation (v = v - 2) for non counter column v",
        ),
        (
            "UPDATE lw SET v = [1] + v WHERE k = 1 AND c = 1",
            "Invalid operation (v = [1] + v) for non list column v",
        ),
        (
            "UPDATE lw SET v[0] = 1 WHERE k = 1 AND c = 1",
            "Invalid operation (v[0] = 1) for non collection column v",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(message), "{cql}: {error}");
    }
    let mut serial = scylla::statement::Statement::new("INSERT INTO lw (k, c, v) VALUES (2, 1, 1)");
    serial.set_consistency(scylla::statement::Consistency::Serial);
    let error = session
        .query_unpaged(serial, &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("You must use conditional updates for serializable writes"),
        "{error}"
    );
    assert!(
        typed::<(i32,)>(&session, "SELECT v FROM lw WHERE k = 2")
            .await
            .is_empty()
    );
    drop(session);
    node.stop().await;
}

/// Bind markers everywhere a prepared write can have them: IF conditions (plain, on an element,
/// `IN (?, ?)`, `IN ?`), element setters (`m[?] = ?`, `l[?] = ?`) and element deletions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_conditions_and_element_setters() {
    let (mut node, session) = setup().await;
    session
        .query_unpaged(
            "CREATE TABLE acct (k int PRIMARY KEY, version int, m map<text, int>, l list<int>)",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "INSERT INTO acct (k, version, m, l) VALUES (1, 1, {'a': 1}, [10, 20])",
            &[],
        )
        .await
        .unwrap();
    let bump = session
        .prepare("UPDATE acct SET version = ? WHERE k = ? IF version = ?")
        .await
        .unwrap();
    let names: Vec<String> = bump
        .get_variable_col_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(names, ["version", "k", "version"]);
    let flag = async |result: scylla::response::query_result::QueryResult| -> bool {
        let rows = result.into_rows_result().unwrap();
        let row = rows.first_row::<Row>().unwrap();
        row.columns[0]
            .as_ref()
            .and_then(|v| v.as_boolean())
            .unwrap()
    };
    assert!(flag(session.execute_unpaged(&bump, (2, 1, 1)).await.unwrap()).await);
    assert!(!flag(session.execute_unpaged(&bump, (3, 1, 1)).await.unwrap()).await);
    let by_element = session
        .prepare("UPDATE acct SET m[?] = ?, l[?] = ? WHERE k = ? IF m[?] = ? AND version IN ?")
        .await
        .unwrap();
    let names: Vec<String> = by_element
        .get_variable_col_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "key(m)",
            "value(m)",
            "idx(l)",
            "value(l)",
            "k",
            "key(m)",
            "value(m)",
            "in(version)"
        ]
    );
    let applied = session
        .execute_unpaged(&by_element, ("b", 2, 1, 25, 1, "a", 1, vec![2, 3]))
        .await
        .unwrap();
    assert!(flag(applied).await);
    let delete = session
        .prepare("DELETE m[?], l[?] FROM acct WHERE k = ? IF version IN (?, ?)")
        .await
        .unwrap();
    let applied = session
        .execute_unpaged(&delete, ("a", 0, 1, 5, 2))
        .await
        .unwrap();
    assert!(flag(applied).await);
    let (m, l): (BTreeMap<String, i32>, Vec<i32>) =
        typed(&session, "SELECT m, l FROM acct WHERE k = 1")
            .await
            .remove(0);
    assert_eq!(m, BTreeMap::from([("b".to_string(), 2)]));
    assert_eq!(l, vec![25]);
    drop(session);
    node.stop().await;
}

/// `ALTER TYPE ... ADD` and `RENAME` reach the columns (frozen or not, nested in other types)
/// that use the type: the new field can be set and read at once, and old values read it null.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_user_types_reach_their_columns() {
    let (mut node, session) = setup().await;
    for cql in [
        "CREATE TYPE phone (kind text, num text)",
        "CREATE TYPE person (name text, phone frozen<phone>)",
        "CREATE TABLE people (k int PRIMARY KEY, p person, f frozen<person>)",
        "INSERT INTO people (k, p, f) VALUES (1, {name: 'a'}, {name: 'b', phone: {kind: 'home'}})",
        "ALTER TYPE person ADD age int",
        "ALTER TYPE phone ADD ext int",
        "UPDATE people SET p.age = 40 WHERE k = 1",
        "ALTER TYPE person RENAME age TO years",
    ] {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    let rows: Vec<(Option<i32>, Option<i32>, Option<String>)> = typed(
        &session,
        "SELECT p.years, f.years, f.name FROM people WHERE k = 1",
    )
    .await;
    assert_eq!(rows, vec![(Some(40), None, Some("b".to_string()))]);
    session
        .query_unpaged(
            "INSERT INTO people (k, f) VALUES (2, {name: 'c', phone: {kind: 'cell', ext: 7}})",
            &[],
        )
        .await
        .unwrap();
    let json: Vec<(String,)> = typed(&session, "SELECT JSON f FROM people WHERE k = 2").await;
    assert_eq!(
        json[0].0,
        "{\"f\": {\"name\": \"c\", \"phone\": {\"kind\": \"cell\", \"num\": null, \"ext\": 7}, \"years\": null}}"
    );
    drop(session);
    node.stop().await;
}

/// Writes Cassandra refuses before doing anything, in its words: IN on the key of a
/// conditional write, conflicting conditions on one row of a batch, a batch's own TTL or
/// timestamp beside its statements', deleting a key column, setting a column twice; and a
/// failed condition on a row that does not exist answers `[applied]` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_batch_and_assignment_refusals() {
    let (mut node, session) = setup().await;
    for cql in [
        "CREATE TABLE w (k int, c int, v int, s int STATIC, PRIMARY KEY (k, c))",
        "CREATE TABLE cn (k int PRIMARY KEY, n counter)",
        "INSERT INTO w (k, c, v) VALUES (1, 1, 1)",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for (cql, message) in [
        (
            "UPDATE w SET v = 1 WHERE k = 0 AND c IN (1, 2) IF EXISTS",
            "IN on the clustering key columns is not supported with conditional updates",
        ),
        (
            "DELETE FROM w WHERE k = 0 AND c IN (1, 2) IF v = 1",
            "IN on the clustering key columns is not supported with conditional deletions",
        ),
        (
            "UPDATE w SET v = 1 WHERE k IN (0, 1) AND c = 1 IF EXISTS",
            "IN on the partition key is not supported with conditional updates",
        ),
        (
            "BEGIN BATCH INSERT INTO w (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS; \
             DELETE FROM w WHERE k = 1 AND c = 1 IF EXISTS; APPLY BATCH",
            "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row",
        ),
        (
            "BEGIN BATCH INSERT INTO w (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS; \
             UPDATE w SET v = 2 WHERE k = 1 AND c = 1 IF v = 1; APPLY BATCH",
            "Cannot mix IF conditions and IF NOT EXISTS for the same row",
        ),
        (
            "BEGIN BATCH USING TIMESTAMP 10 INSERT INTO w (k, c, v) VALUES (2, 1, 1) \
             USING TIMESTAMP 5; APPLY BATCH",
            "Timestamp must be set either on BATCH or individual statements",
        ),
        (
            "BEGIN BATCH USING TTL 10 INSERT INTO w (k, c, v) VALUES (2, 1, 1); APPLY BATCH",
            "Global TTL on the BATCH statement is not supported.",
        ),
        (
            "BEGIN COUNTER BATCH USING TIMESTAMP 10 UPDATE cn SET n = n + 1 WHERE k = 1; \
             APPLY BATCH",
            "Cannot provide custom timestamp for counter BATCH",
        ),
        (
            "DELETE c FROM w WHERE k = 1 AND c = 1",
            "Invalid identifier c for deletion (should not be a PRIMARY KEY part)",
        ),
        (
            "UPDATE w SET v = 1, v = 2 WHERE k = 1 AND c = 1",
            "Multiple incompatible setting of column v",
        ),
        (
            "INSERT INTO w (k, c, v, v) VALUES (1, 1, 1, 1)",
            "The column names contains duplicates",
        ),
        (
            "DELETE FROM w WHERE k = 1 IF EXISTS",
            "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns",
        ),
        (
            "UPDATE w SET v = 1 WHERE k = 1 AND c > 1",
            "Slice restrictions are not supported on the clustering columns in UPDATE statements",
        ),
        (
            "UPDATE w SET v = 1 WHERE token(k) = token(1) AND c = 1",
            "The token function cannot be used in WHERE clauses for UPDATE statements",
        ),
        (
            "DELETE FROM w WHERE token(k) = token(1) AND c = 1",
            "The token function cannot be used in WHERE clauses for DELETE statements",
        ),
    ] {
        let err = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(message), "{cql}: {err}");
    }
    // Nothing of those was written.
    assert_eq!(rows(&session, "SELECT * FROM w").await.len(), 1);
    // Conditions on different rows of a batch, and IF EXISTS with IF conditions on one row,
    // go together.
    let (flag, _) = applied(
        &session,
        "BEGIN BATCH INSERT INTO w (k, c, v) VALUES (1, 2, 1) IF NOT EXISTS; \
         UPDATE w SET v = 3 WHERE k = 1 AND c = 1 IF EXISTS; \
         UPDATE w SET v = 3 WHERE k = 1 AND c = 1 IF v = 1; APPLY BATCH",
    )
    .await;
    assert!(flag);
    // A failed condition on a row that does not exist: `[applied]` alone.
    for cql in [
        "UPDATE w SET v = 3 WHERE k = 9 AND c = 1 IF v = 4",
        "UPDATE w SET v = 3 WHERE k = 9 AND c = 1 IF s = 4",
        "DELETE v FROM w WHERE k = 9 AND c = 1 IF v = 1",
    ] {
        assert_eq!(
            applied(&session, cql).await,
            (false, vec!["[applied]".to_string()]),
            "{cql}"
        );
    }
    // An existing row's values come with the refusal.
    assert_eq!(
        applied(
            &session,
            "UPDATE w SET v = 3 WHERE k = 1 AND c = 1 IF v = 4"
        )
        .await,
        (false, vec!["[applied]".to_string(), "v".to_string()])
    );
    // A bound IN list of a condition that is null or unset.
    let in_list = session
        .prepare("UPDATE w SET v = 3 WHERE k = 1 AND c = 1 IF v IN ?")
        .await
        .unwrap();
    let err = session
        .execute_unpaged(&in_list, (None::<Vec<i32>>,))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("Invalid null list in IN condition"), "{err}");
    let err = session
        .execute_unpaged(&in_list, (scylla::value::MaybeUnset::<Vec<i32>>::Unset,))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("Invalid 'unset' value in condition"), "{err}");
    drop(session);
    node.stop().await;
}

/// Data of a dropped column stays dropped: a column added again under its name starts empty
/// (Cassandra's `AlterTest.testDropListAndAddListWithSameName`), cells written after a drop
/// `USING TIMESTAMP` stay (`testDropWithTimestamp`), a row made by an UPDATE of the dropped
/// column alone goes, and a re-add of another type or kind is refused in Cassandra's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_columns_stay_dropped() {
    let (mut node, session) = setup().await;
    let refusal = |cql: &'static str| {
        let session = &session;
        async move {
            session
                .query_unpaged(cql, &[])
                .await
                .err()
                .unwrap_or_else(|| panic!("{cql} was accepted"))
                .to_string()
        }
    };
    for cql in [
        "CREATE TABLE b (pk int PRIMARY KEY, v int, w int, l list<int>)",
        "INSERT INTO b (pk, v, w, l) VALUES (1, 1, 1, [1, 2])",
        "ALTER TABLE b DROP v",
        "ALTER TABLE b ADD v int",
        "ALTER TABLE b DROP l",
        "ALTER TABLE b ADD l list<int>",
        "UPDATE b SET l = l + [3] WHERE pk = 1",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    type BRow = (i32, Option<i32>, Option<i32>, Option<Vec<i32>>);
    let got: Vec<BRow> = session
        .query_unpaged("SELECT pk, v, w, l FROM b", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got, vec![(1, None, Some(1), Some(vec![3]))]);
    session
        .query_unpaged("ALTER TABLE b DROP w", &[])
        .await
        .unwrap();
    let e = refusal("ALTER TABLE b ADD w text").await;
    assert!(
        e.contains(
            "Cannot re-add previously dropped column 'w' of type text, incompatible with previous type int"
        ),
        "{e}"
    );
    // Cassandra 5.0's isSerializationCompatibleWith: a blob reads an int's bytes, but has no
    // fixed length.
    let e = refusal("ALTER TABLE b ADD w blob").await;
    assert!(
        e.contains(
            "Cannot re-add previously dropped column 'w' of type blob, incompatible with previous type int"
        ),
        "{e}"
    );
    session
        .query_unpaged("ALTER TABLE b ADD w int", &[])
        .await
        .unwrap();

    session
        .query_unpaged(
            "CREATE TABLE d (id int, c1 int, v1 int, todrop int, s int STATIC, PRIMARY KEY (id, c1))",
            &[],
        )
        .await
        .unwrap();
    for i in 0..5i32 {
        session
            .query_unpaged(
                "INSERT INTO d (id, c1, v1, todrop) VALUES (?, ?, ?, ?) USING TIMESTAMP ?",
                (1, i, i, i, 10_000i64 * i64::from(i)),
            )
            .await
            .unwrap();
    }
    for cql in [
        "ALTER TABLE d DROP todrop USING TIMESTAMP 20000",
        "ALTER TABLE d ADD todrop int",
        "INSERT INTO d (id, c1, v1, todrop) VALUES (1, 100, 100, 100) USING TIMESTAMP 30000",
        "ALTER TABLE d DROP s",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let got: Vec<(i32, i32, i32, Option<i32>)> = session
        .query_unpaged("SELECT id, c1, v1, todrop FROM d", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        got,
        vec![
            (1, 0, 0, None),
            (1, 1, 1, None),
            (1, 2, 2, None),
            (1, 3, 3, Some(3)),
            (1, 4, 4, Some(4)),
            (1, 100, 100, Some(100)),
        ]
    );
    let e = refusal("ALTER TABLE d ADD s int").await;
    assert!(
        e.contains(
            "Cannot re-add previously dropped column 's' of kind REGULAR, incompatible with previous kind STATIC"
        ),
        "{e}"
    );
    let kinds: Vec<(String, String)> = session
        .query_unpaged(
            "SELECT column_name, kind FROM system_schema.dropped_columns WHERE keyspace_name = 'ks' AND table_name = 'd'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        kinds,
        vec![
            ("s".to_string(), "static".to_string()),
            ("todrop".to_string(), "regular".to_string()),
        ]
    );

    // A row an UPDATE made holds only its cells: with the column dropped, no row is left.
    for cql in [
        "CREATE TABLE u (k int, c int, v int, w int, PRIMARY KEY (k, c))",
        "UPDATE u SET v = 1 WHERE k = 1 AND c = 1",
        "UPDATE u SET v = 2, w = 2 WHERE k = 1 AND c = 2",
        "ALTER TABLE u DROP v",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    assert_eq!(rows(&session, "SELECT * FROM u").await.len(), 1);
    assert_eq!(
        rows(&session, "SELECT * FROM u WHERE k = 1 AND c = 1")
            .await
            .len(),
        0
    );

    for cql in [
        "CREATE TYPE addr (street text)",
        "CREATE TABLE n (k int PRIMARY KEY, a addr, f frozen<addr>)",
        "ALTER TABLE n DROP f",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let e = refusal("ALTER TABLE n DROP a").await;
    assert!(
        e.contains("Cannot drop non-frozen column a of user type addr"),
        "{e}"
    );
    drop(session);
    node.stop().await;
}

/// ALTER TYPE and ALTER TABLE renames as Cassandra 4.1 applies them: positions taken from
/// the type or table as it was (so two fields may swap; two columns may not), duplicates and
/// renamed indexed columns refused, `IF EXISTS` skipping what is missing, and the messages of
/// `AlterTypeStatement`, `AlterTableStatement` and `IndexAttributes`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_type_and_table_renames() {
    let (mut node, session) = setup().await;
    for cql in [
        "CREATE TYPE sw (x int, y text)",
        "ALTER TYPE sw RENAME x TO y AND y TO x",
        "ALTER TYPE sw RENAME IF EXISTS nope TO z",
        "CREATE TYPE addr (street text, zip int)",
        "CREATE TABLE r (a int, b int, c int, v int, PRIMARY KEY (a, b))",
        "CREATE INDEX ON r (b)",
        "ALTER TABLE r RENAME IF EXISTS nope TO x",
        "CREATE TABLE keyed (k frozen<addr> PRIMARY KEY, v int)",
    ] {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    let fields: Vec<(Vec<String>, Vec<String>)> = session
        .query_unpaged(
            "SELECT field_names, field_types FROM system_schema.types WHERE keyspace_name = 'ks' AND type_name = 'sw'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        fields,
        vec![(
            vec!["y".to_string(), "x".to_string()],
            vec!["int".to_string(), "text".to_string()]
        )]
    );
    for (cql, expected) in [
        (
            "ALTER TYPE addr RENAME street TO zip",
            "Duplicate field name zip in type ks",
        ),
        (
            "ALTER TYPE addr RENAME nope TO x",
            "Unkown field nope in user type ks.addr",
        ),
        (
            "ALTER TYPE addr ADD zip int",
            "Cannot add field zip to type ks.addr: a field with name zip already exists",
        ),
        (
            "ALTER TYPE addr ADD self frozen<addr>",
            "Cannot add new field self of type frozen<addr> to user type ks.addr as it would create a circular reference",
        ),
        (
            "ALTER TYPE addr ADD city text",
            "Cannot add new field city of type text to user type ks.addr as the type is being used in partition key by the following tables: ks.keyed",
        ),
        ("ALTER TYPE nope ADD x int", "Type ks.nope doesn't exist"),
        (
            "ALTER TABLE r RENAME a TO b AND b TO a",
            "Cannot rename column a to b in table 'ks.r'; another column with that name already exists",
        ),
        (
            "ALTER TABLE r RENAME b TO c",
            "Cannot rename column b to c in table 'ks.r'; another column with that name already exists",
        ),
        (
            "ALTER TABLE r RENAME b TO b2",
            "Cannot rename column b because it has dependent secondary indexes (r_b_idx)",
        ),
        (
            "ALTER TABLE r RENAME nope TO x",
            "Column nope was not found in table ks.r",
        ),
        (
            "ALTER TABLE r DROP nope",
            "Column nope was not found in table 'ks.r'",
        ),
        ("ALTER TABLE r DROP b", "Cannot drop PRIMARY KEY column b"),
        (
            "ALTER TABLE r ADD (n int, n text)",
            "Column with name 'n' already exists",
        ),
        (
            "CREATE INDEX ON r (v) WITH OPTIONS = {'a': 'b'}",
            "Cannot specify options for a non-CUSTOM index",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .err()
            .unwrap_or_else(|| panic!("{cql} was accepted"))
            .to_string();
        assert!(error.contains(expected), "{cql}: {error}");
    }
    session
        .query_unpaged("ALTER TABLE r RENAME a TO a2", &[])
        .await
        .unwrap();
    session
        .query_unpaged("INSERT INTO r (a2, b, c) VALUES (1, 2, 3)", &[])
        .await
        .unwrap();
    assert_eq!(
        rows(&session, "SELECT * FROM r WHERE a2 = 1").await.len(),
        1
    );
    drop(session);
    node.stop().await;
}

/// A counter deleted at cell level stays deleted: Cassandra's counter tombstone wins over any
/// later increment (`Cells.resolveCounter`); a row deletion does not stop later increments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_counters_stay_deleted() {
    let (mut node, session) = setup().await;
    for cql in [
        "CREATE TABLE c (k int, ck int, a counter, b counter, PRIMARY KEY (k, ck))",
        "UPDATE c SET a = a + 5, b = b + 1 WHERE k = 1 AND ck = 1",
        "DELETE a FROM c WHERE k = 1 AND ck = 1",
        "UPDATE c SET a = a + 3, b = b + 1 WHERE k = 1 AND ck = 1",
        "UPDATE c SET a = a + 5 WHERE k = 2 AND ck = 1",
        "DELETE FROM c WHERE k = 2 AND ck = 1",
        "UPDATE c SET a = a + 2 WHERE k = 2 AND ck = 1",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let got: Vec<(i32, Option<i64>, Option<i64>)> = session
        .query_unpaged("SELECT k, a, b FROM c", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(
            i32,
            Option<scylla::value::Counter>,
            Option<scylla::value::Counter>,
        )>()
        .unwrap()
        .map(|r| {
            let (k, a, b) = r.unwrap();
            (k, a.map(|c| c.0), b.map(|c| c.0))
        })
        .collect();
    assert!(got.contains(&(1, None, Some(2))), "{got:?}");
    assert!(got.contains(&(2, Some(2), None)), "{got:?}");
    drop(session);
    node.stop().await;
}

/// An UPDATE or DELETE of static columns alone names the partition, not a row: a clustering
/// restriction is refused (Cassandra's `UpdateTest.testUpdateWithAStaticColumn`), unless a
/// condition on a regular column needs the row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_only_writes_refuse_a_clustering_key() {
    let (mut node, session) = setup().await;
    for cql in [
        "CREATE TABLE st (pk int, ck int, s int static, v int, PRIMARY KEY (pk, ck))",
        "INSERT INTO st (pk, ck, v) VALUES (1, 1, 2)",
        "INSERT INTO st (pk, s) VALUES (1, 1)",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for (cql, kind) in [
        ("UPDATE st SET s = 3 WHERE pk = 1 AND ck = 1", "UPDATE"),
        ("DELETE s FROM st WHERE pk = 1 AND ck = 1", "DELETE"),
        (
            "UPDATE st SET s = 3 WHERE pk = 1 AND ck = 1 IF s = 1",
            "UPDATE",
        ),
        (
            "DELETE s FROM st WHERE pk = 1 AND ck = 1 IF s = 1",
            "DELETE",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .err()
            .unwrap_or_else(|| panic!("{cql} was accepted"))
            .to_string();
        assert!(
            error.contains(&format!(
                "Invalid restrictions on clustering columns since the {kind} statement modifies only static columns"
            )),
            "{cql}: {error}"
        );
    }
    let s: Vec<(Option<i32>,)> = session
        .query_unpaged("SELECT s FROM st WHERE pk = 1", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(s, vec![(Some(1),)], "nothing was written");
    session
        .query_unpaged("UPDATE st SET s = 4 WHERE pk = 1", &[])
        .await
        .unwrap();
    // A condition on a regular column checks the row the whole key names; the write is the
    // partition's static row (InsertUpdateIfConditionStaticsTest).
    let (done, _) = applied(
        &session,
        "UPDATE st SET s = 5 WHERE pk = 1 AND ck = 1 IF v = 2",
    )
    .await;
    assert!(done);
    let (done, _) = applied(
        &session,
        "DELETE s FROM st WHERE pk = 1 AND ck = 1 IF v = 3",
    )
    .await;
    assert!(!done);
    let s: Vec<(Option<i32>,)> = session
        .query_unpaged("SELECT s FROM st WHERE pk = 1", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(s, vec![(Some(5),)]);
    for (cql, message) in [
        (
            "DELETE s, v FROM st WHERE pk = 1 IF s = 1",
            "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns",
        ),
        (
            "DELETE s FROM st WHERE pk = 1 IF v = 2 AND s = 1",
            "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns",
        ),
        (
            "UPDATE st SET s = 3 WHERE pk = 1 IF v = 4 AND s = 2",
            "Some clustering keys are missing: ck",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .err()
            .unwrap_or_else(|| panic!("{cql} was accepted"))
            .to_string();
        assert!(error.contains(message), "{cql}: {error}");
    }
    drop(session);
    node.stop().await;
}

/// A conditional batch that fails on a static condition shows CQL rows with the static values
/// (Cassandra's `InsertUpdateIfConditionStaticsTest.testStaticColumnsCas`): the partition's
/// first row when the static condition is alone, no row of its own beside row conditions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_static_batch_conditions_show_cql_rows() {
    let (mut node, session) = setup().await;
    for cql in [
        "CREATE TABLE sc (id int, k text, version int static, v text, PRIMARY KEY (id, k))",
        "INSERT INTO sc (id, k, version, v) VALUES (0, 'k1', 2, 'foo')",
        "INSERT INTO sc (id, k, v) VALUES (0, 'k2', 'bar')",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let rows_of = |cql: &'static str| {
        let session = &session;
        async move {
            session
                .query_unpaged(cql, &[])
                .await
                .unwrap()
                .into_rows_result()
                .unwrap()
                .rows::<(bool, i32, Option<String>, Option<i32>)>()
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap()
        }
    };
    let alone = rows_of(
        "BEGIN BATCH UPDATE sc SET v = 'foobar' WHERE id = 0 AND k = 'k1'; \
         UPDATE sc SET v = 'barfoo' WHERE id = 0 AND k = 'k2'; \
         UPDATE sc SET version = 3 WHERE id = 0 IF version = 1; APPLY BATCH",
    )
    .await;
    assert_eq!(alone, vec![(false, 0, Some("k1".to_string()), Some(2))]);
    type Shown = (bool, i32, Option<String>, Option<i32>, Option<String>);
    let beside: Vec<Shown> = session
        .query_unpaged(
            "BEGIN BATCH UPDATE sc SET version = 4 WHERE id = 0 IF version = 3; \
             UPDATE sc SET v = 'row1' WHERE id = 0 AND k = 'k1' IF v = 'x'; \
             UPDATE sc SET v = 'row2' WHERE id = 0 AND k = 'k2' IF v = 'y'; APPLY BATCH",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        beside,
        vec![
            (
                false,
                0,
                Some("k1".to_string()),
                Some(2),
                Some("foo".to_string())
            ),
            (
                false,
                0,
                Some("k2".to_string()),
                Some(2),
                Some("bar".to_string())
            ),
        ]
    );
    drop(session);
    node.stop().await;
}
