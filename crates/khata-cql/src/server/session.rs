//! What a connection remembers between requests: its protocol version and compression (fixed
//! by its first frames and STARTUP; in v5 the compression is that of the segments), the
//! keyspace of `USE`, and its event registrations.

use parking_lot::Mutex;
use tokio::sync::mpsc;

use crate::frame::{Compression, EventType, ProtocolVersion};

use super::connection::Outgoing;

#[derive(Debug, Default)]
struct State {
    version: Option<ProtocolVersion>,
    compression: Option<Compression>,
    ready: bool,
    keyspace: Option<String>,
    events: Vec<EventType>,
    events_task: bool,
}

/// One connection's session.
#[derive(Debug)]
pub struct Session {
    state: Mutex<State>,
    pub(crate) tx: mpsc::Sender<Outgoing>,
}

impl Session {
    pub(crate) fn new(tx: mpsc::Sender<Outgoing>) -> Self {
        Session {
            state: Mutex::new(State::default()),
            tx,
        }
    }

    pub fn version(&self) -> Option<ProtocolVersion> {
        self.state.lock().version
    }

    pub(crate) fn set_version(&self, v: ProtocolVersion) {
        self.state.lock().version = Some(v);
    }

    pub fn compression(&self) -> Option<Compression> {
        self.state.lock().compression
    }

    pub(crate) fn start(&self, compression: Option<Compression>) {
        let mut s = self.state.lock();
        s.compression = compression;
        s.ready = true;
    }

    pub fn is_ready(&self) -> bool {
        self.state.lock().ready
    }

    pub fn keyspace(&self) -> Option<String> {
        self.state.lock().keyspace.clone()
    }

    pub(crate) fn set_keyspace(&self, keyspace: String) {
        self.state.lock().keyspace = Some(keyspace);
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
