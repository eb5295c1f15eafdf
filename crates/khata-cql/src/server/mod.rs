//! The CQL native-protocol server: connections, sessions, and the request dispatcher that hands
//! statements to the executor ([`crate::exec`]).
//!
//! The server does not own sockets: `khata-server` accepts connections and passes each stream
//! to [`CqlServer::serve_connection`], so tests can also drive it over in-memory pipes.

mod connection;
mod session;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use khata_coordinator::Coordinator;
use khata_coordinator::catalog::{ChangeKind, ChangeTarget, SchemaEvent};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::exec::Executor;
use crate::frame::{
    DEFAULT_MAX_FRAME_SIZE_BYTES, ErrorBody, ErrorKind, Event, EventType, Request, RequestFrame,
    Response, ResponseFrame, SchemaChange, SchemaChangeType, SchemaTarget,
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
}

impl Default for CqlServerConfig {
    fn default() -> Self {
        CqlServerConfig {
            max_frame_size_bytes: DEFAULT_MAX_FRAME_SIZE_BYTES,
            batch_size_warn_threshold_bytes: 5 * 1024,
            batch_size_fail_threshold_bytes: 50 * 1024,
            default_gc_grace_seconds: 864_000,
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

/// The CQL front end of a node.
#[derive(Debug)]
pub struct CqlServer {
    pub(crate) config: CqlServerConfig,
    pub(crate) executor: Executor,
    pub(crate) connections: Connections,
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

    /// Serve one client connection until it closes.
    pub async fn serve_connection<S>(self: Arc<Self>, stream: S)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        connection::serve(self, stream).await
    }

    /// Answer one request.
    pub(crate) async fn handle(
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
                if major.is_none_or(|m| m < 3) {
                    Response::Error(ErrorBody::new(
                        ErrorKind::ProtocolError,
                        format!(
                            "Invalid or unsupported CQL version {}; only CQL 3.0.0 and later are supported",
                            startup.cql_version
                        ),
                    ))
                } else {
                    session.start(startup.compression);
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
                return self.executor.query(session, stream, query).await;
            }
            Request::Prepare(prepare) => {
                return self.executor.prepare(session, stream, prepare).await;
            }
            Request::Execute(execute) => {
                return self.executor.execute(session, stream, execute).await;
            }
            Request::Batch(batch) => {
                return self.executor.batch(session, stream, batch).await;
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
            vec!["3/v3".to_string(), "4/v4".to_string()],
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
