//! The virtual keyspaces of Cassandra 4 through the `scylla` driver: `system_virtual_schema`
//! describes `system_views`, whose tables show the node's settings (secrets hidden), its
//! connected clients (this driver's own connections among them), its block cache and the
//! disk used by each table and each table's read, write and scan latencies (the engine's and
//! the coordinator's); they page
//! like any table, cannot be written, truncated or altered, and `DESCRIBE` shows them as
//! virtual.

mod support;

use std::collections::BTreeMap;
use std::net::IpAddr;

use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::statement::unprepared::Statement;
use support::TestNode;

/// Every row of `query`, fetched in pages of `page_size`.
async fn rows<T>(session: &Session, query: &str, page_size: i32) -> Vec<T>
where
    T: for<'frame, 'metadata> scylla::deserialize::row::DeserializeRow<'frame, 'metadata>
        + Send
        + 'static,
{
    let mut statement = Statement::new(query);
    statement.set_page_size(page_size);
    session
        .query_iter(statement, &[])
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows_stream::<T>()
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

async fn error_of(session: &Session, query: &str) -> String {
    session
        .query_unpaged(query, &[])
        .await
        .map(|_| ())
        .expect_err(query)
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn virtual_tables_show_the_node() {
    let mut node = TestNode::start_with(|c| {
        c.cluster_name = "Virtual Cluster".into();
        c.dynamo_access_keys = BTreeMap::from([("AKIDVIRTUAL".into(), "s3cr3t-value".into())]);
    })
    .await;
    let session = node.cql_session().await;

    // system_virtual_schema describes both keyspaces, as the Python driver reads them.
    let keyspaces: Vec<(String,)> = rows(
        &session,
        "SELECT keyspace_name FROM system_virtual_schema.keyspaces",
        100,
    )
    .await;
    let mut keyspaces: Vec<String> = keyspaces.into_iter().map(|(k,)| k).collect();
    keyspaces.sort();
    assert_eq!(keyspaces, ["system_views", "system_virtual_schema"]);
    let tables: Vec<(String, String, Option<String>)> = rows(
        &session,
        "SELECT keyspace_name, table_name, comment FROM system_virtual_schema.tables \
         WHERE keyspace_name = 'system_views'",
        100,
    )
    .await;
    let names: Vec<&str> = tables.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(
        names,
        [
            "caches",
            "clients",
            "coordinator_read_latency",
            "coordinator_scan_latency",
            "coordinator_write_latency",
            "disk_usage",
            "local_read_latency",
            "local_scan_latency",
            "local_write_latency",
            "rows_per_read",
            "settings",
            "sstable_tasks",
            "thread_pools",
            "tombstones_per_read"
        ]
    );
    assert_eq!(tables[10].2.as_deref(), Some("current settings"));
    assert_eq!(tables[6].2.as_deref(), Some("Local read latency"));
    assert_eq!(tables[2].2.as_deref(), Some("Coordinator read latency"));
    let columns: Vec<(String, String, String, i32, String)> = rows(
        &session,
        "SELECT column_name, kind, clustering_order, position, type \
         FROM system_virtual_schema.columns \
         WHERE keyspace_name = 'system_views' AND table_name = 'clients'",
        100,
    )
    .await;
    let find = |name: &str| columns.iter().find(|c| c.0 == name).unwrap().clone();
    assert_eq!(
        find("address"),
        (
            "address".into(),
            "partition_key".into(),
            "none".into(),
            0,
            "inet".into()
        )
    );
    assert_eq!(
        find("port"),
        (
            "port".into(),
            "clustering".into(),
            "asc".into(),
            0,
            "int".into()
        )
    );
    assert_eq!(find("request_count").1, "regular");
    assert_eq!(find("request_count").3, -1);

    // Settings: every key once, in pages of 7; the secret key is not shown.
    let settings: Vec<(String, Option<String>)> =
        rows(&session, "SELECT name, value FROM system_views.settings", 7).await;
    let map: BTreeMap<String, Option<String>> = settings.iter().cloned().collect();
    assert_eq!(map.len(), settings.len(), "a setting returned twice");
    assert!(settings.len() > 20, "{settings:?}");
    assert_eq!(map["cluster_name"].as_deref(), Some("Virtual Cluster"));
    assert_eq!(map["dynamo_access_keys"].as_deref(), Some("AKIDVIRTUAL"));
    assert!(
        !settings
            .iter()
            .any(|(_, v)| v.as_deref().unwrap_or("").contains("s3cr3t")),
        "a secret key is shown"
    );
    let one: Vec<(Option<String>,)> = rows(
        &session,
        "SELECT value FROM system_views.settings WHERE name = 'cluster_name'",
        100,
    )
    .await;
    assert_eq!(one, [(Some("Virtual Cluster".to_string()),)]);

    // Clients: this driver's connections, with what STARTUP said.
    let clients: Vec<(IpAddr, i32, String, Option<String>, i32, i64)> = rows(
        &session,
        "SELECT address, port, connection_stage, driver_name, protocol_version, request_count \
         FROM system_views.clients",
        100,
    )
    .await;
    assert!(!clients.is_empty());
    for c in &clients {
        assert!(c.0.is_loopback(), "{c:?}");
        assert!(c.1 > 0, "{c:?}");
        assert_eq!(c.2, "ready");
        assert!(
            c.3.as_deref()
                .unwrap_or("")
                .to_lowercase()
                .contains("scylla"),
            "{c:?}"
        );
        assert_eq!(c.4, 4);
    }
    assert!(clients.iter().any(|c| c.5 > 1), "{clients:?}");

    // The block cache, and the disk each table uses (system.local is flushed at start-up).
    let caches: Vec<(String, i64, i64)> = rows(
        &session,
        "SELECT name, capacity_bytes, request_count FROM system_views.caches",
        100,
    )
    .await;
    assert_eq!(caches.len(), 1);
    assert_eq!(caches[0].0, "chunks");
    assert!(caches[0].1 > 0);
    let mut local_mib = 0;
    for _ in 0..100 {
        let usage: Vec<(String, String, i64)> = rows(
            &session,
            "SELECT keyspace_name, table_name, mebibytes FROM system_views.disk_usage \
             WHERE keyspace_name = 'system'",
            100,
        )
        .await;
        assert!(usage.iter().any(|u| u.1 == "peers"), "{usage:?}");
        local_mib = usage.iter().find(|u| u.1 == "local").map_or(0, |u| u.2);
        if local_mib > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        local_mib, 1,
        "system.local's SSTable, rounded up to a mebibyte"
    );

    // Read-only, and not part of the stored schema.
    for (query, message) in [
        (
            "INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')",
            "Modification is not supported by table system_views.settings",
        ),
        (
            "DELETE FROM system_views.settings WHERE name = 'a'",
            "Modification is not supported by table system_views.settings",
        ),
        (
            "UPDATE system_views.settings SET value = 'x' WHERE name = 'a' IF EXISTS",
            "not supported by table system_views.settings",
        ),
        ("TRUNCATE system_views.settings", "system_views"),
        (
            "CREATE TABLE system_views.mine (k int PRIMARY KEY)",
            "system_views keyspace is not user-modifiable",
        ),
        (
            "DROP KEYSPACE system_virtual_schema",
            "system_virtual_schema keyspace is not user-modifiable",
        ),
    ] {
        let e = error_of(&session, query).await;
        assert!(e.contains(message), "{query}: {e}");
    }
    let stored: Vec<(String,)> = rows(
        &session,
        "SELECT keyspace_name FROM system_schema.keyspaces",
        100,
    )
    .await;
    assert!(
        !stored.iter().any(|(k,)| k.starts_with("system_v")),
        "{stored:?}"
    );

    // DESCRIBE lists them and shows them as virtual.
    let listed: Vec<(String, String, String)> = rows(&session, "DESCRIBE KEYSPACES", 100).await;
    assert!(listed.iter().any(|k| k.0 == "system_views"), "{listed:?}");
    let described: Vec<(String, String, String, String)> =
        rows(&session, "DESCRIBE TABLE system_views.settings", 100).await;
    let text = &described[0].3;
    assert!(
        text.starts_with(
            "/*\nWarning: Table system_views.settings is a virtual table and cannot be \
             recreated with CQL.\nStructure, for reference:\nVIRTUAL TABLE system_views.settings ("
        ),
        "{text}"
    );
    assert!(
        text.ends_with(") WITH comment = 'current settings';\n*/"),
        "{text}"
    );

    // The connection survives it all.
    let still: Vec<(String,)> = rows(
        &session,
        "SELECT keyspace_name FROM system_virtual_schema.keyspaces",
        1,
    )
    .await;
    assert_eq!(still.len(), 2);
    node.stop().await;
}

/// `(count, max_ms, p50th_ms, p99th_ms, per_second)` of `ks.t` in latency table `table`.
async fn latency_of(session: &Session, table: &str) -> (i64, f64, f64, f64, f64) {
    let found: Vec<(i64, f64, f64, f64, f64)> = rows(
        session,
        &format!(
            "SELECT count, max_ms, p50th_ms, p99th_ms, per_second FROM system_views.{table} \
             WHERE keyspace_name = 'ks' AND table_name = 't'"
        ),
        100,
    )
    .await;
    assert_eq!(found.len(), 1, "{table}: {found:?}");
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_tables_count_each_tables_reads_writes_and_scans() {
    let mut node = TestNode::start().await;
    let session = node.cql_session().await;
    for ddl in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int PRIMARY KEY, v text)",
        "CREATE TABLE ks.quiet (k int PRIMARY KEY)",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    for k in 0..120 {
        session
            .execute_unpaged(&insert, (k, format!("value {k}")))
            .await
            .unwrap();
    }
    let select = session
        .prepare("SELECT v FROM ks.t WHERE k = ?")
        .await
        .unwrap();
    for k in 0..44 {
        session.execute_unpaged(&select, (k,)).await.unwrap();
    }
    // One read meets a tombstone.
    session
        .query_unpaged("DELETE FROM ks.t WHERE k = 500", &[])
        .await
        .unwrap();
    session.execute_unpaged(&select, (500,)).await.unwrap();
    let all: Vec<(i32, String)> = rows(&session, "SELECT k, v FROM ks.t", 50).await;
    assert_eq!(all.len(), 120);

    let (writes, ..) = latency_of(&session, "local_write_latency").await;
    assert_eq!(writes, 121);
    let (reads, max, p50, p99, per_second) = latency_of(&session, "local_read_latency").await;
    assert_eq!(reads, 45);
    assert!(
        0.0 < p50 && p50 <= p99 && p99 <= max && max < 10_000.0,
        "p50 {p50} p99 {p99} max {max} (ms)"
    );
    assert!(per_second > 0.0, "{per_second}");
    // Three pages of 50 rows: three scans (or more: a page may end at a range's end).
    let (scans, ..) = latency_of(&session, "local_scan_latency").await;
    assert!(scans >= 3, "{scans}");
    // The same requests as the coordinator saw them, from receipt to answer.
    let (writes, ..) = latency_of(&session, "coordinator_write_latency").await;
    assert_eq!(writes, 121);
    // What the 45 reads met: a row each but the last, which met a tombstone.
    for (table, expected) in [
        ("rows_per_read", (45, 1.0, 1.0, 1.0)),
        ("tombstones_per_read", (45, 1.0, 0.0, 1.0)),
    ] {
        let found: Vec<(i64, f64, f64, f64)> = rows(
            &session,
            &format!(
                "SELECT count, max, p50th, p99th FROM system_views.{table} \
                 WHERE keyspace_name = 'ks' AND table_name = 't'"
            ),
            100,
        )
        .await;
        assert_eq!(found, [expected], "{table}");
    }
    let (reads, max, p50, p99, _) = latency_of(&session, "coordinator_read_latency").await;
    assert_eq!(reads, 45);
    assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
    let (pages, ..) = latency_of(&session, "coordinator_scan_latency").await;
    assert!(pages >= 3, "{pages}");
    // The node's kinds of work as Cassandra's thread pools: this very query is a CQL request
    // being answered.
    let pools: Vec<(String, i32, Option<i32>, i64, i32)> = rows(
        &session,
        "SELECT name, active_tasks, active_tasks_limit, completed_tasks, pending_tasks \
         FROM system_views.thread_pools",
        100,
    )
    .await;
    let pool = |name: &str| pools.iter().find(|p| p.0 == name).cloned().unwrap();
    let mut names: Vec<&str> = pools.iter().map(|p| p.0.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "CompactionExecutor",
            "MemtableFlushWriter",
            "Native-Transport-Requests"
        ]
    );
    assert_eq!(
        pool("CompactionExecutor").2,
        Some(2),
        "concurrent_compactors"
    );
    assert_eq!(pool("MemtableFlushWriter").2, Some(1));
    let requests = pool("Native-Transport-Requests");
    assert!(requests.1 >= 1, "this query is active: {requests:?}");
    assert!(requests.3 > 170, "the requests above: {requests:?}");
    for side in ["local", "coordinator"] {
        let quiet: Vec<(i64, f64, f64)> = rows(
            &session,
            &format!(
                "SELECT count, p99th_ms, per_second FROM system_views.{side}_read_latency \
                 WHERE keyspace_name = 'ks' AND table_name = 'quiet'"
            ),
            100,
        )
        .await;
        assert_eq!(quiet, [(0, 0.0, 0.0)], "{side}: a table never read");
    }
    node.stop().await;
}
