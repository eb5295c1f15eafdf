//! What a connection remembers between requests: its protocol version and compression (fixed
//! by its first frames and STARTUP; in v5 the compression is that of the segments), the
//! keyspace of `USE`, and its event registrations.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::sync::mpsc;

use crate::frame::{Compression, EventType, ProtocolVersion};

use super::connection::Outgoing;

/// What changes rarely (`USE`, `REGISTER`), behind a lock.
#[derive(Debug, Default)]
struct State {
    events: Vec<EventType>,
    events_task: bool,
    /// `DRIVER_NAME` and `DRIVER_VERSION` from STARTUP.
    driver: (Option<String>, Option<String>),
}

/// One connection's session. What every request reads (the version, the compression, whether
/// STARTUP was answered) is in atomics and the keyspace behind a std `RwLock`, so that the
/// request tasks of one connection, running on different threads, never wait on each other
/// for it (a contended `parking_lot` mutex yields the CPU with `sched_yield`, which under load
/// can lose it for milliseconds: docs/benchmarks.md).
#[derive(Debug)]
pub struct Session {
    /// [`ProtocolVersion`] as `encode_version`, 0 until the first frame.
    version: AtomicU8,
    /// [`Compression`] as `encode_compression`, 0 for none.
    compression: AtomicU8,
    ready: AtomicBool,
    keyspace: std::sync::RwLock<Option<String>>,
    state: Mutex<State>,
    /// Requests received (`system_views.clients`' `request_count`).
    requests: AtomicU64,
    /// The client's address (a trace's `client`), when the connection has one.
    peer: Option<std::net::SocketAddr>,
    pub(crate) tx: mpsc::Sender<Outgoing>,
    /// The answers queued for the writer and not written yet.
    backlog: std::sync::Arc<super::writer::Backlog>,
    /// Whether the connection was warned that `USE` and prepared statements do not mix
    /// (Cassandra's `ClientState.issuedPreparedStatementsUseWarning`: once a connection).
    use_warning_issued: AtomicBool,
}

fn encode_version(v: ProtocolVersion) -> u8 {
    match v {
        ProtocolVersion::V3 => 3,
        ProtocolVersion::V4 => 4,
        ProtocolVersion::V5 => 5,
    }
}

fn decode_version(v: u8) -> Option<ProtocolVersion> {
    match v {
        3 => Some(ProtocolVersion::V3),
        4 => Some(ProtocolVersion::V4),
        5 => Some(ProtocolVersion::V5),
        _ => None,
    }
}

fn encode_compression(c: Option<Compression>) -> u8 {
    match c {
        None => 0,
        Some(Compression::Lz4) => 1,
        Some(Compression::Snappy) => 2,
    }
}

fn decode_compression(c: u8) -> Option<Compression> {
    match c {
        1 => Some(Compression::Lz4),
        2 => Some(Compression::Snappy),
        _ => None,
    }
}

impl Session {
    pub(crate) fn new(tx: mpsc::Sender<Outgoing>, peer: Option<std::net::SocketAddr>) -> Self {
        Session {
            peer,
            version: AtomicU8::new(0),
            compression: AtomicU8::new(0),
            ready: AtomicBool::new(false),
            keyspace: std::sync::RwLock::new(None),
            state: Mutex::new(State::default()),
            requests: AtomicU64::new(0),
            tx,
            backlog: Default::default(),
            use_warning_issued: AtomicBool::new(false),
        }
    }

    /// True the first time it is asked: whether the `USE` warning is still to be given.
    pub(crate) fn first_use_warning(&self) -> bool {
        !self.use_warning_issued.swap(true, Ordering::Relaxed)
    }

    /// The answers queued for the connection's writer and not written yet.
    pub(crate) fn backlog(&self) -> &std::sync::Arc<super::writer::Backlog> {
        &self.backlog
    }

    /// The client's address, when the connection has one.
    pub fn peer(&self) -> Option<std::net::SocketAddr> {
        self.peer
    }

    /// The protocol version's number (3, 4 or 5), 0 until the first frame.
    pub fn version_number(&self) -> u8 {
        self.version.load(Ordering::Acquire)
    }

    pub fn version(&self) -> Option<ProtocolVersion> {
        decode_version(self.version.load(Ordering::Acquire))
    }

    pub(crate) fn set_version(&self, v: ProtocolVersion) {
        self.version.store(encode_version(v), Ordering::Release);
    }

    pub fn compression(&self) -> Option<Compression> {
        decode_compression(self.compression.load(Ordering::Acquire))
    }

    pub(crate) fn start(&self, compression: Option<Compression>) {
        self.compression
            .store(encode_compression(compression), Ordering::Release);
        self.ready.store(true, Ordering::Release);
    }

    /// Note the driver that STARTUP named.
    pub(crate) fn set_driver(&self, name: Option<String>, version: Option<String>) {
        self.state.lock().driver = (name, version);
    }

    /// The driver's name and version, as STARTUP gave them.
    pub fn driver(&self) -> (Option<String>, Option<String>) {
        self.state.lock().driver.clone()
    }

    /// Count a request.
    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    pub fn keyspace(&self) -> Option<String> {
        self.keyspace
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_keyspace(&self, keyspace: String) {
        *self
            .keyspace
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(keyspace);
    }

    /// Register for events; returns whether the event forwarder must be started.
    pub(crate) fn register(&self, events: &[EventType]) -> bool {
        let mut s = self.state.lock();
        for e in events {
            if !s.events.contains(e) {
                s.events.push(*e);
            }
        }
        let start = !s.events_task;
        s.events_task = true;
        start
    }

    pub fn is_registered(&self, event: EventType) -> bool {
        self.state.lock().events.contains(&event)
    }
}
