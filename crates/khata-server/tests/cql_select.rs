//! SELECT through the `scylla` driver: aggregates, GROUP BY, DISTINCT, IN and multi-column
//! restrictions on clustering columns, element selection and time conversions.

mod support;

use futures::{StreamExt, TryStreamExt};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use support::TestNode;

async fn query<T>(session: &Session, cql: &str) -> Vec<T>
where
    T: for<'f, 'm> scylla::deserialize::row::DeserializeRow<'f, 'm>,
{
    session
        .query_unpaged(cql, &[])
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e}"))
        .into_rows_result()
        .unwrap()
        .rows::<T>()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregates_groups_and_restrictions() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session.use_keyspace("ks", false).await.unwrap();
    session
        .query_unpaged(
            "CREATE TABLE t (k int, a int, b int, v int, m map<text, int>, s int static, \
             PRIMARY KEY (k, a, b)) WITH CLUSTERING ORDER BY (a DESC, b ASC)",
            &[],
        )
        .await
        .unwrap();
    let insert = session
        .prepare("INSERT INTO t (k, a, b, v, m, s) VALUES (?, ?, ?, ?, {'x': ?}, ?)")
        .await
        .unwrap();
    for k in 0..3i32 {
        for a in 0..3i32 {
            for b in 0..2i32 {
                let v = k * 100 + a * 10 + b;
                session
                    .execute_unpaged(&insert, (k, a, b, v, v, k))
                    .await
                    .unwrap();
            }
        }
    }
    // Whole-table aggregates, and an empty result still gives one row.
    let all: Vec<(i64, i32, i32, i32)> =
        query(&session, "SELECT count(*), min(v), max(v), sum(v) FROM t").await;
    assert_eq!(
        all,
        vec![(18, 0, 221, (0..3).map(|k| 6 * 100 * k + 6 * 10 + 3).sum())]
    );
    let none: Vec<(i64,)> = query(&session, "SELECT count(*) FROM t WHERE k = 9").await;
    assert_eq!(none, vec![(0,)]);
    // GROUP BY the partition key, then by (k, a) with LIMIT on groups.
    let mut by_k: Vec<(i32, i64, i32)> =
        query(&session, "SELECT k, count(*), max(v) FROM t GROUP BY k").await;
    by_k.sort();
    assert_eq!(by_k, vec![(0, 6, 21), (1, 6, 121), (2, 6, 221)]);
    let by_a: Vec<(i32, i32, i64)> = query(
        &session,
        "SELECT k, a, count(*) FROM t WHERE k = 1 GROUP BY k, a LIMIT 2",
    )
    .await;
    assert_eq!(by_a, vec![(1, 2, 2), (1, 1, 2)], "a is DESC");
    // With GROUP BY, PER PARTITION LIMIT counts groups, not rows.
    let mut first_groups: Vec<(i32, i32, i64)> = query(
        &session,
        "SELECT k, a, count(*) FROM t GROUP BY k, a PER PARTITION LIMIT 2",
    )
    .await;
    first_groups.sort();
    assert_eq!(
        first_groups,
        vec![
            (0, 1, 2),
            (0, 2, 2),
            (1, 1, 2),
            (1, 2, 2),
            (2, 1, 2),
            (2, 2, 2)
        ]
    );
    let in_partitions: Vec<(i32, i32, i64)> = query(
        &session,
        "SELECT k, a, count(*) FROM t WHERE k IN (0, 2) GROUP BY k, a PER PARTITION LIMIT 1",
    )
    .await;
    assert_eq!(in_partitions, vec![(0, 2, 2), (2, 2, 2)]);
    let limited: Vec<(i32, i32, i64)> = query(
        &session,
        "SELECT k, a, count(*) FROM t WHERE k = 1 GROUP BY k, a PER PARTITION LIMIT 2 LIMIT 1",
    )
    .await;
    assert_eq!(limited, vec![(1, 2, 2)]);
    // DISTINCT partition keys with their static column.
    let mut distinct: Vec<(i32, i32)> = query(&session, "SELECT DISTINCT k, s FROM t").await;
    distinct.sort();
    assert_eq!(distinct, vec![(0, 0), (1, 1), (2, 2)]);
    // A partition with only static content is one row when the query names no clustering
    // row, and no row when it does (Cassandra's queriesFullPartitions).
    session
        .query_unpaged("INSERT INTO t (k, s) VALUES (7, 70)", &[])
        .await
        .unwrap();
    let whole: Vec<(i32, Option<i32>)> = query(&session, "SELECT s, v FROM t WHERE k = 7").await;
    assert_eq!(whole, vec![(70, None)]);
    let row: Vec<(i32, Option<i32>)> = query(
        &session,
        "SELECT s, v FROM t WHERE k = 7 AND a = 1 AND b = 1",
    )
    .await;
    assert!(row.is_empty(), "{row:?}");
    let slice: Vec<(i32, Option<i32>)> =
        query(&session, "SELECT s, v FROM t WHERE k = 7 AND a > 0").await;
    assert!(slice.is_empty(), "{slice:?}");
    session
        .query_unpaged("DELETE FROM t WHERE k = 7", &[])
        .await
        .unwrap();
    // IN on clustering columns, and multi-column slices on mixed-order columns (a DESC, b
    // ASC): tuples compare in the columns' natural order, rows come in clustering order.
    let inn: Vec<(i32, i32)> = query(
        &session,
        "SELECT a, b FROM t WHERE k = 2 AND a IN (0, 2) AND b IN (1, 0)",
    )
    .await;
    assert_eq!(inn, vec![(2, 0), (2, 1), (0, 0), (0, 1)]);
    let mixed: Vec<(i32, i32)> = query(
        &session,
        "SELECT a, b FROM t WHERE k = 2 AND (a, b) > (1, 0)",
    )
    .await;
    assert_eq!(mixed, vec![(2, 0), (2, 1), (1, 1)]);
    let mixed: Vec<(i32, i32)> = query(
        &session,
        "SELECT a, b FROM t WHERE k = 2 AND (a, b) >= (1, 0) AND (a, b) < (2, 1)",
    )
    .await;
    assert_eq!(mixed, vec![(2, 0), (1, 0), (1, 1)]);
    let mixed: Vec<(i32, i32)> = query(
        &session,
        "SELECT a, b FROM t WHERE k = 2 AND (a, b) <= (1, 0) ORDER BY a ASC",
    )
    .await;
    assert_eq!(mixed, vec![(0, 1), (0, 0), (1, 0)]);
    let slice: Vec<(i32, i32)> = query(
        &session,
        "SELECT a, b FROM t WHERE k = 2 AND a = 1 AND b > 0",
    )
    .await;
    assert_eq!(slice, vec![(1, 1)]);
    // Element selection.
    let el: Vec<(Option<i32>, Option<i32>)> = query(
        &session,
        "SELECT m['x'], m['nope'] FROM t WHERE k = 1 AND a = 2 AND b = 1",
    )
    .await;
    assert_eq!(el, vec![(Some(121), None)]);
    // CAST.
    let cast: Vec<(String, f64, i64)> = query(
        &session,
        "SELECT CAST(v AS text), CAST(v AS double), CAST(a AS bigint) FROM t WHERE k = 1 AND a = 2 AND b = 1",
    )
    .await;
    assert_eq!(cast, vec![("121".to_string(), 121.0, 2)]);
    let e = session
        .query_unpaged("SELECT CAST(m AS int) FROM t WHERE k = 1", &[])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("cannot be cast"), "{e}");
    drop(session);
    node.stop().await;
}

/// `token(k) op ...` compares with a bigint or with `token(...)` of key values (literals or
/// markers, which a prepared statement describes as the partition key's columns), on a
/// compound partition key too; a call with the wrong number of components is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_relations_compare_with_token_calls() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session.use_keyspace("ks", false).await.unwrap();
    session
        .query_unpaged(
            "CREATE TABLE p (a int, b text, v int, PRIMARY KEY ((a, b)))",
            &[],
        )
        .await
        .unwrap();
    for a in 0..20 {
        session
            .query_unpaged("INSERT INTO p (a, b, v) VALUES (?, 'x', ?)", (a, a * 10))
            .await
            .unwrap();
    }
    let mut all: Vec<(i64, i32)> = query(&session, "SELECT token(a, b), a FROM p").await;
    all.sort();
    assert_eq!(all.len(), 20);
    // Every key's token bounds the ones after it, literal and prepared alike.
    let prepared = session
        .prepare("SELECT a FROM p WHERE token(a, b) > token(?, ?)")
        .await
        .unwrap();
    let specs: Vec<String> = prepared
        .get_variable_col_specs()
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    // The token function's arguments, as Cassandra names them (not the key columns).
    assert_eq!(specs, ["arg0(system.token)", "arg1(system.token)"]);
    for (i, (_, a)) in all.iter().enumerate() {
        let expected: Vec<i32> = all[i + 1..].iter().map(|(_, a)| *a).collect();
        let literal: Vec<(i32,)> = query(
            &session,
            &format!("SELECT a FROM p WHERE token(a, b) > token({a}, 'x')"),
        )
        .await;
        assert_eq!(
            literal.into_iter().map(|r| r.0).collect::<Vec<_>>(),
            expected
        );
        let bound: Vec<i32> = session
            .execute_unpaged(&prepared, (*a, "x"))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows::<(i32,)>()
            .unwrap()
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(bound, expected);
    }
    let (token, a) = all[7];
    let one: Vec<(i32,)> = query(
        &session,
        &format!("SELECT a FROM p WHERE token(a, b) >= token({a}, 'x') AND token(a, b) <= {token}"),
    )
    .await;
    assert_eq!(one, vec![(a,)]);
    let error = session
        .query_unpaged("SELECT a FROM p WHERE token(a, b) > token(1)", &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("Invalid number of arguments in call to function system.token: 2 required but 1 provided"),
        "{error}"
    );
    drop(session);
    node.stop().await;
}

/// Scalar functions and field selections as selectors, nested: blob conversions, `toJson`,
/// the time functions on computed values, `now()`/`uuid()`, user type fields (frozen and not);
/// argument types are checked as Cassandra checks them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computed_selectors() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TYPE ks.addr (street text, zip int)",
        "CREATE TABLE ks.t (k int, c timeuuid, v int, m map<text, int>, b blob, \
         a frozen<addr>, u addr, PRIMARY KEY (k, c))",
        "INSERT INTO ks.t (k, c, v, m, b, a, u) VALUES (1, 50554d6e-29bb-11e5-b345-feff819cdc9f, \
         7, {'x': 1, 'y': 2}, 0x00000005, {street: 'main', zip: 10}, {street: 'side', zip: 20})",
        "UPDATE ks.t SET u.zip = 21 WHERE k = 1 AND c = 50554d6e-29bb-11e5-b345-feff819cdc9f",
    ] {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    let got: Vec<(i32, Vec<u8>, Option<i32>)> = query(
        &session,
        "SELECT blobAsInt(intAsBlob(v)), intAsBlob(v), blobAsInt(b) FROM ks.t WHERE k = 1",
    )
    .await;
    assert_eq!(got, vec![(7, vec![0, 0, 0, 7], Some(5))]);
    let got: Vec<(String, String)> = query(
        &session,
        "SELECT toJson(m), toJson(a) FROM ks.t WHERE k = 1",
    )
    .await;
    assert_eq!(
        got,
        vec![(
            r#"{"x": 1, "y": 2}"#.to_string(),
            r#"{"street": "main", "zip": 10}"#.to_string()
        )]
    );
    // 50554d6e-29bb-11e5-... was made at 2015-07-14 00:00:18.805 UTC
    // (Python: `(u.time - 0x01B21DD213814000) // 10000`).
    let got: Vec<(i64, i64)> = query(
        &session,
        "SELECT toUnixTimestamp(toTimestamp(c)), toUnixTimestamp(minTimeuuid(toTimestamp(c))) \
         FROM ks.t WHERE k = 1",
    )
    .await;
    assert_eq!(got, vec![(1_436_832_018_805, 1_436_832_018_805)]);
    let got: Vec<(String, i32, String, i32)> = query(
        &session,
        "SELECT a.street, a.zip, u.street, u.zip FROM ks.t",
    )
    .await;
    assert_eq!(got, vec![("main".into(), 10, "side".into(), 21)]);
    // Names as Cassandra gives them, aliases, and functions of no argument.
    let result = session
        .query_unpaged(
            "SELECT blobAsInt(intAsBlob(v)), a.zip, now() AS n, uuid(), toDate(now()) FROM ks.t",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let names: Vec<&str> = result.column_specs().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "system.blobasint(system.intasblob(v))",
            "a.zip",
            "n",
            "system.uuid()",
            "system.todate(system.now())"
        ]
    );
    let (_, _, now, _, _) = result
        .single_row::<(
            i32,
            i32,
            scylla::value::CqlTimeuuid,
            uuid::Uuid,
            scylla::value::CqlDate,
        )>()
        .unwrap();
    assert_eq!(now.as_ref().get_version_num(), 1);
    for (cql, expected) in [
        (
            "SELECT textAsBlob(v) FROM ks.t",
            "Type error: int cannot be passed as argument 0 of function system.textasblob of type text",
        ),
        (
            "SELECT blobAsBigint(b) FROM ks.t",
            "is not a valid binary representation for type bigint",
        ),
        ("SELECT nosuch(v) FROM ks.t", "Unknown function nosuch"),
        (
            "SELECT v.zip FROM ks.t",
            "Invalid field selection: v of type int is not a user type",
        ),
        ("SELECT a.nope FROM ks.t", "has no field nope"),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{cql}: {error}");
    }
    drop(session);
    node.stop().await;
}

/// ALLOW FILTERING on regular and static columns: `=`, slices compared in the column's type
/// (not its bytes), `CONTAINS` on lists, sets and map values, `CONTAINS KEY` on map keys,
/// prepared (a `CONTAINS ?` marker is an element); refused without ALLOW FILTERING and where
/// Cassandra refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtering_with_slices_and_contains() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.f (k int, c int, v int, t text, s set<int>, m map<text, int>, \
         l list<text>, st int STATIC, PRIMARY KEY (k, c))",
        "INSERT INTO ks.f (k, c, v, t, s, m, l, st) VALUES (1, 1, 1, 'x', {1, 2}, {'a': 10}, ['p'], 5)",
        "INSERT INTO ks.f (k, c, v, t, m) VALUES (1, 2, -2, 'y', {'b': 20})",
        "INSERT INTO ks.f (k, c, v, l, st) VALUES (2, 1, 3, ['q', 'p'], 7)",
    ] {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    let keys = async |filter: &str| {
        let mut got: Vec<(i32, i32)> = query(
            &session,
            &format!("SELECT k, c FROM ks.f WHERE {filter} ALLOW FILTERING"),
        )
        .await;
        got.sort();
        got
    };
    assert_eq!(keys("v > 1").await, vec![(2, 1)]);
    // -2 < 1 as ints, though its bytes sort after 1's.
    assert_eq!(keys("v < 1").await, vec![(1, 2)]);
    assert_eq!(keys("v >= -2 AND v <= 1").await, vec![(1, 1), (1, 2)]);
    assert_eq!(keys("t > 'x'").await, vec![(1, 2)]);
    assert_eq!(keys("st > 5").await, vec![(2, 1)]);
    assert_eq!(keys("s CONTAINS 1").await, vec![(1, 1)]);
    assert_eq!(keys("m CONTAINS KEY 'b'").await, vec![(1, 2)]);
    assert_eq!(keys("m CONTAINS 10").await, vec![(1, 1)]);
    assert_eq!(keys("l CONTAINS 'p'").await, vec![(1, 1), (2, 1)]);
    assert_eq!(keys("k = 1 AND v > 0").await, vec![(1, 1)]);
    let count: Vec<(i64,)> = query(
        &session,
        "SELECT count(*) FROM ks.f WHERE v > 0 ALLOW FILTERING",
    )
    .await;
    assert_eq!(count, vec![(2,)]);
    let prepared = session
        .prepare("SELECT k, c FROM ks.f WHERE l CONTAINS ? AND v > ? ALLOW FILTERING")
        .await
        .unwrap();
    let got: Vec<(i32, i32)> = session
        .execute_unpaged(&prepared, ("p", 2i32))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(i32, i32)>()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(got, vec![(2, 1)]);
    for (cql, expected) in [
        ("SELECT k FROM ks.f WHERE v > 0", "use ALLOW FILTERING"),
        (
            "SELECT k FROM ks.f WHERE v CONTAINS 0 ALLOW FILTERING",
            "Cannot use CONTAINS on non-collection column v",
        ),
        (
            "SELECT k FROM ks.f WHERE s > {1} ALLOW FILTERING",
            "Collection column 's' (set<int>) cannot be restricted by a '>' relation",
        ),
        (
            "SELECT k FROM ks.f WHERE s = {1} ALLOW FILTERING",
            "Collection column 's' (set<int>) cannot be restricted by a '=' relation",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{cql}: {error}");
    }
    drop(session);
    node.stop().await;
}

/// ALLOW FILTERING on key columns: part of a compound partition key (`=` or `IN`), a slice on a
/// partition key column, a clustering column after an unrestricted one or after the sliced one
/// (`=`, `IN` or a slice). Without
/// ALLOW FILTERING each gets Cassandra's refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtering_on_key_columns() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.p (a int, b int, c1 int, c2 text, c3 int, s int STATIC, \
         PRIMARY KEY ((a, b), c1, c2, c3))",
        "INSERT INTO ks.p (a, b, c1, c2, c3) VALUES (1, 1, 1, 'x', 1)",
        "INSERT INTO ks.p (a, b, c1, c2, c3) VALUES (1, 2, 1, 'y', 2)",
        "INSERT INTO ks.p (a, b, c1, c2, c3) VALUES (1, 2, 2, 'x', 3)",
        "INSERT INTO ks.p (a, b, c1, c2, c3) VALUES (2, 2, 3, 'x', 4)",
        "INSERT INTO ks.p (a, b, s) VALUES (3, 3, 9)",
    ] {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    let rows = async |filter: &str| {
        let mut got: Vec<(i32, i32, Option<i32>)> = query(
            &session,
            &format!("SELECT a, b, c3 FROM ks.p WHERE {filter} ALLOW FILTERING"),
        )
        .await;
        got.sort();
        got
    };
    assert_eq!(
        rows("a = 1").await,
        vec![(1, 1, Some(1)), (1, 2, Some(2)), (1, 2, Some(3))]
    );
    assert_eq!(
        rows("b = 2 AND a = 1").await,
        vec![(1, 2, Some(2)), (1, 2, Some(3))]
    );
    assert_eq!(
        rows("a = 1 AND b > 1").await,
        vec![(1, 2, Some(2)), (1, 2, Some(3))]
    );
    // A partition with only its static row passes a partition key filter as one row.
    assert_eq!(rows("a >= 2").await, vec![(2, 2, Some(4)), (3, 3, None)]);
    assert_eq!(
        rows("c2 = 'x'").await,
        vec![(1, 1, Some(1)), (1, 2, Some(3)), (2, 2, Some(4))]
    );
    assert_eq!(
        rows("a = 1 AND b = 2 AND c2 = 'x'").await,
        vec![(1, 2, Some(3))]
    );
    assert_eq!(rows("c1 = 1 AND c3 > 1").await, vec![(1, 2, Some(2))]);
    assert_eq!(
        rows("c1 > 1 AND c2 = 'x'").await,
        vec![(1, 2, Some(3)), (2, 2, Some(4))]
    );
    assert_eq!(
        rows("c3 >= 2 AND c3 < 4").await,
        vec![(1, 2, Some(2)), (1, 2, Some(3))]
    );
    // Slices of two clustering columns, in either order: the first column's narrows the
    // range, the other's filters.
    for filter in [
        "a = 1 AND b = 2 AND c1 >= 1 AND c2 > 'x'",
        "a = 1 AND b = 2 AND c2 > 'x' AND c1 >= 1",
        "a = 1 AND b = 2 AND c2 > 'w' AND c2 < 'z' AND c1 >= 1 AND c1 < 2",
    ] {
        assert_eq!(rows(filter).await, vec![(1, 2, Some(2))], "{filter}");
    }
    assert_eq!(
        rows("c1 > 0 AND c2 >= 'x' AND c3 < 4").await,
        vec![(1, 1, Some(1)), (1, 2, Some(2)), (1, 2, Some(3))]
    );
    // IN on part of the partition key, or on a clustering column after a gap.
    assert_eq!(
        rows("b IN (1, 3)").await,
        vec![(1, 1, Some(1)), (3, 3, None)]
    );
    assert_eq!(rows("a IN ()").await, vec![]);
    assert_eq!(rows("c2 IN ('y', 'z')").await, vec![(1, 2, Some(2))]);
    assert_eq!(
        rows("a = 1 AND b = 2 AND c3 IN (1, 3)").await,
        vec![(1, 2, Some(3))]
    );
    for (cql, expected) in [
        ("SELECT a FROM ks.p WHERE a = 1", "use ALLOW FILTERING"),
        // Cassandra 4.1 filters a slice of the partition key (StatementRestrictions).
        ("SELECT a FROM ks.p WHERE a > 1", "use ALLOW FILTERING"),
        (
            "SELECT a FROM ks.p WHERE a = 1 AND b = 2 AND c2 = 'x'",
            "PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not restricted",
        ),
        (
            "SELECT a FROM ks.p WHERE a = 1 AND b = 2 AND c1 > 1 AND c2 = 'x'",
            "Clustering column \"c2\" cannot be restricted (preceding column \"c1\" is restricted by a non-EQ relation)",
        ),
        (
            "SELECT a FROM ks.p WHERE a = 1 AND b = 2 AND c1 > 1 AND c2 > 'x'",
            "Clustering column \"c2\" cannot be restricted (preceding column \"c1\" is restricted by a non-EQ relation)",
        ),
        (
            "SELECT a FROM ks.p WHERE a = 1 AND b = 2 AND c2 > 'x' AND c1 > 1",
            "PRIMARY KEY column \"c2\" cannot be restricted (preceding column \"c1\" is restricted by a non-EQ relation)",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{cql}: {error}");
    }
    drop(session);
    node.stop().await;
}

/// Pages of every size return what one unpaged answer does, for the queries that count per
/// partition (PER PARTITION LIMIT, DISTINCT) or filter, over a scan, over IN, within one
/// partition and through an index, with pages ending inside partitions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_keeps_per_partition_counts() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int, c int, v int, s int STATIC, PRIMARY KEY (k, c))",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.t (k, c, v) VALUES (?, ?, ?)")
        .await
        .unwrap();
    for k in 0..6i32 {
        for c in 0..(3 + k) {
            session
                .execute_unpaged(&insert, (k, c, c % 3))
                .await
                .unwrap();
        }
    }
    session
        .query_unpaged("INSERT INTO ks.t (k, s) VALUES (9, 1)", &[])
        .await
        .unwrap();
    for cql in [
        "CREATE TABLE ks.i (k int, c int, v int, s int STATIC, PRIMARY KEY (k, c))",
        "CREATE INDEX ON ks.i (v)",
        "CREATE INDEX ON ks.i (s)",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.i (k, c, v, s) VALUES (?, ?, ?, 7)")
        .await
        .unwrap();
    for k in 0..8i32 {
        for c in 0..15i32 {
            session
                .execute_unpaged(&insert, (k, c, c % 3))
                .await
                .unwrap();
        }
    }
    for cql in [
        "SELECT k, c FROM ks.t PER PARTITION LIMIT 2",
        "SELECT k, c FROM ks.t WHERE k IN (1, 3, 5) PER PARTITION LIMIT 3",
        "SELECT k, c FROM ks.t WHERE v = 1 PER PARTITION LIMIT 1 ALLOW FILTERING",
        "SELECT k, c FROM ks.t WHERE v = 2 ALLOW FILTERING",
        "SELECT k, c FROM ks.t PER PARTITION LIMIT 2 LIMIT 7",
        // Filters inside named partitions (cassandra-dtest paging_test's
        // test_paging_with_filtering): a full page must not end the query.
        "SELECT k, c FROM ks.t WHERE k = 5 AND v = 1 ALLOW FILTERING",
        "SELECT k, c FROM ks.t WHERE k = 5 AND c > 1 AND v = 2 ALLOW FILTERING",
        "SELECT k, c FROM ks.t WHERE k = 5 AND v = 1 ORDER BY c DESC ALLOW FILTERING",
        "SELECT k, c FROM ks.t WHERE k IN (3, 4, 5) AND v = 1 ALLOW FILTERING",
        "SELECT k, c FROM ks.t WHERE k IN (3, 4, 5) AND v = 0 PER PARTITION LIMIT 2 ALLOW FILTERING",
        // Through an index (ks.i, below), with chunks and pages ending inside partitions.
        "SELECT k, c FROM ks.i WHERE v = 1 PER PARTITION LIMIT 2",
        "SELECT k, c FROM ks.i WHERE v = 1",
        "SELECT k, c FROM ks.i WHERE k = 3 AND v = 1",
        "SELECT k, c FROM ks.i WHERE s = 7 PER PARTITION LIMIT 3",
    ] {
        let whole: Vec<(i32, Option<i32>)> = query(&session, cql).await;
        assert!(!whole.is_empty(), "{cql}");
        for page in 1..=8 {
            let mut statement = scylla::statement::Statement::new(cql);
            statement.set_page_size(page);
            let paged: Vec<(i32, Option<i32>)> = session
                .query_iter(statement, &[])
                .await
                .unwrap()
                .rows_stream::<(i32, Option<i32>)>()
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            assert_eq!(paged, whole, "{cql} in pages of {page}");
        }
    }
    for cql in [
        "SELECT DISTINCT k FROM ks.t",
        "SELECT DISTINCT k FROM ks.t WHERE k IN (0, 2, 4, 9)",
        "SELECT DISTINCT k FROM ks.i WHERE s = 7",
    ] {
        let whole: Vec<(i32,)> = query(&session, cql).await;
        for page in 1..=4 {
            let mut statement = scylla::statement::Statement::new(cql);
            statement.set_page_size(page);
            let paged: Vec<(i32,)> = session
                .query_iter(statement, &[])
                .await
                .unwrap()
                .rows_stream::<(i32,)>()
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            assert_eq!(paged, whole, "{cql} in pages of {page}");
        }
    }
    let distinct: Vec<(i32,)> = query(&session, "SELECT DISTINCT k FROM ks.t").await;
    assert_eq!(distinct.len(), 7);
    drop(session);
    node.stop().await;
}

/// ORDER BY with IN on the partition key orders the rows of all the partitions together (the
/// chat schema's newest messages across buckets), LIMIT applied after the merge; a result
/// larger than the page is refused as Cassandra refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_by_merges_partitions_of_an_in() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.m (channel int, bucket int, id int, PRIMARY KEY ((channel, bucket), id)) \
         WITH CLUSTERING ORDER BY (id DESC)",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for bucket in 0..3 {
        for i in 0..5 {
            session
                .query_unpaged(
                    "INSERT INTO ks.m (channel, bucket, id) VALUES (1, ?, ?)",
                    (bucket, i * 3 + bucket),
                )
                .await
                .unwrap();
        }
    }
    let ids = async |cql: &str| -> Vec<i32> {
        query::<(i32,)>(&session, cql)
            .await
            .into_iter()
            .map(|r| r.0)
            .collect()
    };
    assert_eq!(
        ids(
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0, 1, 2) ORDER BY id DESC LIMIT 5"
        )
        .await,
        vec![14, 13, 12, 11, 10]
    );
    assert_eq!(
        ids(
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (2, 0, 1) ORDER BY id ASC LIMIT 4"
        )
        .await,
        vec![0, 1, 2, 3]
    );
    assert_eq!(
        ids(
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0, 1) AND id > 5 ORDER BY id ASC"
        )
        .await,
        vec![6, 7, 9, 10, 12, 13]
    );
    assert_eq!(
        ids(
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0, 1, 2) ORDER BY id ASC \
             PER PARTITION LIMIT 1"
        )
        .await,
        vec![0, 1, 2]
    );
    let mut paged = scylla::statement::Statement::new(
        "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0, 1, 2) ORDER BY id DESC",
    );
    paged.set_page_size(4);
    let error = session
        .query_single_page(paged, &[], scylla::response::PagingState::start())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "Cannot page queries with both ORDER BY and a IN restriction on the partition key"
        ),
        "{error}"
    );
    // Refused with paging on however few rows there are and whatever the LIMIT (Cassandra
    // 4.1 decides before reading, and leaves the user's limit out of a post-ordered query),
    // and for an IN of one value too; an `=` pages.
    for (cql, refused) in [
        (
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0, 1) ORDER BY id DESC",
            true,
        ),
        (
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0, 1, 2) ORDER BY id DESC LIMIT 4",
            true,
        ),
        (
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket IN (0) ORDER BY id DESC",
            true,
        ),
        (
            "SELECT id FROM ks.m WHERE channel = 1 AND bucket = 0 ORDER BY id DESC",
            false,
        ),
    ] {
        let mut paged = scylla::statement::Statement::new(cql);
        paged.set_page_size(4);
        let answer = session
            .query_single_page(paged, &[], scylla::response::PagingState::start())
            .await;
        assert_eq!(answer.is_err(), refused, "{cql}");
    }
    // ORDER BY on a later clustering column once the earlier ones are fixed by `=`; all
    // columns one way; Cassandra's refusals of the rest.
    session
        .query_unpaged(
            "CREATE TABLE ks.o (k int, a int, b int, v int, PRIMARY KEY (k, a, b))",
            &[],
        )
        .await
        .unwrap();
    for (a, b) in [(1, 1), (1, 2), (2, 1)] {
        session
            .query_unpaged("INSERT INTO ks.o (k, a, b, v) VALUES (1, ?, ?, 0)", (a, b))
            .await
            .unwrap();
    }
    let pairs = async |cql: &str| query::<(i32, i32)>(&session, cql).await;
    assert_eq!(
        pairs("SELECT a, b FROM ks.o WHERE k = 1 AND a = 1 ORDER BY b DESC").await,
        vec![(1, 2), (1, 1)]
    );
    assert_eq!(
        pairs("SELECT a, b FROM ks.o WHERE k = 1 ORDER BY a DESC, b DESC").await,
        vec![(2, 1), (1, 2), (1, 1)]
    );
    for (cql, message) in [
        (
            "SELECT a FROM ks.o WHERE k = 1 ORDER BY v",
            "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got v",
        ),
        (
            "SELECT a FROM ks.o WHERE k = 1 ORDER BY b",
            "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY",
        ),
        (
            "SELECT a FROM ks.o WHERE k = 1 ORDER BY b DESC, a DESC",
            "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY",
        ),
        (
            "SELECT a FROM ks.o WHERE k = 1 ORDER BY a DESC, b ASC",
            "Unsupported order by relation",
        ),
        (
            "SELECT a FROM ks.o WHERE k = 1 ORDER BY nope",
            "Undefined column name nope",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(message), "{cql}: {error}");
    }
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_numbers_casts_and_refusals() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    let run = async |cql: &str| {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    };
    run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        .await;
    run(
        "CREATE TABLE ks.n (k int, c int, v int, d double, dec decimal, vi varint, l list<int>, \
         du duration, PRIMARY KEY (k, c))",
    )
    .await;
    for (c, dec, vi) in [
        (0, "0.5", "100000000000000000000"),
        (1, "1.25", "-3"),
        (2, "2", "7"),
    ] {
        run(&format!(
            "INSERT INTO ks.n (k, c, v, d, dec, vi) VALUES (1, {c}, {c}, {c}.75, {dec}, {vi})"
        ))
        .await;
    }
    let json = async |cql: &str| -> String { query::<(String,)>(&session, cql).await.remove(0).0 };
    // sum and avg of decimal (exact, avg at the sum's scale, half even) and varint (truncated).
    assert_eq!(
        json("SELECT JSON sum(dec), avg(dec), sum(vi), avg(vi) FROM ks.n WHERE k = 1").await,
        "{\"system.sum(dec)\": 3.75, \"system.avg(dec)\": 1.25, \
         \"system.sum(vi)\": 100000000000000000004, \"system.avg(vi)\": 33333333333333333334}"
    );
    // Exact numbers stay exact in JSON, both ways.
    run(
        "INSERT INTO ks.n JSON '{\"k\": 2, \"c\": 0, \"vi\": 123456789012345678901234567890, \
         \"dec\": 0.100000000000000000000000000001}'",
    )
    .await;
    assert_eq!(
        json("SELECT JSON vi, dec FROM ks.n WHERE k = 2 AND c = 0").await,
        "{\"vi\": 123456789012345678901234567890, \"dec\": 0.100000000000000000000000000001}"
    );
    // fromJson() as a value, plain and bound.
    run("INSERT INTO ks.n (k, c, l) VALUES (3, 0, fromJson('[1, 2]'))").await;
    let bound = session
        .prepare("INSERT INTO ks.n (k, c, l) VALUES (3, 1, fromJson(?))")
        .await
        .unwrap();
    session.execute_unpaged(&bound, ("[3]",)).await.unwrap();
    assert_eq!(
        query::<(Vec<i32>,)>(&session, "SELECT l FROM ks.n WHERE k = 3")
            .await
            .into_iter()
            .map(|r| r.0)
            .collect::<Vec<_>>(),
        vec![vec![1, 2], vec![3]]
    );
    // CAST between every numeric type.
    assert_eq!(
        json(
            "SELECT JSON CAST(v AS varint), CAST(v AS decimal), CAST(d AS decimal), \
             CAST(d AS varint), CAST(dec AS double), CAST(dec AS int), CAST(vi AS bigint), \
             CAST(vi AS text) FROM ks.n WHERE k = 1 AND c = 1"
        )
        .await,
        "{\"cast(v as varint)\": 1, \"cast(v as decimal)\": 1, \"cast(d as decimal)\": 1.75, \
         \"cast(d as varint)\": 1, \"cast(dec as double)\": 1.25, \"cast(dec as int)\": 1, \
         \"cast(vi as bigint)\": -3, \"cast(vi as text)\": \"-3\"}"
    );
    // Cassandra's refusals.
    for (cql, message) in [
        (
            "SELECT * FROM ks.n WHERE k = 1 AND c IS NOT NULL",
            "Unsupported restriction: c IS NOT NULL",
        ),
        (
            "SELECT * FROM ks.n WHERE k = 1 AND c = 1 AND c = 2",
            "c cannot be restricted by more than one relation if it includes an Equal",
        ),
        (
            "SELECT * FROM ks.n WHERE k = 1 AND c IN (1, 2) AND c = 2",
            "c cannot be restricted by more than one relation if it includes a IN",
        ),
        (
            "SELECT * FROM ks.n WHERE k = 1 AND c > 0 AND c >= 1",
            "More than one restriction was found for the start bound on c",
        ),
        (
            "SELECT ttl(c) FROM ks.n WHERE k = 3",
            "Cannot use selection function ttl on PRIMARY KEY part c",
        ),
        (
            "SELECT * FROM ks.n WHERE du > 1h ALLOW FILTERING",
            "Slice restrictions are not supported on duration columns",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(message), "{cql}: {error}");
    }
    assert_eq!(
        query::<(i32, i32)>(
            &session,
            "SELECT c, v FROM ks.n WHERE k = 1 AND c > 0 AND c < 2"
        )
        .await,
        vec![(1, 1)]
    );
    drop(session);
    node.stop().await;
}

/// Multi-column `IN` (literal and bound), bound multi-column slices, map element filters,
/// `maxTimeuuid(?)` bounds, and GROUP BY leaving out key columns fixed by `=`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tuples_map_elements_and_bound_functions() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    let run = async |cql: &str| {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    };
    run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        .await;
    run("CREATE TABLE ks.mc (k int, a int, b int, m map<text, int>, PRIMARY KEY (k, a, b))").await;
    run("CREATE TABLE ks.tl (k int, t timeuuid, v int, PRIMARY KEY (k, t))").await;
    for a in 0..3 {
        for b in 0..3 {
            run(&format!(
                "INSERT INTO ks.mc (k, a, b, m) VALUES (1, {a}, {b}, {{'x': {b}}})"
            ))
            .await;
        }
    }
    let pairs = async |cql: &str| -> Vec<(i32, i32)> { query::<(i32, i32)>(&session, cql).await };
    assert_eq!(
        pairs("SELECT a, b FROM ks.mc WHERE k = 1 AND (a, b) IN ((2, 2), (0, 1), (5, 5))").await,
        vec![(0, 1), (2, 2)]
    );
    assert_eq!(
        pairs("SELECT a, b FROM ks.mc WHERE k = 1 AND (a, b) IN ((0, 1), (2, 2)) ORDER BY a DESC")
            .await,
        vec![(2, 2), (0, 1)]
    );
    assert_eq!(
        pairs("SELECT a, b FROM ks.mc WHERE k = 1 AND m['x'] = 2 ALLOW FILTERING").await,
        vec![(0, 2), (1, 2), (2, 2)]
    );
    // Cassandra 4.1's SingleColumnRelation.toReceivers.
    run("CREATE TABLE ks.me (k int PRIMARY KEY, fm frozen<map<text, int>>, l list<int>, s set<text>, v int)")
        .await;
    for (cql, expected) in [
        (
            "SELECT * FROM ks.mc WHERE k = 1 AND m['x'] >= 2 ALLOW FILTERING",
            "Only EQ relations are supported on map entries",
        ),
        (
            "SELECT * FROM ks.me WHERE fm['a'] = 1 ALLOW FILTERING",
            "Map-entry equality predicates on frozen map column fm are not supported",
        ),
        (
            "SELECT * FROM ks.me WHERE l[0] = 7 ALLOW FILTERING",
            "Indexes on list entries (l[index] = value) are not currently supported.",
        ),
        (
            "SELECT * FROM ks.me WHERE v['a'] = 7 ALLOW FILTERING",
            "Column v cannot be used as a map",
        ),
        (
            "SELECT * FROM ks.me WHERE s CONTAINS KEY 'y' ALLOW FILTERING",
            "Cannot use CONTAINS KEY on non-map column s",
        ),
        (
            "SELECT * FROM ks.me WHERE v CONTAINS 1 ALLOW FILTERING",
            "Cannot use CONTAINS on non-collection column v",
        ),
    ] {
        let error = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{cql}: {error}");
    }
    let bound = async |cql: &str, values: &[(i32, i32)]| -> (Vec<String>, Vec<(i32, i32)>) {
        let prepared = session
            .prepare(cql)
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
        let names = prepared
            .get_variable_col_specs()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let rows = session
            .execute_unpaged(&prepared, (1, values.to_vec()))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows::<(i32, i32)>()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (names, rows)
    };
    assert_eq!(
        bound(
            "SELECT a, b FROM ks.mc WHERE k = ? AND (a, b) IN ?",
            &[(1, 1), (0, 2)]
        )
        .await,
        (
            vec!["k".to_string(), "in(a,b)".to_string()],
            vec![(0, 2), (1, 1)]
        )
    );
    let slice = session
        .prepare("SELECT a, b FROM ks.mc WHERE k = ? AND (a, b) > (?, ?) AND (a, b) <= ?")
        .await
        .unwrap();
    let rows: Vec<(i32, i32)> = session
        .execute_unpaged(&slice, (1, 0, 2, (1, 1)))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(i32, i32)>()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, vec![(1, 0), (1, 1)]);
    let element = session
        .prepare("SELECT a, b FROM ks.mc WHERE k = 1 AND m[?] = ? ALLOW FILTERING")
        .await
        .unwrap();
    let rows: Vec<(i32, i32)> = session
        .execute_unpaged(&element, ("x", 0))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(i32, i32)>()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, vec![(0, 0), (1, 0), (2, 0)]);
    // Rows a minute apart, read back between two bound timestamps.
    for i in 0..5i64 {
        let millis = 1_700_000_000_000 + i * 60_000;
        run(&format!(
            "INSERT INTO ks.tl (k, t, v) VALUES (1, maxTimeuuid({millis}), {i})"
        ))
        .await;
    }
    let window = session
        .prepare("SELECT v FROM ks.tl WHERE k = 1 AND t > maxTimeuuid(?) AND t < minTimeuuid(?)")
        .await
        .unwrap();
    let from = scylla::value::CqlTimestamp(1_700_000_000_000);
    let to = scylla::value::CqlTimestamp(1_700_000_000_000 + 3 * 60_000);
    let rows: Vec<i32> = session
        .execute_unpaged(&window, (from, to))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(i32,)>()
        .unwrap()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(rows, vec![1, 2]);
    assert_eq!(
        query::<(i32, i64)>(
            &session,
            "SELECT a, count(*) FROM ks.mc WHERE k = 1 GROUP BY a"
        )
        .await,
        vec![(0, 3), (1, 3), (2, 3)]
    );
    let error = session
        .query_unpaged("SELECT a, count(*) FROM ks.mc WHERE k = 1 GROUP BY b", &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("Group by currently only support groups"),
        "{error}"
    );
    drop(session);
    node.stop().await;
}

/// A partition wider than a scan's chunk (5,000 rows): DISTINCT and PER PARTITION LIMIT take
/// what they need from it and go on to the next partitions, paged and not; a full scan pages
/// through it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_past_a_partition_wider_than_a_chunk() {
    let mut node = TestNode::start().await;
    let session = node.cql_session().await;
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.w (k int, c int, s int static, PRIMARY KEY (k, c))",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.w (k, c, s) VALUES (?, ?, ?)")
        .await
        .unwrap();
    let wide = 12_000;
    let mut writes = futures::stream::iter((0..4i32).flat_map(|k| {
        let n = if k == 1 { wide } else { 3 };
        (0..n).map(move |c| (k, c))
    }))
    .map(|(k, c)| session.execute_unpaged(&insert, (k, c, k * 10)))
    .buffer_unordered(64);
    while let Some(done) = writes.next().await {
        done.unwrap();
    }
    drop(writes);
    let paged = async |cql: &str, page: i32| -> Vec<(i32, i32)> {
        let mut statement = scylla::statement::unprepared::Statement::new(cql);
        statement.set_page_size(page);
        session
            .query_iter(statement, &[])
            .await
            .unwrap()
            .rows_stream::<(i32, i32)>()
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    };
    let mut distinct: Vec<(i32, i32)> = query(&session, "SELECT DISTINCT k, s FROM ks.w").await;
    distinct.sort();
    let expected: Vec<(i32, i32)> = (0..4).map(|k| (k, k * 10)).collect();
    assert_eq!(distinct, expected);
    let mut distinct = paged("SELECT DISTINCT k, s FROM ks.w", 1).await;
    distinct.sort();
    assert_eq!(distinct, expected);
    for page in [1, 3, 5000] {
        let mut first_two = paged("SELECT k, c FROM ks.w PER PARTITION LIMIT 2", page).await;
        first_two.sort();
        let expected: Vec<(i32, i32)> = (0..4).flat_map(|k| [(k, 0), (k, 1)]).collect();
        assert_eq!(first_two, expected, "pages of {page}");
    }
    let all = paged("SELECT k, c FROM ks.w", 1000).await;
    assert_eq!(all.len(), wide as usize + 9);
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), all.len(), "no row twice");
    drop(session);
    node.stop().await;
}

/// Element and slice selection of maps and sets (Cassandra 4's `m[k]`, `m[a..b]`, nested
/// through frozen values and user type fields), with bound keys and bounds; before and after a
/// flush, as the values come from the memtable's cells or an SSTable's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn element_and_slice_selection() {
    use std::collections::{BTreeMap, BTreeSet};
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TYPE ks.u (s frozen<set<int>>, m frozen<map<text, text>>)",
        "CREATE TABLE ks.c (k int PRIMARY KEY, m map<int, int>, fm frozen<map<int, int>>, \
         s set<text>, fs frozen<set<text>>, l list<int>, v text, \
         n map<text, frozen<map<text, frozen<set<int>>>>>, x frozen<u>)",
        "INSERT INTO ks.c (k, m, fm, s, fs, l, v, n, x) VALUES (0, {0: 0, 1: 1, 2: 2, 3: 3, 4: 4}, \
         {0: 0, 1: 1, 2: 2, 3: 3, 4: 4}, {'1', '2', '3'}, {'1', '2', '3'}, [1, 2, 3], 'v', \
         {'1': {'a': {1, 2, 4}, 'b': {3}}, '2': {'a': {2, 4}}}, \
         {s: {2, 4, 6}, m: {'a': 'v1', 'd': 'v2'}})",
        "INSERT INTO ks.c (k) VALUES (1)",
    ] {
        session
            .query_unpaged(cql, &[])
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
    }
    type Map = Option<BTreeMap<i32, i32>>;
    type Set = Option<BTreeSet<String>>;
    type Ints = Option<BTreeSet<i32>>;
    let map = |pairs: &[(i32, i32)]| -> Map { Some(pairs.iter().copied().collect()) };
    let set = |items: &[&str]| -> Set { Some(items.iter().map(|s| s.to_string()).collect()) };
    for flushed in [false, true] {
        if flushed {
            node.node().replica().engine().flush_all().unwrap();
        }
        let got: Vec<(Option<i32>, Map, Map, Map, Map)> = query(
            &session,
            "SELECT m[2], m[1..3], m[..1], m[3..], m[7..8] FROM ks.c WHERE k = 0",
        )
        .await;
        assert_eq!(
            got,
            vec![(
                Some(2),
                map(&[(1, 1), (2, 2), (3, 3)]),
                map(&[(0, 0), (1, 1)]),
                map(&[(3, 3), (4, 4)]),
                None
            )],
            "flushed: {flushed}"
        );
        // A frozen collection's empty slice is an empty collection, a non-frozen one's null.
        let got: Vec<(Map, Map, Option<String>, Set, Set, Set)> = query(
            &session,
            "SELECT fm[1..2], fm[7..8], s['2'], s['2'..'3'], fs['4'..'5'], s['4'..'5'] \
             FROM ks.c WHERE k = 0",
        )
        .await;
        assert_eq!(
            got,
            vec![(
                map(&[(1, 1), (2, 2)]),
                map(&[]),
                Some("2".into()),
                set(&["2", "3"]),
                set(&[]),
                None
            )]
        );
        let got: Vec<(Ints, Option<i32>, Ints)> = query(
            &session,
            "SELECT n['1']['a'], n['1']['a'][2], n['1']['a'][2..3] FROM ks.c WHERE k = 0",
        )
        .await;
        assert_eq!(
            got,
            vec![(Some([1, 2, 4].into()), Some(2), Some([2].into()))]
        );
        let got: Vec<(Ints, Ints, Option<String>)> = query(
            &session,
            "SELECT x.s[2..5], x.s[..3], x.m['d'] FROM ks.c WHERE k = 0",
        )
        .await;
        assert_eq!(
            got,
            vec![(Some([2, 4].into()), Some([2].into()), Some("v2".into()))]
        );
        let got: Vec<(Option<i32>, Map, Map)> = query(
            &session,
            "SELECT m[0], m[0..1], fm[0..1] FROM ks.c WHERE k = 1",
        )
        .await;
        assert_eq!(got, vec![(None, None, None)]);
    }
    // Bound keys and bounds: named as Cassandra names them; an unset bound leaves its side open.
    let prepared = session
        .prepare("SELECT m[?], m[?..?], s[?..] FROM ks.c WHERE k = ?")
        .await
        .unwrap();
    let names: Vec<(String, String)> = prepared
        .get_variable_col_specs()
        .iter()
        .map(|c| (c.name().to_string(), format!("{:?}", c.typ())))
        .collect();
    assert_eq!(
        names.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["key(m)", "key(m)", "key(m)", "value(s)", "k"]
    );
    assert!(names[3].1.contains("Text"), "{names:?}");
    let rows: Vec<(Option<i32>, Map, Set)> = session
        .execute_unpaged(&prepared, (4, 1, 2, "2", 0))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows,
        vec![(Some(4), map(&[(1, 1), (2, 2)]), set(&["2", "3"]))]
    );
    let rows: Vec<(Option<i32>, Map, Set)> = session
        .execute_unpaged(
            &prepared,
            (4, scylla::value::MaybeUnset::<i32>::Unset, 1, "3", 0),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, vec![(Some(4), map(&[(0, 0), (1, 1)]), set(&["3"]))]);
    // Refusals, in Cassandra's words.
    for (cql, message) in [
        (
            "SELECT l[0] FROM ks.c",
            "Element selection is only allowed on sets and maps, but l is a list",
        ),
        (
            "SELECT l[1..2] FROM ks.c",
            "Slice selection is only allowed on sets and maps, but l is a list",
        ),
        (
            "SELECT v[1..2] FROM ks.c",
            "Invalid slice selection: v of type text is not a collection",
        ),
    ] {
        let err = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(message), "{cql}: {err}");
    }
    drop(session);
    node.stop().await;
}

/// Pages that end exactly where a partition of an `IN` ends resume at the next partition (they
/// restarted the first one, forever), and every row of a scan carries its partition's static
/// values, on whichever page it comes (they were null after a page break inside the
/// partition); before and after a flush.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_end_at_partition_boundaries_and_keep_static_values() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.p (k int, c int, s int STATIC, PRIMARY KEY (k, c))",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for k in 0..3 {
        session
            .query_unpaged("INSERT INTO ks.p (k, s) VALUES (?, ?)", (k, 100 + k))
            .await
            .unwrap();
        for c in 0..3 {
            session
                .query_unpaged("INSERT INTO ks.p (k, c) VALUES (?, ?)", (k, c))
                .await
                .unwrap();
        }
    }
    // A partition with only its static row is one row.
    session
        .query_unpaged("INSERT INTO ks.p (k, s) VALUES (7, 107)", &[])
        .await
        .unwrap();
    type Row = (i32, Option<i32>, Option<i32>);
    let paged = async |cql: &str, page: i32| -> Vec<Row> {
        let mut statement = scylla::statement::unprepared::Statement::new(cql);
        statement.set_page_size(page);
        let mut rows: Vec<Row> = session
            .query_iter(statement, &[])
            .await
            .unwrap()
            .rows_stream::<Row>()
            .unwrap()
            .take(100)
            .try_collect()
            .await
            .unwrap();
        rows.sort();
        rows
    };
    let mut all: Vec<Row> = (0..3)
        .flat_map(|k| (0..3).map(move |c| (k, Some(c), Some(100 + k))))
        .collect();
    let in_rows = all.clone();
    let in_corners: Vec<Row> = in_rows
        .iter()
        .filter(|r| r.0 < 2 && r.1 != Some(1))
        .copied()
        .collect();
    all.push((7, None, Some(107)));
    for flushed in [false, true] {
        if flushed {
            node.node().replica().engine().flush_all().unwrap();
        }
        for page in 1..=10 {
            assert_eq!(
                paged("SELECT k, c, s FROM ks.p WHERE k IN (0, 1, 2)", page).await,
                in_rows,
                "IN, pages of {page}, flushed: {flushed}"
            );
            assert_eq!(
                paged(
                    "SELECT k, c, s FROM ks.p WHERE k IN (0, 1) AND c IN (0, 2)",
                    page
                )
                .await,
                in_corners,
                "IN x IN, pages of {page}, flushed: {flushed}"
            );
            assert_eq!(
                paged("SELECT k, c, s FROM ks.p", page).await,
                all,
                "scan, pages of {page}, flushed: {flushed}"
            );
        }
    }
    drop(session);
    node.stop().await;
}

/// SELECTs Cassandra refuses, in its words: `token()` of anything but the whole partition key
/// in order (these gave wrong answers), PER PARTITION LIMIT below one, with DISTINCT or with
/// aggregates over everything, DISTINCT with a clustering or regular restriction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_limit_and_distinct_refusals() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (a int, b text, c int, v int, s int STATIC, PRIMARY KEY ((a, b), c))",
        "INSERT INTO ks.t (a, b, c, v, s) VALUES (1, 'x', 1, 1, 1)",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for (cql, message) in [
        (
            "SELECT * FROM ks.t WHERE token(a) > 0",
            "The token() function must be applied to all partition key components or none of them",
        ),
        (
            "SELECT * FROM ks.t WHERE token(b, a) > 0",
            "The token function arguments must be in the partition key order: a, b",
        ),
        (
            "SELECT * FROM ks.t WHERE token(a, a, b) > 0",
            "The token() function contains duplicate partition key components",
        ),
        (
            "SELECT * FROM ks.t WHERE token(a, b, c) > 0",
            "The token() function must contains only partition key components",
        ),
        (
            "SELECT * FROM ks.t PER PARTITION LIMIT 0",
            "LIMIT must be strictly positive",
        ),
        (
            "SELECT DISTINCT a, b FROM ks.t PER PARTITION LIMIT 3",
            "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
        ),
        (
            "SELECT count(*) FROM ks.t PER PARTITION LIMIT 3",
            "PER PARTITION LIMIT is not allowed with aggregate queries.",
        ),
        (
            "SELECT DISTINCT a, b FROM ks.t WHERE c = 1 ALLOW FILTERING",
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ),
        (
            "SELECT DISTINCT a, b FROM ks.t WHERE v = 1 ALLOW FILTERING",
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ),
        // Cassandra's validateDistinctSelection: the columns every selector reads.
        (
            "SELECT DISTINCT s FROM ks.t",
            "SELECT DISTINCT queries must request all the partition key columns (missing a)",
        ),
        (
            "SELECT DISTINCT a, s FROM ks.t",
            "SELECT DISTINCT queries must request all the partition key columns (missing b)",
        ),
        (
            "SELECT DISTINCT a, b, max(v) FROM ks.t",
            "SELECT DISTINCT queries must only request partition key columns and/or static columns (not v)",
        ),
        (
            "SELECT DISTINCT a, b, writetime(v) FROM ks.t",
            "SELECT DISTINCT queries must only request partition key columns and/or static columns (not v)",
        ),
    ] {
        let err = session
            .query_unpaged(cql, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(message), "{cql}: {err}");
    }
    // What they may do: functions, casts and WRITETIME of key and static columns; a
    // statics-only DISTINCT of named partitions.
    let statics: Vec<(i32, String, Option<String>, Option<i64>)> = query(
        &session,
        "SELECT DISTINCT a, b, CAST(s AS text), writetime(s) FROM ks.t",
    )
    .await;
    assert_eq!(statics.len(), 1);
    let named: Vec<(Option<i32>,)> = query(
        &session,
        "SELECT DISTINCT s FROM ks.t WHERE a = 1 AND b = 'x'",
    )
    .await;
    assert!(named.len() <= 1);
    let count: Vec<(i64,)> = query(
        &session,
        "SELECT count(*) FROM ks.t WHERE token(a, b) >= -9223372036854775807",
    )
    .await;
    assert_eq!(count, vec![(1,)]);
    let grouped: Vec<(i32, String, i64)> = query(
        &session,
        "SELECT a, b, count(*) FROM ks.t GROUP BY a, b PER PARTITION LIMIT 3",
    )
    .await;
    assert_eq!(grouped, vec![(1, "x".to_string(), 1)]);
    let distinct: Vec<(i32, String)> = query(
        &session,
        "SELECT DISTINCT a, b FROM ks.t WHERE s = 1 ALLOW FILTERING",
    )
    .await;
    assert_eq!(distinct, vec![(1, "x".to_string())]);
    drop(session);
    node.stop().await;
}

/// The partitions of an `IN` come back in the order of their key values (Cassandra sorts the
/// keys by the partition key's type), not as written nor by token; LIMIT keeps the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_partitions_in_key_order() {
    let mut node = TestNode::start().await;
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .unwrap();
    for cql in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int, c int, v int, PRIMARY KEY (k, c))",
        "CREATE TABLE ks.two (a text, b int, v int, PRIMARY KEY ((a, b)))",
    ] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
    for k in [1, -5, 3, 40, -100] {
        session
            .query_unpaged(
                format!("INSERT INTO ks.t (k, c, v) VALUES ({k}, 1, {k})"),
                &[],
            )
            .await
            .unwrap();
    }
    for (a, b) in [("b", 2), ("a", 10), ("b", -1), ("a", 2)] {
        session
            .query_unpaged(
                format!("INSERT INTO ks.two (a, b, v) VALUES ('{a}', {b}, 0)"),
                &[],
            )
            .await
            .unwrap();
    }
    let ks: Vec<(i32,)> = query(
        &session,
        "SELECT k FROM ks.t WHERE k IN (3, 40, 1, -5, -100, 3)",
    )
    .await;
    assert_eq!(ks, vec![(-100,), (-5,), (1,), (3,), (40,)]);
    let first: Vec<(i32,)> =
        query(&session, "SELECT k FROM ks.t WHERE k IN (3, 1, -5) LIMIT 1").await;
    assert_eq!(first, vec![(-5,)]);
    let pairs: Vec<(String, i32)> = query(
        &session,
        "SELECT a, b FROM ks.two WHERE a IN ('b', 'a') AND b IN (10, -1, 2)",
    )
    .await;
    assert_eq!(
        pairs,
        vec![
            ("a".to_string(), 2),
            ("a".to_string(), 10),
            ("b".to_string(), -1),
            ("b".to_string(), 2)
        ]
    );
    drop(session);
    node.stop().await;
}
