//! One client connection: frames in, responses out, many requests in flight.
//!
//! A reader decodes frames from the socket and starts a task per request; each task sends its
//! encoded response to a single writer ([`writer`](super::writer)), which owns the socket's
//! write half. Responses go out in the order they finish, tagged with their stream id, as the
//! protocol allows. The number of requests in flight per connection is bounded
//! ([`MAX_IN_FLIGHT_PER_CONNECTION`]): past it the reader waits, which pushes back on the
//! client through TCP.
//!
//! Until the connection is ready, requests (OPTIONS, STARTUP) are answered one at a time,
//! before the next frame is decoded: STARTUP fixes the compression of what follows and, on a
//! v5 connection, switches both directions to v5 segments right after its READY (spec v5
//! §2.3.1), so nothing may be read or written in between under the old rules.
//!
//! A frame the decoder rejects gets a protocol error on its stream; the connection closes only
//! when the decoder cannot find the next frame boundary ([`FrameError::is_fatal`]: an unknown
//! version, a v5 segment whose checksum fails). Nothing a client sends can stop the server or
//! other connections.

use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{Semaphore, mpsc};
use tracing::{debug, warn};

use crate::frame::{
    Compression, DecoderConfig, Frame, FrameDecoder, FrameError, FramedDecoder, ProtocolVersion,
    Request, RequestFrame, Response, ResponseFrame, encode_frame_error,
};

use super::CqlServer;
use super::session::Session;
pub(crate) use super::writer::Outgoing;

/// Requests one connection may have in flight (Cassandra's
/// `native_transport_max_requests_per_connection` is unbounded by default; a bound keeps one
/// client from holding all memory).
pub const MAX_IN_FLIGHT_PER_CONNECTION: usize = 1024;
/// Encoded responses queued for the writer.
const WRITE_QUEUE: usize = 256;
/// Bytes read from the socket at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// How the reader finds requests in the byte stream: bare frames (v3/v4, and v5 before its
/// STARTUP is answered), or v5 segments.
enum Inbound {
    Frames(FrameDecoder),
    Segments(FramedDecoder),
}

impl Inbound {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        match self {
            Inbound::Frames(d) => d.decode(buf),
            Inbound::Segments(d) => d.decode(buf),
        }
    }

    /// The decoder for the envelopes, before framing starts.
    fn frames(&mut self) -> Option<&mut FrameDecoder> {
        match self {
            Inbound::Frames(d) => Some(d),
            Inbound::Segments(_) => None,
        }
    }

    /// Reads v5 segments from now on, keeping the envelope decoder's limits and pinned version.
    fn start_framing(self, lz4: bool) -> Self {
        match self {
            Inbound::Frames(d) => Inbound::Segments(FramedDecoder::new(lz4, d)),
            framed => framed,
        }
    }
}

/// Handle a connection until the client closes it or a fatal protocol error, given its
/// two halves (a TCP stream's own halves share no lock; `tokio::io::split` puts one around
/// any other stream, which the reading and the writing task would contend on).
pub(crate) async fn serve<R, W>(server: Arc<CqlServer>, mut read_half: R, write_half: W)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel::<Outgoing>(WRITE_QUEUE);
    let writer = tokio::spawn(super::writer::write_loop(rx, write_half));

    let session = Arc::new(Session::new(tx.clone()));
    let mut inbound = Inbound::Frames(FrameDecoder::new(DecoderConfig {
        max_frame_size_bytes: server.config.max_frame_size_bytes,
        accept_v5: true,
    }));
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT_PER_CONNECTION));
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
    let _connection = server.connections.enter();
    let mut stopping = server.stopping.subscribe();
    'read: loop {
        if *stopping.borrow_and_update() {
            break;
        }
        loop {
            match inbound.decode(&mut buf) {
                Ok(Some(frame)) => {
                    let request = match RequestFrame::decode(frame) {
                        Ok(r) => r,
                        Err(e) => {
                            if !answer_frame_error(&tx, &e, session.version()).await {
                                break 'read;
                            }
                            continue;
                        }
                    };
                    if session.version().is_none() {
                        session.set_version(request.version);
                        if let Some(d) = inbound.frames() {
                            d.pin_version(request.version);
                        }
                    }
                    let Ok(permit) = in_flight.clone().acquire_owned().await else {
                        break 'read;
                    };
                    let was_ready = session.is_ready();
                    let is_startup = matches!(request.request, Request::Startup(_));
                    if !was_ready || is_startup {
                        // Answered before the next frame is decoded (see the module doc).
                        let response = server.handle(&session, request).await;
                        if send(&tx, &session, response).await.is_err() {
                            break 'read;
                        }
                        drop(permit);
                        if let Some(d) = inbound.frames() {
                            d.set_compression(session.compression());
                        }
                        if !was_ready
                            && session.is_ready()
                            && session.version() == Some(ProtocolVersion::V5)
                        {
                            let lz4 = session.compression() == Some(Compression::Lz4);
                            if tx.send(Outgoing::StartFraming { lz4 }).await.is_err() {
                                break 'read;
                            }
                            inbound = inbound.start_framing(lz4);
                            debug!(lz4, "v5 framing on");
                        }
                        continue;
                    }
                    let server = server.clone();
                    let session = session.clone();
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let response = server.handle(&session, request).await;
                        let _ = send(&tx, &session, response).await;
                        drop(permit);
                    });
                }
                Ok(None) => break,
                Err(e) => {
                    if !answer_frame_error(&tx, &e, session.version()).await {
                        break 'read;
                    }
                }
            }
        }
        buf.reserve(READ_CHUNK_BYTES);
        tokio::select! {
            read = read_half.read_buf(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            _ = stopping.changed() => break,
        }
    }
    debug!("connection closed");
    // Let requests in flight finish before the writer stops.
    let _ = in_flight
        .acquire_many(MAX_IN_FLIGHT_PER_CONNECTION as u32)
        .await;
    let _ = tx.send(Outgoing::Close).await;
    drop(tx);
    let _ = writer.await;
}

/// Answer a frame the decoder refused; `false` when the connection must close.
async fn answer_frame_error(
    tx: &mpsc::Sender<Outgoing>,
    e: &FrameError,
    version: Option<ProtocolVersion>,
) -> bool {
    if let FrameError::Segment(segment) = e {
        // The byte stream cannot be resynchronised after a broken segment.
        warn!(error = %segment, "closing a v5 connection: invalid segment");
    } else {
        debug!(error = %e, "bad frame");
    }
    let mut out = BytesMut::new();
    encode_frame_error(e, version, &mut out);
    let sent = tx.send(Outgoing::Envelope(out.freeze())).await.is_ok();
    sent && !e.is_fatal()
}

/// Encode a response in the connection's version and compression and queue it.
pub(crate) async fn send(
    tx: &mpsc::Sender<Outgoing>,
    session: &Session,
    response: ResponseFrame,
) -> Result<(), ()> {
    let version = session.version().unwrap_or(ProtocolVersion::V4);
    let compression = if matches!(response.response, Response::Ready) {
        None
    } else {
        session.compression()
    };
    let mut out = BytesMut::new();
    if let Err(e) = response.encode(version, compression, &mut out) {
        // A response too large for a frame becomes a server error on the same stream.
        let error = ResponseFrame::new(
            response.stream,
            Response::Error(crate::frame::ErrorBody::new(
                crate::frame::ErrorKind::ServerError,
                format!("response could not be encoded: {e}"),
            )),
        );
        out.clear();
        if error.encode(version, compression, &mut out).is_err() {
            return Err(());
        }
    }
    tx.send(Outgoing::Envelope(out.freeze()))
        .await
        .map_err(|_| ())
}
