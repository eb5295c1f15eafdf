//! The commit log of a running node keeps only the segments its memtables need: the schema
//! tables written by DDL are flushed after each change (as Cassandra flushes its schema
//! tables), so they do not keep every segment since the `CREATE TABLE`.

mod support;

use std::path::Path;

use futures::future::try_join_all;
use support::TestNode;

/// Segments in the node's commit-log directory.
fn commitlog_segments(data_dir: &Path) -> usize {
    std::fs::read_dir(data_dir.join("commitlog"))
        .expect("commit-log directory")
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".log")
        })
        .count()
}

/// Writes the rows; returns the segments left once the flushes caught up.
async fn write_rows(node: &TestNode) -> usize {
    let session = node.cql_session().await;
    session
        .query_unpaged(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged("CREATE TABLE ks.t (k int PRIMARY KEY, v blob)", &[])
        .await
        .unwrap();
    let insert = session
        .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    // 12 MiB of distinct rows: the table's memtable is flushed every MiB, and the log moves
    // through a dozen 1 MiB segments.
    for chunk in 0..120 {
        let writes = (0..100).map(|i| {
            let k: i32 = chunk * 100 + i;
            let v = vec![(k % 251) as u8; 1024];
            let session = &session;
            let insert = &insert;
            async move { session.execute_unpaged(insert, (k, v)).await }
        });
        try_join_all(writes).await.unwrap();
    }
    // The flushes run in the background and lag behind the writes (a debug build): give
    // them time to catch up.
    let mut now = commitlog_segments(node.dir.path());
    for _ in 0..300 {
        if now <= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        now = commitlog_segments(node.dir.path());
    }
    let rows = session
        .query_unpaged("SELECT count(*) FROM ks.t", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(i64,)>()
        .unwrap()
        .0;
    assert_eq!(rows, 12_000);
    now
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_are_discarded_after_ddl() {
    let mut node = TestNode::start_with(|c| {
        c.commitlog_segment_size_bytes = 1 << 20;
        c.memtable_flush_size_bytes = 1 << 20;
    })
    .await;
    let segments = write_rows(&node).await;
    assert!(
        segments <= 4,
        "{segments} segments of 1 MiB left for memtables of at most 1 MiB"
    );
    node.stop().await;
}
