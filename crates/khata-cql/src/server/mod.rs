//! The CQL native-protocol server: connections, sessions, and the request dispatcher that hands
//! statements to the executor ([`crate::exec`]).
//!
//! The server does not own sockets: `khata-server` accepts connections and passes each stream
//! to [`CqlServer::serve_connection`], so tests can also drive it over in-memory pipes.

mod connection;
mod session;
mod writer;

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use khata_coordinator::Coordinator;
use khata_coordinator::catalog::{ChangeKind, ChangeTarget, ClientInfo, SchemaEvent};
use khata_types::pools::PoolStats;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::exec::Executor;
use crate::frame::{
    Compression, DEFAULT_MAX_FRAME_SIZE_BYTES, ErrorBody, ErrorKind, Event, EventType,
    ProtocolVersion, QueryParameters, Request, RequestFrame, Response, ResponseFrame, SchemaChange,
    SchemaChangeType, SchemaTarget,
};

pub use connection::MAX_IN_FLIGHT_PER_CONNECTION;
pub use session::Session;

/// Settings of the CQL front end (`cassandra.yaml` names in comments).
#[derive(Clone, Debug)]
pub struct CqlServerConfig {
    /// `native_transport_max_frame_size`.
    pub max_frame_size_bytes: usize,
    /// `batch_size_warn_threshold`.
    pub batch_size_warn_threshold_bytes: usize,
    /// `batch_size_fail_threshold`.
    pub batch_size_fail_threshold_bytes: usize,
    /// `gc_grace_seconds` of tables created without one.
    pub default_gc_grace_seconds: u32,
    /// `default_keyspace_rf`: the replication factor of a keyspace given without one.
    pub default_keyspace_rf: u32,
    /// This node's address as `system.local` reports it (`listen_address`): the replica v5's
    /// READ_FAILURE/WRITE_FAILURE reason maps name.
    pub local_address: IpAddr,
}

impl Default for CqlServerConfig {
    fn default() -> Self {
        CqlServerConfig {
            max_frame_size_bytes: DEFAULT_MAX_FRAME_SIZE_BYTES,
            batch_size_warn_threshold_bytes: 5 * 1024,
            batch_size_fail_threshold_bytes: 50 * 1024,
            default_gc_grace_seconds: 864_000,
            default_keyspace_rf: 1,
            local_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
        }
    }
}

/// Counts open connections.
#[derive(Debug, Default)]
pub(crate) struct Connections(AtomicUsize);

pub(crate) struct ConnectionGuard<'a>(&'a Connections);

impl Connections {
    pub(crate) fn enter(&self) -> ConnectionGuard<'_> {
        self.0.fetch_add(1, Ordering::Relaxed);
        ConnectionGuard(self)
    }
}

impl Drop for ConnectionGuard<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The requests the server answers, as `Native-Transport-Requests` in
/// `system_views.thread_pools`: answering now, answered, and waiting for room on their
/// connection (which has as many in flight as it may).
#[derive(Debug, Default)]
pub(crate) struct RequestCounts {
    active: AtomicU64,
    completed: AtomicU64,
    blocked: AtomicU64,
    blocked_all_time: AtomicU64,
}

/// A request being answered; counted completed when dropped (answered or abandoned).
pub(crate) struct ActiveRequest<'a>(&'a RequestCounts);

impl RequestCounts {
    fn start(&self) -> ActiveRequest<'_> {
        self.active.fetch_add(1, Ordering::Relaxed);
        ActiveRequest(self)
    }

    pub(crate) fn block(&self) {
        self.blocked.fetch_add(1, Ordering::Relaxed);
        self.blocked_all_time.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn unblock(&self) {
        self.blocked.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for ActiveRequest<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::Relaxed);
        self.0.completed.fetch_add(1, Ordering::Relaxed);
    }
}

/// The connected TCP clients, for `system_views.clients`.
#[derive(Debug, Default)]
pub(crate) struct Clients {
    next: AtomicU64,
    /// Sessions of connections with a peer address ([`Session::peer`]).
    by_id: parking_lot::Mutex<BTreeMap<u64, Arc<Session>>>,
}

/// A client's entry in [`Clients`], removed when dropped.
pub(crate) struct ClientGuard<'a> {
    clients: &'a Clients,
    id: u64,
}

impl Clients {
    pub(crate) fn enter(&self, session: Arc<Session>) -> ClientGuard<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.by_id.lock().insert(id, session);
        ClientGuard { clients: self, id }
    }
}

impl Drop for ClientGuard<'_> {
    fn drop(&mut self) {
        self.clients.by_id.lock().remove(&self.id);
    }
}

/// The CQL front end of a node.
#[derive(Debug)]
pub struct CqlServer {
    pub(crate) config: CqlServerConfig,
    pub(crate) executor: Executor,
    pub(crate) connections: Connections,
    pub(crate) clients: Clients,
    pub(crate) requests: RequestCounts,
    /// Set once at shutdown: connections stop reading requests, finish those in flight and
    /// close.
    pub(crate) stopping: tokio::sync::watch::Sender<bool>,
}

impl CqlServer {
    pub fn new(coordinator: Arc<Coordinator>, config: CqlServerConfig) -> Arc<Self> {
        Arc::new(CqlServer {
            executor: Executor::new(coordinator, config.clone()),
            config,
            connections: Connections::default(),
            clients: Clients::default(),
            requests: RequestCounts::default(),
            stopping: tokio::sync::watch::channel(false).0,
        })
    }

    /// Stop serving: every connection finishes the requests it has in flight, then closes.
    /// Wait for [`CqlServer::open_connections`] to reach zero to know they have.
    pub fn stop(&self) {
        let _ = self.stopping.send(true);
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.connections.0.load(Ordering::Relaxed)
    }

    /// The requests answered, as `Native-Transport-Requests` (Cassandra's pool of the same
    /// work) in `system_views.thread_pools`. No fixed bound on those answered at once (each
    /// connection has its own); none waits in a queue, a connection stops reading instead.
    pub fn request_pool(&self) -> PoolStats {
        let r = &self.requests;
        PoolStats {
            name: "Native-Transport-Requests".into(),
            active: r.active.load(Ordering::Relaxed),
            active_limit: None,
            pending: 0,
            completed: r.completed.load(Ordering::Relaxed),
            blocked: r.blocked.load(Ordering::Relaxed),
            blocked_all_time: r.blocked_all_time.load(Ordering::Relaxed),
        }
    }

    /// The connected TCP clients, as `system_views.clients` lists them.
    pub fn clients(&self) -> Vec<ClientInfo> {
        let sessions: Vec<Arc<Session>> = self.clients.by_id.lock().values().cloned().collect();
        sessions
            .into_iter()
            .filter_map(|session| Some((session.peer()?, session)))
            .map(|(peer, session)| {
                let (driver_name, driver_version) = session.driver();
                ClientInfo {
                    address: peer.ip(),
                    port: peer.port(),
                    connection_stage: if session.is_ready() {
                        "ready"
                    } else {
                        "established"
                    }
                    .to_string(),
                    driver_name,
                    driver_version,
                    protocol_version: i32::from(session.version_number()),
                    request_count: session.requests() as i64,
                    username: None,
                }
            })
            .collect()
    }

    /// Serve one client connection until it closes.
    pub async fn serve_connection<S>(self: Arc<Self>, stream: S)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (read_half, write_half) = tokio::io::split(stream);
        connection::serve(self, read_half, write_half, None).await
    }

    /// Serve one TCP client connection until it closes, its reading and writing halves
    /// independent of each other.
    pub async fn serve_tcp(self: Arc<Self>, stream: tokio::net::TcpStream) {
        let peer = stream.peer_addr().ok();
        let (read_half, write_half) = stream.into_split();
        connection::serve(self, read_half, write_half, peer).await
    }

    /// Answer one request.
    pub(crate) async fn handle(
        self: &Arc<Self>,
        session: &Arc<Session>,
        frame: RequestFrame,
    ) -> ResponseFrame {
        session.count_request();
        let _active = self.requests.start();
        // Asked for, or drawn under the trace probability (whose traces the client does not
        // hear of: it did not ask, as in Cassandra).
        let asked = frame.tracing;
        let trace = if asked || self.executor.coordinator().trace_at_random() {
            self.begin_trace(session, &frame)
        } else {
            None
        };
        let mut response = match &trace {
            None => self.answer(session, frame).await,
            Some(trace) => Box::pin(trace.run(self.answer(session, frame))).await,
        };
        if let Response::Error(error) = &mut response.response {
            name_failed_replicas(&mut error.kind, self.config.local_address);
        }
        if let Some(trace) = trace {
            // Written before the answer goes, so that the client finds the whole trace when
            // it reads it (cqlsh and the drivers read it at once). A trace that cannot be
            // written costs the request its tracing id, not its answer. As in Cassandra, an
            // error answer carries no tracing id (its trace is written all the same).
            let failed = matches!(response.response, Response::Error(_));
            match self.executor.coordinator().finish_trace(&trace).await {
                Ok(()) if asked && !failed => response.tracing_id = Some(trace.id()),
                Ok(()) => {}
                Err(e) => tracing::warn!(error = %e, "writing a trace failed"),
            }
        }
        response
    }

    /// A trace session for a request that asked for one: QUERY, EXECUTE, BATCH and PREPARE
    /// are traced, as in Cassandra (OPTIONS, STARTUP and REGISTER are not).
    fn begin_trace(
        &self,
        session: &Session,
        frame: &RequestFrame,
    ) -> Option<Arc<khata_coordinator::trace::TraceSession>> {
        let mut parameters = Vec::new();
        let mut add = |name: &str, value: String| parameters.push((name.to_string(), value));
        let (command, request) = match &frame.request {
            Request::Query(q) => {
                add("query", q.query.clone());
                query_parameters(&mut add, &q.parameters);
                ("QUERY", "Execute CQL3 query")
            }
            Request::Execute(e) => {
                query_parameters(&mut add, &e.parameters);
                ("EXECUTE", "Execute CQL3 prepared query")
            }
            Request::Batch(b) => {
                add("consistency_level", level_name(b.consistency));
                if let Some(serial) = b.serial_consistency {
                    add("serial_consistency_level", level_name(serial));
                }
                ("BATCH", "Execute batch of CQL3 queries")
            }
            Request::Prepare(p) => {
                add("query", p.query.clone());
                ("PREPARE", "Preparing CQL3 query")
            }
            _ => return None,
        };
        let client = session
            .peer()
            .map_or(self.config.local_address, |peer| peer.ip());
        Some(
            self.executor
                .coordinator()
                .begin_trace(client, command, request, parameters),
        )
    }

    /// The statements' futures are boxed: they are several KiB, and every request's task
    /// would otherwise be that large, copied whole when it is spawned and when it completes.
    async fn answer(
        self: &Arc<Self>,
        session: &Arc<Session>,
        frame: RequestFrame,
    ) -> ResponseFrame {
        let stream = frame.stream;
        let ready = session.is_ready();
        let response = match frame.request {
            Request::Options => Response::Supported(supported()),
            Request::Startup(startup) => {
                // As Cassandra: any version from 3 on is accepted (drivers send 3.x or 4.0.0).
                let major = startup
                    .cql_version
                    .split('.')
                    .next()
                    .and_then(|m| m.trim().parse::<u32>().ok());
                let v5 = frame.version >= ProtocolVersion::V5;
                if ready {
                    // As Cassandra (`ServerConnection.validateNewMessage`): the connection's
                    // compression (and a v5 connection's framing) is fixed once it is ready.
                    Response::Error(ErrorBody::new(
                        ErrorKind::ProtocolError,
                        "Unexpected message STARTUP, the connection is already initialized",
                    ))
                } else if v5 && startup.compression == Some(Compression::Snappy) {
                    // As Cassandra: v5 compresses segments, with LZ4 only (spec v5 §2.3.2).
                    Response::Error(ErrorBody::new(
                        ErrorKind::ProtocolError,
                        "Snappy compression is not supported in protocol V5",
                    ))
                } else if major.is_none_or(|m| m < 3) {
                    Response::Error(ErrorBody::new(
                        ErrorKind::ProtocolError,
                        format!(
                            "Invalid or unsupported CQL version {}; only CQL 3.0.0 and later are supported",
                            startup.cql_version
                        ),
                    ))
                } else {
                    session.start(startup.compression);
                    session.set_driver(
                        startup.options.get("DRIVER_NAME").cloned(),
                        startup.options.get("DRIVER_VERSION").cloned(),
                    );
                    Response::Ready
                }
            }
            Request::AuthResponse(_) => Response::Error(ErrorBody::new(
                ErrorKind::ProtocolError,
                "Unexpected AUTH_RESPONSE: authentication is not enabled",
            )),
            _ if !ready => Response::Error(ErrorBody::new(
                ErrorKind::ProtocolError,
                "Unexpected message, expecting STARTUP or OPTIONS",
            )),
            Request::Register(events) => {
                if session.register(&events) {
                    self.forward_events(session.clone());
                }
                Response::Ready
            }
            Request::Query(query) => {
                return Box::pin(self.executor.query(session, stream, query)).await;
            }
            Request::Prepare(prepare) => {
                return Box::pin(self.executor.prepare(session, stream, prepare)).await;
            }
            Request::Execute(execute) => {
                return Box::pin(self.executor.execute(session, stream, execute)).await;
            }
            Request::Batch(batch) => {
                return Box::pin(self.executor.batch(session, stream, batch)).await;
            }
        };
        ResponseFrame::new(stream, response)
    }

    /// Send schema events to a registered connection until it closes.
    fn forward_events(self: &Arc<Self>, session: Arc<Session>) {
        let mut events = self.executor.coordinator().subscribe_schema();
        tokio::spawn(async move {
            loop {
                let event = match events.recv().await {
                    Ok(e) => e,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => return,
                };
                if !session.is_registered(EventType::SchemaChange) {
                    continue;
                }
                let frame = ResponseFrame::new(
                    -1,
                    Response::Event(Event::SchemaChange(schema_change(&event))),
                );
                if connection::send(&session.tx, &session, frame)
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
    }
}

/// A traced QUERY's or EXECUTE's parameters as Cassandra lists them in
/// `system_traces.sessions.parameters`.
fn query_parameters(add: &mut impl FnMut(&str, String), p: &QueryParameters) {
    add("consistency_level", level_name(p.consistency));
    if let Some(size) = p.page_size {
        add("page_size", size.to_string());
    }
    if let Some(serial) = p.serial_consistency {
        add("serial_consistency_level", level_name(serial));
    }
}

/// A consistency level's name as Cassandra writes it (`LOCAL_QUORUM`).
fn level_name(level: crate::frame::Consistency) -> String {
    crate::exec::error::coordinator_consistency(level)
        .name()
        .to_string()
}

/// Cassandra's `RequestFailureReason.UNKNOWN`: khata's coordinator reports a failure with a
/// message, not one of Cassandra's reason codes.
const FAILURE_REASON_UNKNOWN: u16 = 0x0000;

/// Fills the v5 reason map (failed replica -> reason code) of a READ_FAILURE or WRITE_FAILURE
/// that carries only a count. On a single node the replica that failed is this one. v3/v4 send
/// the count and ignore the map.
fn name_failed_replicas(kind: &mut ErrorKind, local_address: IpAddr) {
    let failures = match kind {
        ErrorKind::ReadFailure { failures, .. } | ErrorKind::WriteFailure { failures, .. } => {
            failures
        }
        _ => return,
    };
    if failures.reasons.is_empty() && failures.count > 0 {
        failures.reasons = vec![(local_address, FAILURE_REASON_UNKNOWN)];
    }
}

/// The OPTIONS answer.
fn supported() -> Vec<(String, Vec<String>)> {
    Vec::from([
        (
            "CQL_VERSION".to_string(),
            vec![khata_coordinator::catalog::CQL_VERSION.to_string()],
        ),
        (
            "COMPRESSION".to_string(),
            vec!["lz4".to_string(), "snappy".to_string()],
        ),
        (
            "PROTOCOL_VERSIONS".to_string(),
            vec!["3/v3".to_string(), "4/v4".to_string(), "5/v5".to_string()],
        ),
    ])
}

/// The protocol's form of a schema event.
pub(crate) fn schema_change(event: &SchemaEvent) -> SchemaChange {
    SchemaChange {
        change: match event.change {
            ChangeKind::Created => SchemaChangeType::Created,
            ChangeKind::Updated => SchemaChangeType::Updated,
            ChangeKind::Dropped => SchemaChangeType::Dropped,
        },
        target: match event.target {
            ChangeTarget::Keyspace => SchemaTarget::Keyspace {
                keyspace: event.keyspace.clone(),
            },
            ChangeTarget::Table => SchemaTarget::Table {
                keyspace: event.keyspace.clone(),
                table: event.name.clone(),
            },
            ChangeTarget::Type => SchemaTarget::Type {
                keyspace: event.keyspace.clone(),
                name: event.name.clone(),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Consistency, Failures, ProtocolVersion, WireReader, WriteType};
    use bytes::BytesMut;

    #[test]
    fn a_failure_names_this_node_in_the_v5_reason_map() {
        let address: IpAddr = "10.0.0.7".parse().expect("an address");
        let mut kind = ErrorKind::WriteFailure {
            consistency: Consistency::One,
            received: 0,
            block_for: 1,
            failures: Failures {
                count: 1,
                reasons: Vec::new(),
            },
            write_type: WriteType::Simple,
        };
        name_failed_replicas(&mut kind, address);
        let body = ErrorBody::new(kind, "the commit log is poisoned");
        let mut v5 = BytesMut::new();
        body.write(&mut v5, ProtocolVersion::V5).expect("encodes");
        let read = ErrorBody::read(&mut WireReader::new(v5.freeze()), ProtocolVersion::V5)
            .expect("decodes");
        let ErrorKind::WriteFailure { failures, .. } = read.kind else {
            panic!("{read:?}");
        };
        assert_eq!(failures.reasons, vec![(address, FAILURE_REASON_UNKNOWN)]);
        assert_eq!(failures.count, 1);
        // v4 still sends the count.
        let mut v4 = BytesMut::new();
        body.write(&mut v4, ProtocolVersion::V4).expect("encodes");
        let read = ErrorBody::read(&mut WireReader::new(v4.freeze()), ProtocolVersion::V4)
            .expect("decodes");
        let ErrorKind::WriteFailure { failures, .. } = read.kind else {
            panic!("{read:?}");
        };
        assert_eq!(failures.count, 1);
    }
}
