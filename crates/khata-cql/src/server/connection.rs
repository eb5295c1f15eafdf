//! One client connection: frames in, responses out, many requests in flight.
//!
//! A reader decodes frames from the socket and polls each request once where it stands. A
//! request that completes in that poll (a write to a periodic commit log, a point read: the
//! coordinator runs these in the calling task because they take microseconds) is answered
//! there; one that waits (a sync of the commit log, a scan on a blocking thread, a lock of
//! a lightweight transaction) becomes a task of its own, which the next poll continues. Like a
//! ScyllaDB shard serving its connections, the common request costs no task spawn, no
//! wake-up of another worker thread and no hand-over of its data between cores; what is slow
//! waits elsewhere and does not hold up the requests behind it. While more than
//! [`MAX_BACKLOG_BYTES`](super::writer::MAX_BACKLOG_BYTES) of answers wait for the socket (a
//! client that does not read them), the reader starts no more requests.
//!
//! Every answer goes to a single writer ([`writer`](super::writer)), which owns the socket's
//! write half. Responses go out in the order they finish, tagged with their stream id, as the
//! protocol allows. The number of requests waiting in tasks per connection is bounded
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

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{Semaphore, mpsc};
use tracing::{debug, error, warn};

use crate::frame::{
    Compression, DecoderConfig, ErrorBody, ErrorKind, Frame, FrameDecoder, FrameError,
    FramedDecoder, ProtocolVersion, Request, RequestFrame, Response, ResponseFrame,
    encode_frame_error,
};

use super::CqlServer;
use super::session::Session;
pub(crate) use super::writer::Outgoing;

/// Requests one connection may have in flight (Cassandra's
/// `native_transport_max_requests_per_connection` is unbounded by default; a bound keeps one
/// client from holding all memory).
pub const MAX_IN_FLIGHT_PER_CONNECTION: usize = 256;
/// Encoded responses queued for the writer.
const WRITE_QUEUE: usize = 256;
/// How long the reader answers requests inline before it yields. Until it yields, what it
/// answered waits for the writer on its worker; yielding this often lets the client start on
/// the first answers while the reader goes on, and lets the other worker take the reader.
/// Without it a deep pipeline goes in lock step; 40 us did best of 25, 40, 100, 250 and
/// 500 us with 16 and 64 requests in flight (docs/benchmarks.md, stop 16).
const INLINE_QUOTA: std::time::Duration = std::time::Duration::from_micros(40);
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
pub(crate) async fn serve<R, W>(
    server: Arc<CqlServer>,
    mut read_half: R,
    write_half: W,
    peer: Option<std::net::SocketAddr>,
) where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel::<Outgoing>(WRITE_QUEUE);
    let session = Arc::new(Session::new(tx.clone(), peer));
    let writer = tokio::spawn(super::writer::write_loop(
        rx,
        write_half,
        session.backlog().clone(),
    ));
    let mut inbound = Inbound::Frames(FrameDecoder::new(DecoderConfig {
        max_frame_size_bytes: server.config.max_frame_size_bytes,
        accept_v5: true,
    }));
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT_PER_CONNECTION));
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
    let _connection = server.connections.enter();
    let _client = peer.map(|_| server.clients.enter(session.clone()));
    let mut stopping = server.stopping.subscribe();
    // When the reader started answering requests inline since it last waited or yielded.
    let mut inline_since: Option<tokio::time::Instant> = None;
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
                    let was_ready = session.is_ready();
                    let is_startup = matches!(request.request, Request::Startup(_));
                    if !was_ready || is_startup {
                        // Answered before the next frame is decoded (see the module doc).
                        let response = server.handle(&session, request).await;
                        if send(&tx, &session, response).await.is_err() {
                            break 'read;
                        }
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
                    // A client that does not read its answers gets no more of them started
                    // until the writer has sent some (see `Backlog`).
                    if session.backlog().full() {
                        tokio::select! {
                            _ = session.backlog().room() => {}
                            _ = stopping.changed() => break 'read,
                        }
                    }
                    let mut answer = {
                        let server = server.clone();
                        let session = session.clone();
                        Answer {
                            stream: request.stream,
                            inner: Box::pin(async move { server.handle(&session, request).await }),
                        }
                    };
                    // Polled here once: a request that completes at once (a write to the
                    // periodic commit log, a point read) is answered without a task of its
                    // own (see the module doc). A future that is not ready registers the
                    // waker of each poll, so the task's first poll takes it over.
                    let polled =
                        Pin::new(&mut answer).poll(&mut Context::from_waker(Waker::noop()));
                    if let Poll::Ready(response) = polled {
                        if send(&tx, &session, response).await.is_err() {
                            break 'read;
                        }
                        // Past its quota the reader lets the writer send what is answered
                        // (and the other worker take the reader) before it goes on.
                        let now = tokio::time::Instant::now(); // layering: allowed (a scheduling quota; never reaches data)
                        let since = *inline_since.get_or_insert(now);
                        if now.duration_since(since) >= INLINE_QUOTA {
                            inline_since = None;
                            tokio::task::yield_now().await;
                        }
                        continue;
                    }
                    // A connection with as many requests in flight as it may have stops
                    // reading until one ends: that request is blocked (tpstats).
                    let full = in_flight.available_permits() == 0;
                    if full {
                        server.requests.block();
                    }
                    let permit = in_flight.clone().acquire_owned().await;
                    if full {
                        server.requests.unblock();
                    }
                    let Ok(permit) = permit else {
                        break 'read;
                    };
                    let session = session.clone();
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let response = answer.await;
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
        inline_since = None;
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

/// A request's answer on its way. A panic while it runs (a bug) becomes a ServerError on its
/// stream: the connection and its other requests carry on.
struct Answer<F> {
    stream: i16,
    inner: Pin<Box<F>>,
}

impl<F: Future<Output = ResponseFrame>> Future for Answer<F> {
    type Output = ResponseFrame;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ResponseFrame> {
        let stream = self.stream;
        match catch_unwind(AssertUnwindSafe(|| self.inner.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .copied()
                    .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                    .unwrap_or("a panic");
                error!(stream, message, "a request panicked");
                Poll::Ready(ResponseFrame::new(
                    stream,
                    Response::Error(ErrorBody::new(
                        ErrorKind::ServerError,
                        format!("internal error: the request panicked ({message})"),
                    )),
                ))
            }
        }
    }
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
            Response::Error(ErrorBody::new(
                ErrorKind::ServerError,
                format!("response could not be encoded: {e}"),
            )),
        );
        out.clear();
        if error.encode(version, compression, &mut out).is_err() {
            return Err(());
        }
    }
    // Only the encoded answer waits, and it waits out of the channel while the connection's
    // backlog is over its bound (a client that does not read).
    drop(response);
    session.backlog().room().await;
    let len = out.len();
    session.backlog().add(len);
    let sent = tx.send(Outgoing::Answer(out.freeze())).await;
    if sent.is_err() {
        session.backlog().written(len);
    }
    sent.map_err(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll_once<F: Future<Output = ResponseFrame>>(answer: &mut Answer<F>) -> Poll<ResponseFrame> {
        Pin::new(answer).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_panicking_request_is_a_server_error_on_its_stream() {
        let mut answer = Answer {
            stream: 17,
            inner: Box::pin(async { panic!("boom") }),
        };
        let Poll::Ready(response) = poll_once(&mut answer) else {
            panic!("a panic is an answer at once");
        };
        assert_eq!(response.stream, 17);
        let Response::Error(error) = response.response else {
            panic!("{:?}", response.response);
        };
        assert!(matches!(error.kind, ErrorKind::ServerError), "{error:?}");
        assert!(error.message.contains("boom"), "{}", error.message);
    }

    #[tokio::test]
    async fn a_request_that_waits_finishes_in_the_task_it_moves_to() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let mut answer = Answer {
            stream: 3,
            inner: Box::pin(async move {
                let _ = rx.await;
                ResponseFrame::new(3, Response::Ready)
            }),
        };
        // The first poll (the reader's, with a waker that does nothing) waits ...
        assert!(poll_once(&mut answer).is_pending());
        // ... and the task that takes the answer over is woken when it can go on.
        let task = tokio::spawn(answer);
        tokio::task::yield_now().await;
        tx.send(()).expect("the request waits");
        let response = task.await.expect("the task finishes");
        assert_eq!(response.stream, 3);
        assert!(matches!(response.response, Response::Ready));
    }
}
