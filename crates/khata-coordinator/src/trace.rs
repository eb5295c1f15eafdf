//! Query tracing: what Cassandra records when a client asks for it (cqlsh's `TRACING ON`, a
//! driver's traced statement, the tracing flag of a native-protocol request).
//!
//! A traced request gets a [`TraceSession`]: a time-based id, the request's description and
//! parameters, and a list of events, each an activity with the microseconds since the request
//! started and the thread that did it. The front end runs the request inside
//! [`TraceSession::run`], which makes the session current for the request's future (a tokio
//! task-local: wherever the future is polled, by the connection's reader or by a task of its
//! own); the coordinator and the front end add events with [`event`], which costs a
//! task-local lookup when no session is current. When the request has been answered, the
//! front end hands the session to [`Coordinator::finish_trace`], which writes it to
//! `system_traces.sessions` (with its duration) and its events to `system_traces.events`,
//! expiring after a day as Cassandra's `trace_type_query_ttl` does, before the answer carries
//! the session's id to the client; the client then reads the trace back with ordinary queries
//! (cqlsh prints it; the drivers' `get_query_trace` / `get_tracing_info`).
//!
//! Requests may also be traced unasked, a given share of them at random
//! ([`Coordinator::set_trace_probability`], `nodetool settraceprobability`): their traces are
//! written the same way, and their answers carry no tracing id (the client did not ask).
//!
//! The events are Cassandra's, as a single node's trace of the same request shows them
//! ("Parsing ...", "Preparing statement", "Executing single-partition query on t", "Merged data
//! from memtables and 1 sstables", "Read 1 live rows and 0 tombstone cells", "Determining
//! replicas for mutation", "Appending to commitlog", "Adding to t memtable", ...).

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use khata_replica::rows::{RowWriter, SysValue};
use khata_replica::storage::Mutation;
use khata_replica::system_tables;
use parking_lot::Mutex;
use uuid::Uuid;

use crate::coordinator::{Coordinator, TimestampSource, timeuuid_at};
use crate::error::{CoordinatorError, Result};

/// How long traces are kept (Cassandra's `trace_type_query_ttl`, one day).
pub const TRACE_TTL_SECONDS: u32 = 24 * 60 * 60;

/// Events one session keeps (a runaway request's trace stays bounded).
const MAX_EVENTS: usize = 1_000;

tokio::task_local! {
    static CURRENT: Arc<TraceSession>;
}

/// One traced request.
#[derive(Debug)]
pub struct TraceSession {
    id: Uuid,
    host: Uuid,
    clock: TimestampSource,
    started_micros: i64,
    client: IpAddr,
    /// `QUERY`, `EXECUTE`, `BATCH` or `PREPARE` (Cassandra's `command`).
    command: &'static str,
    /// What was asked, as Cassandra words it ("Execute CQL3 query").
    request: &'static str,
    parameters: Vec<(String, String)>,
    events: Mutex<Vec<TraceEvent>>,
}

#[derive(Debug)]
struct TraceEvent {
    micros: i64,
    activity: String,
    thread: String,
}

impl TraceSession {
    /// The session's id: the tracing id the answer carries and `session_id` in
    /// `system_traces`.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Run `request` with this session current, so that [`event`] records into it.
    pub async fn run<F: Future>(self: &Arc<Self>, request: F) -> F::Output {
        CURRENT.scope(self.clone(), request).await
    }

    fn record(&self, activity: String) {
        let micros = self.clock.next();
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        let mut events = self.events.lock();
        if events.len() < MAX_EVENTS {
            events.push(TraceEvent {
                micros,
                activity,
                thread,
            });
        }
    }
}

/// Record an event in the current request's trace, if it is traced (`activity` is only
/// built then).
pub fn event(activity: impl FnOnce() -> String) {
    let _ = CURRENT.try_with(|session| session.record(activity()));
}

/// Whether the current request is traced.
pub fn is_tracing() -> bool {
    CURRENT.try_with(|_| ()).is_ok()
}

impl Coordinator {
    /// The share of requests traced without being asked (0 to 1; 0 unless set).
    pub fn trace_probability(&self) -> f64 {
        f64::from_bits(self.trace_probability.load(Ordering::Relaxed))
    }

    /// Trace this share of requests without being asked, until the node restarts (Cassandra's
    /// `nodetool settraceprobability`); an error unless 0 <= `probability` <= 1.
    pub fn set_trace_probability(&self, probability: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&probability) {
            return Err(CoordinatorError::Invalid(
                "Trace probability must be between 0 and 1".to_string(),
            ));
        }
        self.trace_probability
            .store(probability.to_bits(), Ordering::Relaxed);
        Ok(())
    }

    /// Whether to trace a request nobody asked to trace: a draw under the trace probability
    /// ([`khata_env::chance`]). One atomic load while the probability is 0.
    pub fn trace_at_random(&self) -> bool {
        khata_env::chance::with_probability(self.trace_probability())
    }

    /// Start tracing a request from `client`: `command` is the native-protocol message
    /// (`QUERY`, `EXECUTE`, `BATCH`, `PREPARE`), `request` its description, `parameters`
    /// what `system_traces.sessions.parameters` shows (consistency level, page size, query).
    pub fn begin_trace(
        &self,
        client: IpAddr,
        command: &'static str,
        request: &'static str,
        parameters: Vec<(String, String)>,
    ) -> Arc<TraceSession> {
        let clock = self.timestamp_source();
        let started_micros = clock.next();
        Arc::new(TraceSession {
            id: timeuuid_at(started_micros, self.host_id()),
            host: self.host_id(),
            clock,
            started_micros,
            client,
            command,
            request,
            parameters,
            events: Mutex::new(Vec::new()),
        })
    }

    /// Write a finished session and its events to `system_traces`, to expire after
    /// [`TRACE_TTL_SECONDS`]. Written on this node without the commit log (Cassandra writes
    /// traces at consistency ANY: a trace is a debugging aid, not data to keep through a
    /// crash); in the caller's task, as other writes are, unless flushes are behind and the
    /// write would wait for memory (then on a blocking thread).
    pub async fn finish_trace(&self, session: &TraceSession) -> Result<()> {
        let mutations = self.trace_mutations(session)?;
        let failed = |e: khata_replica::ReplicaError| {
            CoordinatorError::Internal(format!("writing the trace: {e}"))
        };
        if !self.replica().engine().writes_would_wait() {
            return self.replica().apply(mutations, false).map_err(failed);
        }
        let replica = self.replica().clone();
        crate::coordinator::run_blocking(move || replica.apply(mutations, false))
            .await?
            .map_err(failed)
    }

    /// The rows of a finished session and its events.
    fn trace_mutations(&self, session: &TraceSession) -> Result<Vec<Mutation>> {
        let duration_micros = self.timestamp_source().next() - session.started_micros;
        let node = self.node();
        let (coordinator, port) = (node.listen_address, i32::from(node.internode_port));
        let now = self.now_seconds();
        let timestamp = self.timestamp();
        let ttl = Some(TRACE_TTL_SECONDS);
        let invalid = |e: khata_replica::ReplicaError| CoordinatorError::Internal(e.to_string());
        let mut mutations = Vec::new();
        let sessions = system_tables::trace_sessions();
        let (key, update) = RowWriter::new(&sessions)
            .set("session_id", SysValue::Uuid(session.id))
            .set("client", SysValue::Inet(session.client))
            .set("command", SysValue::Text(session.command.to_string()))
            .set("coordinator", SysValue::Inet(coordinator))
            .set("coordinator_port", SysValue::Int(port))
            .set(
                "duration",
                SysValue::Int(i32::try_from(duration_micros).unwrap_or(i32::MAX)),
            )
            .set("parameters", SysValue::TextMap(session.parameters.clone()))
            .set("request", SysValue::Text(session.request.to_string()))
            .set(
                "started_at",
                SysValue::Timestamp(session.started_micros.div_euclid(1_000)),
            )
            .build_with_ttl(timestamp, now, ttl)
            .map_err(invalid)?;
        mutations.push(Mutation::new(sessions.id, key, update));
        let events = system_tables::trace_events();
        let mut update_of_events = None;
        for e in session.events.lock().iter() {
            let elapsed = e.micros - session.started_micros;
            let (key, update) = RowWriter::new(&events)
                .set("session_id", SysValue::Uuid(session.id))
                .set(
                    "event_id",
                    SysValue::Uuid(timeuuid_at(e.micros, session.host)),
                )
                .set("activity", SysValue::Text(e.activity.clone()))
                .set("source", SysValue::Inet(coordinator))
                .set(
                    "source_elapsed",
                    SysValue::Int(i32::try_from(elapsed).unwrap_or(i32::MAX)),
                )
                .set("source_port", SysValue::Int(port))
                .set("thread", SysValue::Text(e.thread.clone()))
                .build_with_ttl(timestamp, now, ttl)
                .map_err(invalid)?;
            match &mut update_of_events {
                None => update_of_events = Some((key, update)),
                Some((_, all)) => all.merge(update),
            }
        }
        if let Some((key, update)) = update_of_events {
            mutations.push(Mutation::new(events.id, key, update));
        }
        Ok(mutations)
    }
}
