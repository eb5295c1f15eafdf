//! Query tracing through the `scylla` driver, as cqlsh's `TRACING ON` uses it: a traced
//! request's answer carries a tracing id, and `system_traces.sessions` and
//! `system_traces.events` hold what the request did, in Cassandra's words, when the answer
//! arrives; untraced requests leave nothing.

mod support;

use scylla::client::session::Session;
use scylla::observability::tracing::TracingInfo;
use scylla::statement::batch::Batch;
use scylla::statement::unprepared::Statement;
use support::TestNode;
use uuid::Uuid;

async fn setup() -> (TestNode, Session) {
    let node = TestNode::start().await;
    let session = node.cql_session().await;
    for q in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))",
        "INSERT INTO ks.t (pk, ck, v) VALUES (1, 1, 'a')",
        "DELETE FROM ks.t WHERE pk = 1 AND ck = 2",
    ] {
        session.query_unpaged(q, &[]).await.unwrap();
    }
    (node, session)
}

fn traced(cql: &str) -> Statement {
    let mut statement = Statement::new(cql);
    statement.set_tracing(true);
    statement
}

async fn trace_of(session: &Session, id: Option<Uuid>) -> TracingInfo {
    let id = id.expect("a traced request's answer carries a tracing id");
    session
        .get_tracing_info(&id)
        .await
        .expect("the trace is there when the answer arrives")
}

fn activities(info: &TracingInfo) -> Vec<String> {
    info.events
        .iter()
        .map(|e| e.activity.clone().unwrap_or_default())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_read_records_what_it_read() {
    let (mut node, session) = setup().await;
    let query = "SELECT * FROM ks.t WHERE pk = 1";
    let result = session.query_unpaged(traced(query), &[]).await.unwrap();
    let info = trace_of(&session, result.tracing_id()).await;
    assert_eq!(info.command.as_deref(), Some("QUERY"));
    assert_eq!(info.request.as_deref(), Some("Execute CQL3 query"));
    assert!(info.duration.is_some_and(|d| d > 0), "{info:?}");
    assert!(info.started_at.is_some());
    assert_eq!(info.coordinator, Some(node.cql_address().ip()));
    assert_eq!(info.client, Some("127.0.0.1".parse().unwrap()));
    let parameters = info.parameters.clone().unwrap();
    assert_eq!(parameters.get("query").map(String::as_str), Some(query));
    assert!(
        parameters.contains_key("consistency_level"),
        "{parameters:?}"
    );
    assert_eq!(
        activities(&info),
        [
            format!("Parsing {query}"),
            "Preparing statement".to_string(),
            "Executing single-partition query on t".to_string(),
            "Merged data from memtables and 0 sstables".to_string(),
            // The row and the row tombstone of the setup.
            "Read 1 live rows and 1 tombstone cells".to_string(),
        ]
    );
    let elapsed: Vec<i32> = info
        .events
        .iter()
        .map(|e| e.source_elapsed.unwrap())
        .collect();
    assert!(elapsed.windows(2).all(|w| w[0] <= w[1]), "{elapsed:?}");
    assert!(info.events.iter().all(|e| e.source == info.coordinator));

    // The trace expires after a day (Cassandra's `trace_type_query_ttl`).
    let (ttl,): (Option<i32>,) = session
        .query_unpaged(
            at_one("SELECT TTL(request) FROM system_traces.sessions WHERE session_id = ?"),
            (result.tracing_id().unwrap(),),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row()
        .unwrap();
    assert!(ttl.is_some_and(|t| t > 86_000 && t <= 86_400), "{ttl:?}");

    // After a flush the read merges an SSTable.
    node.node().replica().engine().flush_all().unwrap();
    let result = session.query_unpaged(traced(query), &[]).await.unwrap();
    let info = trace_of(&session, result.tracing_id()).await;
    assert!(
        activities(&info).contains(&"Merged data from memtables and 1 sstables".to_string()),
        "{info:?}"
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traced_writes_batches_and_transactions_record_their_steps() {
    let (mut node, session) = setup().await;
    let mut insert = session
        .prepare("INSERT INTO ks.t (pk, ck, v) VALUES (?, ?, ?)")
        .await
        .unwrap();
    insert.set_tracing(true);
    let result = session.execute_unpaged(&insert, (2, 1, "b")).await.unwrap();
    let info = trace_of(&session, result.tracing_id()).await;
    assert_eq!(info.command.as_deref(), Some("EXECUTE"));
    assert_eq!(info.request.as_deref(), Some("Execute CQL3 prepared query"));
    assert_eq!(
        activities(&info),
        [
            "Determining replicas for mutation",
            "Appending to commitlog",
            "Adding to t memtable",
        ]
    );

    let mut batch = Batch::default();
    batch.append_statement("INSERT INTO ks.t (pk, ck, v) VALUES (3, 1, 'c')");
    batch.append_statement("INSERT INTO ks.t (pk, ck, v) VALUES (4, 1, 'd')");
    batch.set_tracing(true);
    let result = session.batch(&batch, ((), ())).await.unwrap();
    let info = trace_of(&session, result.tracing_id()).await;
    assert_eq!(info.command.as_deref(), Some("BATCH"));
    assert!(
        activities(&info).contains(&"Adding to t memtable".to_string()),
        "{info:?}"
    );

    for (cql, outcome) in [
        (
            "INSERT INTO ks.t (pk, ck, v) VALUES (5, 1, 'e') IF NOT EXISTS",
            "CAS successful",
        ),
        (
            "INSERT INTO ks.t (pk, ck, v) VALUES (5, 1, 'f') IF NOT EXISTS",
            "CAS precondition does not match current values",
        ),
    ] {
        let result = session.query_unpaged(traced(cql), &[]).await.unwrap();
        let steps = activities(&trace_of(&session, result.tracing_id()).await);
        assert!(
            steps.contains(&"Reading existing values for CAS precondition".to_string())
                && steps.contains(&outcome.to_string()),
            "{cql}: {steps:?}"
        );
    }

    // A scan and a read through an index are traced too.
    session
        .query_unpaged("CREATE INDEX ON ks.t (v)", &[])
        .await
        .unwrap();
    for (cql, step) in [
        ("SELECT * FROM ks.t", "Executing seq scan of t"),
        (
            "SELECT * FROM ks.t WHERE v = 'e'",
            "Executing read on t using index t_v_idx",
        ),
    ] {
        let result = session.query_unpaged(traced(cql), &[]).await.unwrap();
        let steps = activities(&trace_of(&session, result.tracing_id()).await);
        assert!(
            steps.iter().any(|s| s.starts_with(step)),
            "{cql}: {steps:?}"
        );
    }

    // A traced request that fails is answered with its error and no tracing id, as in
    // Cassandra; its trace is written all the same.
    let before = trace_count(&session).await;
    let failed = session
        .query_unpaged(traced("SELECT * FROM ks.no_such_table"), &[])
        .await;
    assert!(failed.is_err());
    assert_eq!(trace_count(&session).await, before + 1);

    // Untraced requests are not traced.
    let before = trace_count(&session).await;
    let result = session
        .query_unpaged("SELECT * FROM ks.t WHERE pk = 1", &[])
        .await
        .unwrap();
    assert_eq!(result.tracing_id(), None);
    assert_eq!(trace_count(&session).await, before);

    // The traces may be cleared, as in Cassandra.
    for table in ["sessions", "events"] {
        session
            .query_unpaged(format!("TRUNCATE system_traces.{table}"), &[])
            .await
            .unwrap();
    }
    assert_eq!(trace_count(&session).await, 0);
    node.stop().await;
}

/// A statement at consistency ONE: `system_traces` has two replicas, as in Cassandra, so on
/// one node the driver's default LOCAL_QUORUM is unavailable (the drivers read traces at ONE).
fn at_one(cql: &str) -> Statement {
    let mut statement = Statement::new(cql);
    statement.set_consistency(scylla::statement::Consistency::One);
    statement
}

async fn trace_count(session: &Session) -> usize {
    session
        .query_unpaged(at_one("SELECT session_id FROM system_traces.sessions"), &[])
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows_num()
}
