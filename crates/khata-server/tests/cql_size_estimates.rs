//! `system.size_estimates` and `system.table_estimates`, which Spark's Cassandra connector and
//! other tools read to split their scans: rows per table and token range, recorded when the
//! node starts and every `size_estimates_recording_interval`, through the `scylla` driver.

mod support;

use std::time::Duration;

use scylla::client::session::Session;
use support::TestNode;

/// `(range_start, range_end, partitions_count, mean_partition_size)` of a table's rows.
async fn estimates(session: &Session, table: &str) -> Vec<(String, String, i64, i64)> {
    session
        .query_unpaged(
            "SELECT range_start, range_end, partitions_count, mean_partition_size \
             FROM system.size_estimates WHERE keyspace_name = 'ks' AND table_name = ?",
            (table,),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(String, String, i64, i64)>()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn estimates_cover_the_ring_and_follow_the_data() {
    let mut node = TestNode::start_with(|c| {
        c.size_estimates_recording_interval = Duration::from_millis(200);
    })
    .await;
    let session = node.cql_session().await;
    for ddl in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int PRIMARY KEY, v text)",
        "CREATE TABLE ks.empty (k int PRIMARY KEY)",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    for k in 0..2000 {
        session
            .execute_unpaged(&insert, (k, "x".repeat(100)))
            .await
            .unwrap();
    }
    // Wait for a recording that saw the writes.
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = estimates(&session, "t").await;
        if rows.iter().map(|r| r.2).sum::<i64>() >= 1900 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let total: i64 = rows.iter().map(|r| r.2).sum();
    assert!(
        (1900..=2100).contains(&total),
        "{total} partitions in {rows:?}"
    );
    assert!(rows.iter().all(|r| r.3 > 0), "{rows:?}");
    // The ranges are the node's tokens' primary ranges, and together the whole ring: the
    // wrapping range split at the minimum token.
    let tokens: Vec<String> = session
        .query_unpaged("SELECT tokens FROM system.local", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(Vec<String>,)>()
        .unwrap()
        .0;
    let min = i64::MIN.to_string();
    assert_eq!(rows.len(), tokens.len() + 1);
    let mut ends: Vec<i64> = rows.iter().map(|r| r.1.parse().unwrap()).collect();
    ends.sort();
    let mut expected: Vec<i64> = tokens.iter().map(|t| t.parse().unwrap()).collect();
    expected.push(i64::MIN);
    expected.sort();
    assert_eq!(ends, expected);
    assert_eq!(rows.iter().filter(|r| r.0 == min).count(), 1);

    // An empty table has rows of zeros; Cassandra 4's table_estimates has both range types.
    assert!(
        estimates(&session, "empty")
            .await
            .iter()
            .all(|r| r.2 == 0 && r.3 == 0)
    );
    let types: Vec<(String,)> = session
        .query_unpaged(
            "SELECT DISTINCT keyspace_name FROM system.table_estimates",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(String,)>()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(types, vec![("ks".to_string(),)]);
    let local_primary = session
        .query_unpaged(
            "SELECT partitions_count FROM system.table_estimates WHERE keyspace_name = 'ks' \
             AND table_name = 't' AND range_type = 'local_primary'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows_num();
    assert_eq!(local_primary, tokens.len() + 1);

    // A dropped keyspace loses its rows at the next recording.
    session
        .query_unpaged("DROP KEYSPACE ks", &[])
        .await
        .unwrap();
    let mut left = usize::MAX;
    for _ in 0..100 {
        left = estimates(&session, "t").await.len();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 0);
    drop(session);
    node.stop().await;
}
