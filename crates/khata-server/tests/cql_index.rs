//! Secondary indexes through the `scylla` driver: prepared index queries paged across
//! partitions, the index kept up to date by writes, and the index surviving a restart.

mod support;

use futures::TryStreamExt;
use scylla::client::session::Session;
use support::TestNode;

async fn by_email(session: &Session, email: &str) -> Vec<(i32, i32)> {
    let mut select = session
        .prepare("SELECT team, id FROM ks.people WHERE email = ?")
        .await
        .unwrap();
    select.set_page_size(7);
    let mut rows: Vec<(i32, i32)> = session
        .execute_iter(select, (email,))
        .await
        .unwrap()
        .rows_stream::<(i32, i32)>()
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_serves_prepared_paged_queries_and_survives_a_restart() {
    let mut node = TestNode::start().await;
    let session = node.cql_session().await;
    for ddl in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.people (team int, id int, email text, PRIMARY KEY (team, id))",
        "CREATE INDEX people_by_email ON ks.people (email)",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.people (team, id, email) VALUES (?, ?, ?)")
        .await
        .unwrap();
    let mut expected = Vec::new();
    for team in 0..25 {
        for id in 0..4 {
            let email = if (team + id) % 5 == 0 {
                expected.push((team, id));
                "shared@x".to_string()
            } else {
                format!("{team}.{id}@x")
            };
            session
                .execute_unpaged(&insert, (team, id, email))
                .await
                .unwrap();
        }
    }
    assert_eq!(by_email(&session, "shared@x").await, expected);
    assert_eq!(by_email(&session, "3.1@x").await, vec![(3, 1)]);

    // A row moved to another value leaves the first one.
    session
        .execute_unpaged(&insert, (0, 0, "moved@x"))
        .await
        .unwrap();
    expected.retain(|r| *r != (0, 0));
    assert_eq!(by_email(&session, "shared@x").await, expected);
    assert_eq!(by_email(&session, "moved@x").await, vec![(0, 0)]);

    drop(session);
    let dir = node.dir.path().to_path_buf();
    node.stop().await;
    let restarted = khata_server::node::Node::start(&support::test_config(&dir))
        .await
        .unwrap();
    let session = scylla::client::session_builder::SessionBuilder::new()
        .known_node_addr(restarted.cql_address())
        .build()
        .await
        .expect("the driver connects");
    assert_eq!(by_email(&session, "shared@x").await, expected);
    assert_eq!(by_email(&session, "moved@x").await, vec![(0, 0)]);
    drop(session);
    restarted.shutdown().await;
}

/// The rows `query` returns, fetched in pages of `page_size`, sorted.
async fn sorted_rows<T>(session: &Session, query: &str, page_size: i32) -> Vec<T>
where
    T: for<'frame, 'metadata> scylla::deserialize::row::DeserializeRow<'frame, 'metadata>
        + Ord
        + Send
        + 'static,
{
    let mut statement = scylla::statement::unprepared::Statement::new(query);
    statement.set_page_size(page_size);
    let mut rows: Vec<T> = session
        .query_iter(statement, &[])
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows_stream::<T>()
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    rows.sort();
    rows
}

/// The `(a, b, c)` keys of the rows a query returns (c -1 for a static-only row), sorted.
async fn keys_of(session: &Session, query: &str) -> Vec<(i32, i32, i32)> {
    let rows = sorted_rows::<(i32, i32, Option<i32>)>(session, query, 4).await;
    let mut keys: Vec<_> = rows
        .into_iter()
        .map(|(a, b, c)| (a, b, c.unwrap_or(-1)))
        .collect();
    keys.sort();
    keys
}

/// The `(a, b, c)` keys of each page of `query` in pages of `page_size`.
async fn pages_of(session: &Session, query: &str, page_size: i32) -> Vec<Vec<(i32, i32, i32)>> {
    let mut statement = scylla::statement::unprepared::Statement::new(query);
    statement.set_page_size(page_size);
    let mut state = scylla::response::PagingState::start();
    let mut pages = Vec::new();
    loop {
        let (result, response) = session
            .query_single_page(statement.clone(), &[], state)
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let page: Vec<(i32, i32, i32)> = result
            .into_rows_result()
            .unwrap()
            .rows::<(i32, i32, Option<i32>)>()
            .unwrap()
            .map(|r| r.map(|(a, b, c)| (a, b, c.unwrap_or(-1))))
            .collect::<Result<_, _>>()
            .unwrap();
        pages.push(page);
        match response.into_paging_control_flow() {
            std::ops::ControlFlow::Continue(next) => state = next,
            std::ops::ControlFlow::Break(()) => return pages,
        }
    }
}

async fn refusal(session: &Session, statement: &str) -> String {
    session
        .query_unpaged(statement, &[])
        .await
        .err()
        .unwrap_or_else(|| panic!("{statement} was accepted"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collections_key_and_static_columns_are_indexed() {
    let mut node = TestNode::start().await;
    let session = node.cql_session().await;
    for ddl in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (a int, b int, c int, st int static, tags set<text>, l list<int>, \
         m map<text, int>, fl frozen<list<int>>, v int, PRIMARY KEY ((a, b), c))",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    // Written before the indexes: the indexes are built from them.
    for (a, b, c, st, tags, l, m) in [
        (1, 1, 10, 7, "{'x', 'y'}", "[1, 2, 2]", "{'k1': 1, 'k2': 2}"),
        (1, 1, 11, 7, "{'y'}", "[3]", "{'k1': 9}"),
        (2, 1, 10, 8, "{'z'}", "[2]", "{'k3': 1}"),
    ] {
        session
            .query_unpaged(
                format!(
                    "INSERT INTO ks.t (a, b, c, st, tags, l, m) VALUES \
                     ({a}, {b}, {c}, {st}, {tags}, {l}, {m})"
                ),
                &[],
            )
            .await
            .unwrap();
    }
    for ddl in [
        "CREATE INDEX ON ks.t (tags)",
        "CREATE INDEX ON ks.t (values(l))",
        "CREATE INDEX ON ks.t (keys(m))",
        "CREATE INDEX ON ks.t (entries(m))",
        "CREATE INDEX m_values ON ks.t (values(m))",
        "CREATE INDEX ON ks.t (c)",
        "CREATE INDEX ON ks.t (a)",
        "CREATE INDEX ON ks.t (st)",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    // Written after: indexed as they are written.
    session
        .query_unpaged(
            "INSERT INTO ks.t (a, b, c, st, tags, l, m) VALUES (3, 2, 12, 8, {'y'}, [5], {'k2': 2})",
            &[],
        )
        .await
        .unwrap();
    let select = "SELECT a, b, c FROM ks.t WHERE";
    for (restriction, expected) in [
        (
            "tags CONTAINS 'y'",
            vec![(1, 1, 10), (1, 1, 11), (3, 2, 12)],
        ),
        ("tags CONTAINS 'z'", vec![(2, 1, 10)]),
        ("l CONTAINS 2", vec![(1, 1, 10), (2, 1, 10)]),
        ("m CONTAINS KEY 'k1'", vec![(1, 1, 10), (1, 1, 11)]),
        ("m['k2'] = 2", vec![(1, 1, 10), (3, 2, 12)]),
        ("m['k1'] = 9", vec![(1, 1, 11)]),
        ("m CONTAINS 1", vec![(1, 1, 10), (2, 1, 10)]),
        ("c = 10", vec![(1, 1, 10), (2, 1, 10)]),
        ("a = 1", vec![(1, 1, 10), (1, 1, 11)]),
        ("st = 8", vec![(2, 1, 10), (3, 2, 12)]),
    ] {
        assert_eq!(
            keys_of(&session, &format!("{select} {restriction}")).await,
            expected,
            "{restriction}"
        );
    }
    // Prepared, with the element bound.
    let contains = session
        .prepare("SELECT a, b, c FROM ks.t WHERE tags CONTAINS ?")
        .await
        .unwrap();
    let found = session
        .execute_unpaged(&contains, ("z",))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(i32, i32, i32)>()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(found, vec![(2, 1, 10)]);

    // Elements removed, entries changed, rows and partitions deleted leave the index.
    for write in [
        "UPDATE ks.t SET tags = tags - {'y'} WHERE a = 1 AND b = 1 AND c = 11",
        "UPDATE ks.t SET m['k1'] = 10 WHERE a = 1 AND b = 1 AND c = 11",
        "DELETE l[0] FROM ks.t WHERE a = 2 AND b = 1 AND c = 10",
        "DELETE FROM ks.t WHERE a = 1 AND b = 1 AND c = 10",
        "DELETE FROM ks.t WHERE a = 3 AND b = 2",
    ] {
        session.query_unpaged(write, &[]).await.unwrap();
    }
    for (restriction, expected) in [
        ("tags CONTAINS 'y'", vec![]),
        ("m['k1'] = 9", vec![]),
        ("m['k1'] = 10", vec![(1, 1, 11)]),
        ("l CONTAINS 2", vec![]),
        ("c = 10", vec![(2, 1, 10)]),
        ("a = 1", vec![(1, 1, 11)]),
        ("st = 8", vec![(2, 1, 10)]),
        ("st = 7", vec![(1, 1, 11)]),
    ] {
        assert_eq!(
            keys_of(&session, &format!("{select} {restriction}")).await,
            expected,
            "after the writes: {restriction}"
        );
    }

    // A partition with static content only is a row of its own; an index on a partition key
    // column answers whole partitions, within LIMIT.
    session
        .query_unpaged("INSERT INTO ks.t (a, b, st) VALUES (1, 5, 9)", &[])
        .await
        .unwrap();
    assert_eq!(
        keys_of(&session, &format!("{select} st = 9")).await,
        vec![(1, 5, -1)]
    );
    for c in 20..26 {
        session
            .query_unpaged(
                format!("INSERT INTO ks.t (a, b, c) VALUES (1, 6, {c})"),
                &[],
            )
            .await
            .unwrap();
    }
    assert_eq!(keys_of(&session, &format!("{select} a = 1")).await.len(), 8);
    // Pages of an index that names whole partitions stop inside a partition as any page does:
    // a = 1 holds (1, 1) with 2 rows, (1, 5) with static content only and (1, 6) with 6 rows;
    // st = 11 names (3, 3), a partition of 9 rows.
    for c in 0..9 {
        session
            .query_unpaged(
                format!("INSERT INTO ks.t (a, b, c, st) VALUES (3, 3, {c}, 11)"),
                &[],
            )
            .await
            .unwrap();
    }
    for (restriction, rows) in [("a = 1", 8), ("st = 11", 9)] {
        let query = format!("{select} {restriction}");
        for page_size in [1, 2, 4, 5] {
            let pages = pages_of(&session, &query, page_size).await;
            assert!(
                pages.iter().all(|p| p.len() <= page_size as usize),
                "{restriction} in pages of {page_size}: {pages:?}"
            );
            let mut all: Vec<_> = pages.concat();
            all.sort();
            assert_eq!(all.len(), rows, "{restriction} in pages of {page_size}");
            all.dedup();
            assert_eq!(
                all.len(),
                rows,
                "{restriction} in pages of {page_size}: a row twice"
            );
            assert_eq!(all, keys_of(&session, &query).await, "{restriction}");
        }
    }
    let limited = session
        .query_unpaged(format!("{select} a = 1 LIMIT 3"), &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows_num();
    assert_eq!(limited, 3);

    // The elements of static collections: entries name partitions, as for a static column.
    for ddl in [
        "CREATE TABLE ks.s (p int, c int, ss set<text> static, sm map<text, int> static, \
         PRIMARY KEY (p, c))",
        "INSERT INTO ks.s (p, c, ss, sm) VALUES (1, 1, {'a', 'b'}, {'k': 1})",
        "INSERT INTO ks.s (p, c) VALUES (1, 2)",
        "INSERT INTO ks.s (p, c, ss, sm) VALUES (2, 1, {'b'}, {'k': 2})",
        "CREATE INDEX ON ks.s (ss)",
        "CREATE INDEX ON ks.s (keys(sm))",
        "CREATE INDEX ON ks.s (entries(sm))",
        "INSERT INTO ks.s (p, ss, sm) VALUES (3, {'c'}, {'j': 1})",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    let static_rows = async |restriction: &str| -> Vec<(i32, Option<i32>)> {
        let query = format!("SELECT p, c FROM ks.s WHERE {restriction}");
        sorted_rows(&session, &query, 1).await
    };
    for (restriction, expected) in [
        ("ss CONTAINS 'a'", vec![(1, Some(1)), (1, Some(2))]),
        (
            "ss CONTAINS 'b'",
            vec![(1, Some(1)), (1, Some(2)), (2, Some(1))],
        ),
        ("ss CONTAINS 'c'", vec![(3, None)]),
        (
            "sm CONTAINS KEY 'k'",
            vec![(1, Some(1)), (1, Some(2)), (2, Some(1))],
        ),
        ("sm['k'] = 2", vec![(2, Some(1))]),
        ("sm['j'] = 1", vec![(3, None)]),
    ] {
        assert_eq!(static_rows(restriction).await, expected, "{restriction}");
    }
    // A removed element no longer matches (its entry is found stale).
    session
        .query_unpaged("UPDATE ks.s SET ss = ss - {'a'} WHERE p = 1", &[])
        .await
        .unwrap();
    assert_eq!(static_rows("ss CONTAINS 'a'").await, vec![]);
    assert_eq!(static_rows("ss CONTAINS 'b'").await.len(), 3);

    // An index on a later clustering column serves it alone or with the partition key; a
    // clustering column after a gap without an index keeps Cassandra's refusal.
    for ddl in [
        "CREATE TABLE ks.g (p int, c1 int, c2 int, c3 int, PRIMARY KEY (p, c1, c2, c3))",
        "CREATE INDEX ON ks.g (c3)",
        "INSERT INTO ks.g (p, c1, c2, c3) VALUES (0, 1, 2, 3)",
        "INSERT INTO ks.g (p, c1, c2, c3) VALUES (1, 1, 2, 4)",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    for (restriction, expected) in [("c3 = 3", vec![0]), ("p = 1 AND c3 = 4", vec![1])] {
        let found: Vec<i32> = session
            .query_unpaged(format!("SELECT p FROM ks.g WHERE {restriction}"), &[])
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows::<(i32,)>()
            .unwrap()
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(found, expected, "{restriction}");
    }
    let gap = refusal(&session, "SELECT p FROM ks.g WHERE p = 0 AND c2 = 2").await;
    assert!(
        gap.contains("PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not restricted"),
        "{gap}"
    );

    // Other restrictions beside an index still need ALLOW FILTERING.
    assert!(
        refusal(&session, &format!("{select} tags CONTAINS 'y' AND v = 5"))
            .await
            .contains("ALLOW FILTERING")
    );

    // Cassandra's refusals.
    for (ddl, message) in [
        (
            "CREATE INDEX ON ks.t (fl)",
            "Cannot create values() index on frozen column fl. Frozen collections are immutable and must be fully indexed by using the 'full(fl)' modifier",
        ),
        (
            "CREATE INDEX ON ks.t (keys(tags))",
            "Cannot create index on keys of column tags with non-map type",
        ),
        (
            "CREATE INDEX ON ks.t (entries(l))",
            "Cannot create index on entries of column l with non-map type",
        ),
        (
            "CREATE INDEX ON ks.t (keys(v))",
            "Cannot create keys() index on v. Non-collection columns only support simple indexes",
        ),
        (
            "CREATE INDEX ON ks.t (full(tags))",
            "full() indexes can only be created on frozen collections",
        ),
        (
            "CREATE INDEX ON ks.t (values(tags))",
            "Index t_tags_idx_1 is a duplicate of existing index t_tags_idx",
        ),
    ] {
        let error = refusal(&session, ddl).await;
        assert!(error.contains(message), "{ddl}: {error}");
    }

    // What the catalog keeps, as Cassandra keeps it.
    let mut targets: Vec<(String, String)> = session
        .query_unpaged(
            "SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = 'ks' \
             AND table_name = 't'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(String, std::collections::HashMap<String, String>)>()
        .unwrap()
        .map(|r| {
            let (name, mut options) = r.unwrap();
            (name, options.remove("target").unwrap())
        })
        .collect();
    targets.sort();
    assert_eq!(
        targets,
        [
            ("m_values", "values(m)"),
            ("t_a_idx", "a"),
            ("t_c_idx", "c"),
            ("t_l_idx", "values(l)"),
            ("t_m_idx", "keys(m)"),
            ("t_m_idx_1", "entries(m)"),
            ("t_st_idx", "st"),
            ("t_tags_idx", "values(tags)"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    drop(session);
    node.stop().await;
}
