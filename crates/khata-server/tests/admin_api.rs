//! The admin HTTP API of a node started in the test: data written through the `scylla`
//! driver, then every endpoint checked (status, info, flush, compact, tablestats, errors), and
//! `/metrics` parsed as Prometheus text with the requests made counted.

mod support;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use khata_coordinator::metrics::{Op, Outcome};
use khata_server::admin::api::{
    CompactReport, CompactionStats, CompactionThroughput, FlushReport, Info, NodeState, Status,
    TableStats, TableStatsReport, TpStats, TraceProbability,
};
use khata_server::admin::client::{AdminClient, ClientError, Response};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use support::TestNode;

const TIMEOUT: Option<Duration> = Some(Duration::from_secs(60));

/// The blocking client, off the test's async threads.
struct Admin(AdminClient);

impl Admin {
    fn of(node: &TestNode) -> Admin {
        let address = node.admin_address();
        Admin(AdminClient::new(address.ip().to_string(), address.port()))
    }

    async fn get<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        path: &str,
    ) -> Result<T, ClientError> {
        let (client, path) = (self.0.clone(), path.to_owned());
        tokio::task::spawn_blocking(move || client.get_json(&path, TIMEOUT))
            .await
            .unwrap()
    }

    async fn post<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        path: &str,
    ) -> Result<T, ClientError> {
        let (client, path) = (self.0.clone(), path.to_owned());
        tokio::task::spawn_blocking(move || client.post_json(&path, TIMEOUT))
            .await
            .unwrap()
    }

    async fn raw(&self, method: &str, path: &str) -> Response {
        let (client, method, path) = (self.0.clone(), method.to_owned(), path.to_owned());
        tokio::task::spawn_blocking(move || client.request(&method, &path, TIMEOUT))
            .await
            .unwrap()
            .unwrap()
    }

    async fn table(&self, keyspace: &str, table: &str) -> TableStats {
        let report: TableStatsReport = self
            .get(&format!("/tablestats?keyspace={keyspace}&table={table}"))
            .await
            .unwrap();
        assert_eq!(report.tables.len(), 1);
        report.tables.into_iter().next().unwrap()
    }
}

async fn connect(node: &TestNode) -> Session {
    SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .build()
        .await
        .expect("driver connects")
}

/// A running compaction shows its progress in `/compactionstats` and in
/// `system_views.sstable_tasks`, and is gone from both when it has finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_compaction_shows_its_progress() {
    let mut node = TestNode::start().await;
    let admin = Admin::of(&node);
    let default: CompactionThroughput = admin.get("/compactionthroughput").await.unwrap();
    assert_eq!(default.bytes_per_second, 64 << 20);
    let session = connect(&node).await;
    let idle: CompactionStats = admin.get("/compactionstats").await.unwrap();
    assert!(idle.pending_tasks >= idle.pending.len(), "{idle:?}");
    session
        .query_unpaged(
            "CREATE KEYSPACE big WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged("CREATE TABLE big.rows (k int PRIMARY KEY, v text)", &[])
        .await
        .unwrap();
    let insert = session
        .prepare("INSERT INTO big.rows (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    for half in 0..2i32 {
        for k in half * 2000..(half + 1) * 2000 {
            session
                .execute_unpaged(&insert, (k, format!("{k:0>300}")))
                .await
                .unwrap();
        }
        let _: FlushReport = admin.post("/flush?keyspace=big").await.unwrap();
    }
    let total = admin.table("big", "rows").await.space_used_bytes;
    // Throttled (the limit counts the bytes read as they lie on disk, compressed) so that the
    // major compaction takes a few seconds.
    let rate = (total / 4) | 1; // odd: written in B/s
    let set: CompactionThroughput = admin
        .post(&format!("/compactionthroughput?bytes_per_second={rate}"))
        .await
        .unwrap();
    assert_eq!(set.bytes_per_second, rate);
    let now: CompactionThroughput = admin.get("/compactionthroughput").await.unwrap();
    assert_eq!(now.bytes_per_second, rate);
    let setting = session
        .query_unpaged(
            "SELECT value FROM system_views.settings WHERE name = 'compaction_throughput'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(String,)>()
        .unwrap();
    assert_eq!(setting.0, format!("{rate}B/s"), "the live value");
    let compaction = {
        let admin = Admin::of(&node);
        tokio::spawn(async move {
            admin
                .post::<CompactReport>("/compact?keyspace=big&table=rows")
                .await
        })
    };
    let (mut from_api, mut from_cql) = (Vec::new(), Vec::new());
    while !compaction.is_finished() {
        // The node's own tables (the schema tables after DDL) may compact meanwhile.
        let stats: CompactionStats = admin.get("/compactionstats").await.unwrap();
        assert_eq!(stats.throughput_bytes_per_second, rate);
        let ours: Vec<_> = stats
            .running
            .iter()
            .filter(|t| t.keyspace == "big")
            .collect();
        if let [task] = ours.as_slice() {
            assert_eq!(
                (
                    task.kind.as_str(),
                    task.keyspace.as_str(),
                    task.table.as_str()
                ),
                ("compaction", "big", "rows")
            );
            assert_eq!(task.unit, "bytes");
            assert!(
                task.completed <= task.total && task.total >= total / 2,
                "{task:?}"
            );
            from_api.push((task.id, task.completed));
        }
        let rows = session
            .query_unpaged(
                "SELECT keyspace_name, table_name, task_id, kind, progress, total, unit \
                 FROM system_views.sstable_tasks WHERE keyspace_name = 'big'",
                &[],
            )
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows::<(String, String, uuid::Uuid, String, i64, i64, String)>()
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        if let [(keyspace, table, id, kind, progress, total, unit)] = rows.as_slice() {
            assert_eq!(
                (
                    keyspace.as_str(),
                    table.as_str(),
                    kind.as_str(),
                    unit.as_str()
                ),
                ("big", "rows", "compaction", "bytes")
            );
            assert!(progress <= total);
            from_cql.push((*id, *progress));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let report = compaction.await.unwrap().unwrap();
    assert_eq!(report.tables[0].sstables_after, 1);
    assert!(
        from_api.len() >= 3 && from_cql.len() >= 3,
        "{from_api:?} {from_cql:?}"
    );
    assert!(
        from_api
            .iter()
            .map(|t| t.0)
            .chain(from_cql.iter().map(|t| t.0))
            .all(|id| id == from_api[0].0),
        "one compaction, one id"
    );
    assert!(from_api.last().unwrap().1 > from_api[0].1, "{from_api:?}");
    let done: CompactionStats = admin.get("/compactionstats").await.unwrap();
    assert!(
        !done.running.iter().any(|t| t.keyspace == "big"),
        "{done:?}"
    );
    let after = session
        .query_unpaged(
            "SELECT * FROM system_views.sstable_tasks WHERE keyspace_name = 'big'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    assert_eq!(after.rows_num(), 0);
    node.stop().await;
}

/// Writes made by [`write_chat`]: 5 partitions of 10 rows, then a row deleted in each.
const CHAT_WRITES: u64 = 5 * 10 + 5;

async fn write_chat(session: &Session) {
    session
        .query_unpaged(
            "CREATE KEYSPACE chat WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "CREATE TABLE chat.messages (channel int, seq int, body text, PRIMARY KEY (channel, seq))",
            &[],
        )
        .await
        .unwrap();
    let insert = session
        .prepare("INSERT INTO chat.messages (channel, seq, body) VALUES (?, ?, ?)")
        .await
        .unwrap();
    for channel in 0..5i32 {
        for seq in 0..10i32 {
            let body = "x".repeat(100 * (channel as usize + 1));
            session
                .execute_unpaged(&insert, (channel, seq, body))
                .await
                .unwrap();
        }
    }
    let delete = session
        .prepare("DELETE FROM chat.messages WHERE channel = ? AND seq = 0")
        .await
        .unwrap();
    for channel in 0..5i32 {
        session.execute_unpaged(&delete, (channel,)).await.unwrap();
    }
}

/// Reads of one partition each; every one meets the deleted row's tombstone.
async fn read_chat(session: &Session, reads: i32) {
    let select = session
        .prepare("SELECT seq FROM chat.messages WHERE channel = ?")
        .await
        .unwrap();
    for i in 0..reads {
        let rows = session
            .execute_unpaged(&select, (i % 5,))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap();
        assert_eq!(rows.rows_num(), 9);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_info_describe_the_node() {
    let mut node = TestNode::start().await;
    let admin = Admin::of(&node);
    let session = connect(&node).await;

    let status: Status = admin.get("/status").await.unwrap();
    assert_eq!(status.cluster_name, "Test Cluster");
    assert_eq!(status.nodes.len(), 1);
    let me = &status.nodes[0];
    let coordinator = node.node.as_ref().unwrap().coordinator().clone();
    assert!(me.up);
    assert_eq!(me.state, NodeState::Normal);
    assert_eq!(me.address.to_string(), "127.0.0.1");
    assert_eq!(me.host_id, coordinator.host_id());
    assert_eq!(me.data_center, "datacenter1");
    assert_eq!(me.rack, "rack1");
    assert_eq!(me.tokens, 16);
    assert_eq!(me.schema_version, coordinator.schema().version);

    let info: Info = admin.get("/info").await.unwrap();
    assert_eq!(info.host_id, coordinator.host_id());
    assert_eq!(info.release_version, "4.1.0");
    assert_eq!(info.native_transport_address, node.cql_address());
    assert!(info.cql_connections >= 1, "the driver is connected");
    assert_eq!(info.commitlog.sync, "periodic");
    assert_eq!(info.commitlog.sync_period_ms, 10_000);
    assert!(info.block_cache_capacity_bytes > 0);
    assert!(info.memtable_space_bytes > 0);
    assert!(
        info.memtable_bytes > 0,
        "system tables are written at start"
    );
    assert!(info.resident_memory_bytes.is_some_and(|b| b > 0));
    assert_eq!(info.data_dir, node.dir.path().display().to_string());
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flush_compact_and_tablestats_follow_the_data() {
    let mut node = TestNode::start().await;
    let admin = Admin::of(&node);
    let session = connect(&node).await;
    write_chat(&session).await;

    let before = admin.table("chat", "messages").await;
    assert_eq!(before.sstable_count, 0);
    assert_eq!(before.memtable_partitions, 5);
    // The engine's own latencies of the table: every mutation written, no read yet.
    assert_eq!(before.local_write.count, CHAT_WRITES);
    let write_mean = before.local_write.mean_ms.expect("writes were timed");
    assert!(
        0.0 < write_mean && write_mean <= before.local_write.max_ms,
        "{:?}",
        before.local_write
    );
    assert_eq!(before.local_read.count, 0);
    assert_eq!(before.local_read.mean_ms, None);
    assert!(before.memtable_bytes > 0);
    assert!(before.largest_partitions.is_empty());

    let flushed: FlushReport = admin.post("/flush?keyspace=chat").await.unwrap();
    assert_eq!(flushed.tables.len(), 1);
    assert_eq!(
        (
            flushed.tables[0].keyspace.as_str(),
            flushed.tables[0].table.as_str()
        ),
        ("chat", "messages")
    );
    let after = admin.table("chat", "messages").await;
    assert_eq!(after.sstable_count, 1);
    assert_eq!(after.memtable_bytes, 0);
    assert_eq!(after.partitions_estimate, 5);
    assert!(after.space_used_bytes > 0);
    assert_eq!(after.tombstones, 5, "one row deletion per partition");
    // Channel 4 has the longest bodies; its key is the int 4, big-endian.
    assert_eq!(after.largest_partitions[0].key_hex, "00000004");
    assert!(
        after
            .largest_partitions
            .windows(2)
            .all(|w| w[0].size_bytes >= w[1].size_bytes)
    );

    // A second SSTable, then a major compaction merges them.
    session
        .query_unpaged(
            "INSERT INTO chat.messages (channel, seq, body) VALUES (9, 1, 'late')",
            &[],
        )
        .await
        .unwrap();
    let _: FlushReport = admin
        .post("/flush?keyspace=chat&table=messages")
        .await
        .unwrap();
    assert_eq!(admin.table("chat", "messages").await.sstable_count, 2);
    let compacted: CompactReport = admin
        .post("/compact?keyspace=chat&table=messages")
        .await
        .unwrap();
    assert_eq!(compacted.tables.len(), 1);
    let c = &compacted.tables[0];
    assert_eq!((c.sstables_before, c.sstables_after), (2, 1));
    assert!(c.tasks >= 1 && c.bytes_read > 0 && c.bytes_written > 0);
    // The flushes and the compaction, counted as Cassandra's pools count them.
    let pools: TpStats = admin.get("/tpstats").await.unwrap();
    let pool = |name: &str| pools.pools.iter().find(|p| p.name == name).unwrap().clone();
    let flushes = pool("MemtableFlushWriter");
    assert!(flushes.completed >= 2, "{flushes:?}");
    assert_eq!(flushes.active_limit, Some(1));
    let compactions = pool("CompactionExecutor");
    assert!(compactions.completed >= 1, "{compactions:?}");
    assert_eq!(compactions.active_limit, Some(2));
    assert!(pool("Native-Transport-Requests").completed > CHAT_WRITES);
    let merged = admin.table("chat", "messages").await;
    assert_eq!(merged.sstable_count, 1);
    assert_eq!(merged.partitions_estimate, 6);

    // Reads are counted with the SSTables they read. A row rewritten whole (marker and every
    // column) in the memtable is read from there alone: its older version in the SSTable
    // cannot change it. A read of the whole partition reads the SSTable too.
    let count = |t: &TableStats| (t.partition_reads, t.sstables_read);
    let (reads, sstables) = count(&merged);
    for q in [
        "INSERT INTO chat.messages (channel, seq, body) VALUES (9, 1, 'later')",
        "SELECT body FROM chat.messages WHERE channel = 9 AND seq = 1",
    ] {
        session.query_unpaged(q, &[]).await.unwrap();
    }
    let one_row = count(&admin.table("chat", "messages").await);
    assert_eq!(
        one_row,
        (reads + 1, sstables),
        "the one-row read read no SSTable"
    );
    session
        .query_unpaged("SELECT body FROM chat.messages WHERE channel = 9", &[])
        .await
        .unwrap();
    let table = admin.table("chat", "messages").await;
    let whole = count(&table);
    assert_eq!(whole, (reads + 2, sstables + 1));
    assert_eq!(table.local_read.count, table.partition_reads);
    let l = &table.local_read;
    assert!(
        0.0 < l.p50_ms && l.p50_ms <= l.p99_ms && l.p99_ms <= l.max_ms && l.per_second > 0.0,
        "{l:?}"
    );

    // Without a scope: every table, system ones included, in keyspace order.
    let all: TableStatsReport = admin.get("/tablestats").await.unwrap();
    let names: Vec<(String, String)> = all
        .tables
        .iter()
        .map(|t| (t.keyspace.clone(), t.table.clone()))
        .collect();
    assert!(names.contains(&("chat".into(), "messages".into())));
    assert!(names.contains(&("system".into(), "local".into())));
    assert!(names.windows(2).all(|w| w[0] <= w[1]));
    let flushed_all: FlushReport = admin.post("/flush").await.unwrap();
    assert_eq!(flushed_all.tables.len(), all.tables.len());
    let keyspace: TableStatsReport = admin.get("/tablestats?keyspace=system").await.unwrap();
    assert!(keyspace.tables.iter().all(|t| t.keyspace == "system"));

    // The load is the live data on disk.
    let status: Status = admin.get("/status").await.unwrap();
    let load: u64 = all.tables.iter().map(|t| t.space_used_bytes).sum();
    assert!(status.nodes[0].load_bytes >= load && load > 0);
    drop(session);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_json_errors() {
    let mut node = TestNode::start().await;
    let admin = Admin::of(&node);

    let err = admin
        .get::<TableStatsReport>("/tablestats?keyspace=nope")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Api { status: 404, message } if message.contains("keyspace nope does not exist")),
        "{err}"
    );
    let err = admin
        .post::<FlushReport>("/flush?keyspace=system&table=nope")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Api { status: 404, message } if message.contains("system.nope")),
        "{err}"
    );
    let err = admin
        .post::<CompactReport>("/compact?table=local")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Api { status: 400, .. }),
        "{err}"
    );
    for (query, why) in [
        ("", "needs ?bytes_per_second=N"),
        ("?bytes_per_second=lots", "not `lots`"),
        ("?bytes_per_second=-1", "not `-1`"),
        (
            "?bytes_per_second=9223372036854775807",
            "to 9223372036854775806",
        ),
    ] {
        let err = admin
            .post::<CompactionThroughput>(&format!("/compactionthroughput{query}"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ClientError::Api { status: 400, message } if message.contains(why)),
            "{query}: {err}"
        );
    }
    let unchanged: CompactionThroughput = admin.get("/compactionthroughput").await.unwrap();
    assert_eq!(unchanged.bytes_per_second, 64 << 20);
    assert_eq!(admin.raw("GET", "/flush").await.status, 405);
    let unknown = admin.raw("GET", "/nodetool").await;
    assert_eq!(unknown.status, 404);
    assert!(String::from_utf8_lossy(&unknown.body).contains("/tablestats"));
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_prometheus_text_and_count_the_requests() {
    let mut node = TestNode::start().await;
    let admin = Admin::of(&node);
    let session = connect(&node).await;
    let coordinator = node.node.as_ref().unwrap().coordinator().clone();
    let writes_before = coordinator.metrics().requests(Op::Write, Outcome::Ok);
    let reads_before = coordinator.metrics().requests(Op::Read, Outcome::Ok);
    write_chat(&session).await;
    read_chat(&session, 12).await;
    let _: FlushReport = admin.post("/flush?keyspace=chat").await.unwrap();

    let response = admin.raw("GET", "/metrics").await;
    assert_eq!(response.status, 200);
    assert!(
        response
            .header("content-type")
            .is_some_and(|v| v.starts_with("text/plain; version=0.0.4")),
        "{:?}",
        response.headers
    );
    let text = String::from_utf8(response.body).unwrap();
    let metrics = parse_prometheus(&text);

    // Only this test writes: exactly its writes, all ok.
    let writes = metrics.value("khata_requests_total", &[("op", "write"), ("result", "ok")]);
    assert_eq!(writes as u64, writes_before + CHAT_WRITES, "{text}");
    assert_eq!(
        metrics.value(
            "khata_requests_total",
            &[("op", "write"), ("result", "error")]
        ),
        0.0
    );
    // The driver reads system tables too, so reads are at least the test's.
    let reads = metrics.value("khata_requests_total", &[("op", "read"), ("result", "ok")]);
    assert!(reads as u64 >= reads_before + 12, "{reads}");
    assert!(metrics.has("khata_requests_total", &[("op", "range"), ("result", "ok")]));
    let write_count = metrics.value("khata_request_latency_seconds_count", &[("op", "write")]);
    assert_eq!(write_count, writes);
    assert!(metrics.value("khata_request_latency_seconds_sum", &[("op", "write")]) > 0.0);
    assert_eq!(
        metrics.value(
            "khata_request_latency_seconds_bucket",
            &[("op", "write"), ("le", "+Inf")]
        ),
        writes
    );

    // Each of the 12 reads met its partition's row tombstone.
    assert!(metrics.value("khata_tombstones_scanned_total", &[]) >= 12.0);
    assert!(metrics.value("khata_cql_connections", &[]) >= 1.0);
    assert!(metrics.value("khata_memtable_bytes", &[]) >= 0.0);
    assert!(metrics.has("khata_block_cache_bytes", &[]));
    assert!(metrics.has("khata_pending_compactions", &[]));
    assert!(metrics.has("khata_compactions_completed_total", &[]));
    assert!(metrics.value("khata_live_data_bytes", &[]) > 0.0);
    let chat = [("keyspace", "chat"), ("table", "messages")];
    assert_eq!(metrics.value("khata_table_sstables", &chat), 1.0);
    assert_eq!(metrics.value("khata_table_tombstones", &chat), 5.0);
    assert_eq!(metrics.value("khata_table_partitions_estimate", &chat), 5.0);
    // Per-table latencies: every write of the test, and its 12 reads, as summaries.
    let op = |op: &'static str| [("keyspace", "chat"), ("table", "messages"), ("op", op)];
    for name in ["local_write", "coordinator_write"] {
        assert_eq!(
            metrics.value("khata_table_latency_seconds_count", &op(name)),
            CHAT_WRITES as f64,
            "{name}"
        );
        assert!(metrics.value("khata_table_latency_seconds_sum", &op(name)) > 0.0);
    }
    assert_eq!(
        metrics.value("khata_table_latency_seconds_count", &op("local_read")),
        12.0
    );
    let quantile = |q: &'static str| {
        let [k, t, o] = op("coordinator_read");
        metrics.value("khata_table_latency_seconds", &[k, t, o, ("quantile", q)])
    };
    assert!(0.0 < quantile("0.5") && quantile("0.5") <= quantile("0.99"));
    assert!(
        !metrics.has("khata_table_latency_seconds_count", &op("local_scan")),
        "no scan of the table, no series"
    );
    let largest = metrics.value("khata_table_largest_partition_bytes", &chat);
    let stats = admin.table("chat", "messages").await;
    assert_eq!(largest as u64, stats.largest_partitions[0].size_bytes);
    assert!(metrics.has(
        "khata_build_info",
        &[
            ("version", env!("CARGO_PKG_VERSION")),
            ("release_version", "4.1.0")
        ]
    ));
    drop(session);
    node.stop().await;
}

/// One sample of the text format.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Samples by name and labels.
struct Metrics(Vec<Sample>);

impl Metrics {
    fn find(&self, name: &str, labels: &[(&str, &str)]) -> Option<&Sample> {
        let want: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.0.iter().find(|s| s.name == name && s.labels == want)
    }

    fn has(&self, name: &str, labels: &[(&str, &str)]) -> bool {
        self.find(name, labels).is_some()
    }

    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.find(name, labels)
            .unwrap_or_else(|| panic!("no sample {name}{labels:?}"))
            .value
    }
}

/// A strict reader of the Prometheus text format 0.0.4: every line is a `# HELP`, a
/// `# TYPE` or a sample; names and labels are well-formed; every sample belongs to a family
/// declared before it (once); no series twice; histograms have increasing `le`, cumulative
/// counts and a `+Inf` bucket equal to `_count`. Panics on the first violation.
fn parse_prometheus(text: &str) -> Metrics {
    assert!(text.ends_with('\n'), "the text ends with a newline");
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helps = HashSet::new();
    let mut samples = Vec::new();
    let mut seen = HashSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let (keyword, name) = (parts.next().unwrap(), parts.next().unwrap_or(""));
            assert!(valid_name(name), "bad family name in {line:?}");
            match keyword {
                "HELP" => assert!(helps.insert(name.to_owned()), "HELP twice: {line:?}"),
                "TYPE" => {
                    let kind = parts.next().unwrap_or("");
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                        "bad type in {line:?}"
                    );
                    assert!(
                        types.insert(name.to_owned(), kind.to_owned()).is_none(),
                        "TYPE twice: {line:?}"
                    );
                }
                _ => {}
            }
            continue;
        }
        assert!(!line.is_empty(), "empty line");
        let sample = parse_sample(line);
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                let base = sample.name.strip_suffix(suffix)?;
                matches!(
                    types.get(base).map(String::as_str),
                    Some("histogram" | "summary")
                )
                .then_some(base)
            })
            .unwrap_or(&sample.name);
        assert!(
            types.contains_key(family),
            "sample before its TYPE: {line:?}"
        );
        assert!(
            seen.insert((sample.name.clone(), sample.labels.clone())),
            "series twice: {line:?}"
        );
        if types[family] == "counter" {
            assert!(sample.value >= 0.0, "negative counter: {line:?}");
        }
        samples.push(sample);
    }
    let metrics = Metrics(samples);
    for (family, kind) in &types {
        if kind != "histogram" {
            continue;
        }
        let bucket = format!("{family}_bucket");
        let mut series: BTreeMap<BTreeMap<String, String>, Vec<(f64, f64)>> = BTreeMap::new();
        for s in metrics.0.iter().filter(|s| s.name == bucket) {
            let mut labels = s.labels.clone();
            let le = labels.remove("le").expect("a bucket has le");
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            series.entry(labels).or_default().push((le, s.value));
        }
        assert!(!series.is_empty(), "histogram {family} has no buckets");
        for (labels, buckets) in series {
            assert!(
                buckets
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
                "{family}{labels:?}: buckets not increasing/cumulative"
            );
            let (last_le, last) = *buckets.last().unwrap();
            assert_eq!(last_le, f64::INFINITY, "{family}{labels:?}: no +Inf bucket");
            let pairs: Vec<(&str, &str)> = labels
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            assert_eq!(metrics.value(&format!("{family}_count"), &pairs), last);
            assert!(metrics.has(&format!("{family}_sum"), &pairs));
        }
    }
    metrics
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn parse_sample(line: &str) -> Sample {
    let name_end = line
        .find(['{', ' '])
        .unwrap_or_else(|| panic!("no value: {line:?}"));
    let name = &line[..name_end];
    assert!(valid_name(name), "bad metric name: {line:?}");
    let mut labels = BTreeMap::new();
    let mut rest = &line[name_end..];
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices().peekable();
        let end;
        loop {
            let (start, c) = chars.next().unwrap_or_else(|| panic!("unclosed: {line:?}"));
            if c == '}' {
                end = start;
                break;
            }
            let eq = body[start..].find('=').expect("label=") + start;
            let label = &body[start..eq];
            assert!(
                valid_name(label) && !label.contains(':'),
                "bad label name: {line:?}"
            );
            while chars.peek().is_some_and(|(i, _)| *i <= eq) {
                chars.next();
            }
            assert_eq!(chars.next().map(|(_, c)| c), Some('"'), "quote: {line:?}");
            let mut value = String::new();
            loop {
                match chars.next().map(|(_, c)| c) {
                    Some('"') => break,
                    Some('\\') => match chars.next().map(|(_, c)| c) {
                        Some('\\') => value.push('\\'),
                        Some('"') => value.push('"'),
                        Some('n') => value.push('\n'),
                        other => panic!("bad escape {other:?}: {line:?}"),
                    },
                    Some('\n') | None => panic!("unterminated label value: {line:?}"),
                    Some(c) => value.push(c),
                }
            }
            assert!(
                labels.insert(label.to_owned(), value).is_none(),
                "label twice: {line:?}"
            );
            if chars.peek().map(|(_, c)| *c) == Some(',') {
                chars.next();
            }
        }
        rest = &body[end + 1..];
    }
    let value_text = rest
        .strip_prefix(' ')
        .unwrap_or_else(|| panic!("space: {line:?}"));
    assert!(
        !value_text.contains(' '),
        "timestamps are not expected: {line:?}"
    );
    let value = match value_text {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().unwrap_or_else(|_| panic!("bad value: {line:?}")),
    };
    Sample {
        name: name.to_owned(),
        labels,
        value,
    }
}

/// A connection with as many requests waiting as it may have (1024) stops reading, and what
/// it has not read is counted blocked in `Native-Transport-Requests`, as nodetool's tpstats
/// counts requests a full pool holds back: 2,000 INSERTs sent at once on one connection to a
/// node whose group commit log holds every write for up to half a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_at_its_request_limit_counts_blocked_requests() {
    let mut node = TestNode::start_with(|c| {
        c.commitlog_sync = khata_server::config::CommitLogSync::Group;
        c.commitlog_sync_group_window = Duration::from_millis(500);
    })
    .await;
    let admin = Admin::of(&node);
    let session = SessionBuilder::new()
        .known_node_addr(node.cql_address())
        .pool_size(scylla::client::PoolSize::PerHost(
            std::num::NonZeroUsize::new(1).unwrap(),
        ))
        .build()
        .await
        .expect("driver connects");
    for q in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int PRIMARY KEY, v int)",
    ] {
        session.query_unpaged(q, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    let pool = |stats: &TpStats| {
        stats
            .pools
            .iter()
            .find(|p| p.name == "Native-Transport-Requests")
            .unwrap()
            .clone()
    };
    let before = pool(&admin.get("/tpstats").await.unwrap());
    assert_eq!((before.blocked, before.blocked_all_time), (0, 0));

    const WRITES: i32 = 2_000;
    let writes =
        futures::future::join_all((0..WRITES).map(|k| session.execute_unpaged(&insert, (k, k))));
    let watch = async {
        // While the writes wait for the sync, the connection holds up to 1024 and the rest
        // queue (the samples may miss the moment).
        let mut most = (0, 0);
        for _ in 0..100 {
            let p = pool(&admin.get("/tpstats").await.unwrap());
            most = (most.0.max(p.active), most.1.max(p.blocked));
            if p.blocked_all_time > 0 && p.active == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        most
    };
    let (results, (most_active, most_blocked)) = tokio::join!(writes, watch);
    for r in &results {
        assert!(r.is_ok(), "every write succeeds: {r:?}");
    }
    let after = pool(&admin.get("/tpstats").await.unwrap());
    assert!(after.blocked_all_time >= 1, "{after:?}");
    assert_eq!(after.blocked, 0, "nothing blocked once answered: {after:?}");
    assert!(
        after.completed >= before.completed + WRITES as u64,
        "{after:?}"
    );
    println!("seen at most: {most_active} active, {most_blocked} blocked; {after:?}");
    assert!(most_active > 0);
    assert!(
        most_blocked <= 1,
        "one connection, blocked by one request at a time"
    );
    let rows = session
        .query_unpaged("SELECT count(*) FROM ks.t", &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(i64,)>()
        .unwrap();
    assert_eq!(rows.0, i64::from(WRITES));
    node.stop().await;
}

/// `settraceprobability`: with probability 1 every request is traced into `system_traces`
/// although none asked (and no answer carries a tracing id); with 0 none is; a probability
/// outside 0..1 is refused with 400 and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_probability_traces_requests_nobody_asked_to_trace() {
    let mut node = TestNode::start().await;
    let admin = Admin::of(&node);
    let session = connect(&node).await;
    let at_one = |cql: &str| {
        let mut s = scylla::statement::unprepared::Statement::new(cql);
        s.set_consistency(scylla::statement::Consistency::One);
        s
    };
    let traces = || async {
        session
            .query_unpaged(at_one("SELECT request FROM system_traces.sessions"), &[])
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows_num()
    };
    for q in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int PRIMARY KEY, v int)",
    ] {
        session.query_unpaged(q, &[]).await.unwrap();
    }
    let current: TraceProbability = admin.get("/traceprobability").await.unwrap();
    assert_eq!(current.probability, 0.0);
    assert_eq!(traces().await, 0, "nothing traced unasked by default");

    let set: TraceProbability = admin.post("/traceprobability?probability=1").await.unwrap();
    assert_eq!(set.probability, 1.0);
    let before = traces().await; // counting is a request, traced too
    let answer = session
        .query_unpaged("INSERT INTO ks.t (k, v) VALUES (1, 1)", &[])
        .await
        .unwrap();
    assert_eq!(answer.tracing_id(), None, "the client did not ask");
    // The INSERT, and the count before it, itself traced once it had been answered.
    assert_eq!(traces().await, before + 2);

    let _: TraceProbability = admin.post("/traceprobability?probability=0").await.unwrap();
    let after = traces().await;
    session
        .query_unpaged("INSERT INTO ks.t (k, v) VALUES (2, 2)", &[])
        .await
        .unwrap();
    assert_eq!(traces().await, after);

    for bad in ["1.5", "-0.1", "often", "NaN"] {
        let refused = admin
            .raw("POST", &format!("/traceprobability?probability={bad}"))
            .await;
        assert_eq!(refused.status, 400, "{bad}");
        let body = String::from_utf8_lossy(&refused.body);
        assert!(
            body.contains("Trace probability must be between 0 and 1"),
            "{body}"
        );
    }
    let current: TraceProbability = admin.get("/traceprobability").await.unwrap();
    assert_eq!(current.probability, 0.0);
    node.stop().await;
}
