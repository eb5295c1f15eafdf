//! The writing side of a connection: one task owns the socket's write half and turns the
//! envelopes the request tasks queue into bytes on the wire.
//!
//! Until a v5 connection's STARTUP is answered, and always on v3/v4 connections, envelopes
//! (frames) go out bare. The reader queues [`Outgoing::StartFraming`] right after the READY of
//! a v5 STARTUP, so READY itself goes out bare and every envelope behind it is wrapped in v5
//! segments (spec v5 §2.3.1). Either way the writer gathers the envelopes already queued (up
//! to [`WRITE_BATCH_BYTES`]) into one write, so that a connection with many requests in flight
//! answers them with few write(2) calls; framed, they share one self-contained segment, and an
//! envelope larger than a segment is split over non-self-contained ones by [`SegmentWriter`].
//! A bare envelope of [`DIRECT_WRITE_BYTES`] or more is written without a copy.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tracing::warn;

use crate::frame::SegmentWriter;

/// The most bytes gathered before they are written.
pub(crate) const WRITE_BATCH_BYTES: usize = 256 * 1024;

/// Unframed envelopes this large are written as they are rather than copied into the batch.
const DIRECT_WRITE_BYTES: usize = 64 * 1024;

/// Answers a connection may have queued and not written before its reader stops taking
/// requests: a client that sends requests and does not read the answers is pushed back on
/// through TCP instead of filling the node's memory with them.
pub(crate) const MAX_BACKLOG_BYTES: usize = 8 << 20;

/// The bytes of a connection's answers queued for its writer and not written yet: the request
/// tasks add what they queue, the writer takes off what it wrote, and the reader waits while
/// there are more than [`MAX_BACKLOG_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    drained: Notify,
    /// The writer has stopped: nothing will drain any more.
    closed: AtomicBool,
}

impl Backlog {
    pub(crate) fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
    }

    /// `n` bytes of answers are written (or dropped).
    pub(crate) fn written(&self, n: usize) {
        if n == 0 {
            return;
        }
        let before = self.bytes.fetch_sub(n, Ordering::AcqRel);
        if before > MAX_BACKLOG_BYTES && before - n <= MAX_BACKLOG_BYTES {
            self.drained.notify_waiters();
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.drained.notify_waiters();
    }

    /// Whether the reader should wait before it takes another request.
    pub(crate) fn full(&self) -> bool {
        self.bytes.load(Ordering::Acquire) > MAX_BACKLOG_BYTES
            && !self.closed.load(Ordering::Acquire)
    }

    /// Until the backlog is back under its bound (or the writer has stopped).
    pub(crate) async fn room(&self) {
        loop {
            let drained = self.drained.notified();
            if !self.full() {
                return;
            }
            drained.await;
        }
    }
}

/// What the writer is told to do, in order.
pub(crate) enum Outgoing {
    /// One whole envelope (a v3/v4 frame or a v5 envelope).
    Envelope(Bytes),
    /// An answer to a request, counted in the connection's [`Backlog`] until written.
    Answer(Bytes),
    /// Wrap every later envelope in v5 segments, LZ4-compressed when `lz4`.
    StartFraming {
        /// Whether STARTUP negotiated `lz4`.
        lz4: bool,
    },
    /// Close after what was queued before.
    Close,
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outgoing::Envelope(b) => write!(f, "Envelope({} bytes)", b.len()),
            Outgoing::Answer(b) => write!(f, "Answer({} bytes)", b.len()),
            Outgoing::StartFraming { lz4 } => write!(f, "StartFraming {{ lz4: {lz4} }}"),
            Outgoing::Close => f.write_str("Close"),
        }
    }
}

/// Writes what `rx` delivers until it says [`Outgoing::Close`], the channel closes or the peer
/// stops reading; then shuts the write half down.
pub(crate) async fn write_loop<W>(
    mut rx: mpsc::Receiver<Outgoing>,
    mut write_half: W,
    backlog: Arc<Backlog>,
) where
    W: AsyncWrite + Unpin,
{
    let mut framing: Option<SegmentWriter> = None;
    let mut out = BytesMut::new();
    // Answers gathered into `out`, counted off the backlog once `out` is written.
    let mut gathered = 0;
    'write: while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        let mut closing = false;
        let mut yielded = false;
        while let Some(item) = next.take() {
            let (envelope, answer) = match item {
                Outgoing::Envelope(envelope) => (Some(envelope), false),
                Outgoing::Answer(envelope) => (Some(envelope), true),
                other => {
                    if let Outgoing::StartFraming { lz4 } = other {
                        framing = Some(SegmentWriter::new(lz4));
                    } else {
                        closing = true;
                        break;
                    }
                    (None, false)
                }
            };
            if let Some(envelope) = envelope {
                let mut counted = if answer { envelope.len() } else { 0 };
                match framing.as_mut() {
                    Some(segments) => {
                        if let Err(e) = segments.push_envelope(&envelope, &mut out) {
                            // SegmentWriter splits what does not fit, so this is a bug.
                            warn!(error = %e, "closing the connection: an envelope could not be framed");
                            break 'write;
                        }
                    }
                    // Unframed: small envelopes are gathered into one write, a large one
                    // goes out without a copy (after what was gathered before it).
                    None if envelope.len() < DIRECT_WRITE_BYTES => out.extend_from_slice(&envelope),
                    None => {
                        if !out.is_empty() {
                            if write_half.write_all(&out).await.is_err() {
                                break 'write;
                            }
                            out.clear();
                            backlog.written(std::mem::take(&mut gathered));
                        }
                        if write_half.write_all(&envelope).await.is_err() {
                            break 'write;
                        }
                        backlog.written(std::mem::take(&mut counted));
                    }
                }
                gathered += counted;
            }
            // Gather what is queued already into the same write (and, framed, the same
            // segments): many requests in flight on a connection answer with one write(2).
            if out.len() < WRITE_BATCH_BYTES {
                next = rx.try_recv().ok();
                if next.is_none() && !yielded {
                    // Nothing more queued yet: let the request tasks that are ready run
                    // first (once), so that their answers share this write. With many
                    // requests in flight on a connection this turns about 2.5 answers per
                    // write(2) into tens; alone on its worker the writer is polled again at
                    // once. Cassandra's native transport consolidates flushes the same way.
                    yielded = true;
                    tokio::task::yield_now().await;
                    next = rx.try_recv().ok();
                }
            }
        }
        if let Some(segments) = framing.as_mut()
            && let Err(e) = segments.flush(&mut out)
        {
            warn!(error = %e, "closing the connection: envelopes could not be framed");
            break;
        }
        if !out.is_empty() {
            if write_half.write_all(&out).await.is_err() {
                break;
            }
            out.clear();
        }
        backlog.written(std::mem::take(&mut gathered));
        if closing {
            break;
        }
    }
    backlog.close();
    let _ = write_half.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_backlog_holds_the_reader_until_answers_are_written() {
        let backlog = Arc::new(Backlog::default());
        backlog.add(MAX_BACKLOG_BYTES);
        assert!(!backlog.full(), "at the bound is not over it");
        backlog.add(1);
        assert!(backlog.full());
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        backlog.written(1);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("room once written")
            .unwrap();
        // A writer that stopped never drains: nobody waits for it.
        backlog.add(2);
        assert!(backlog.full());
        backlog.close();
        assert!(!backlog.full());
        backlog.room().await;
    }
    use crate::frame::{ProtocolVersion, Response, ResponseFrame, ResultBody, SegmentDecoder};
    use tokio::io::AsyncReadExt;

    fn envelope(stream: i16, version: ProtocolVersion, padding: usize) -> Bytes {
        let mut out = BytesMut::new();
        ResponseFrame::new(
            stream,
            Response::Result(ResultBody::SetKeyspace("k".repeat(padding))),
        )
        .encode(version, None, &mut out)
        .expect("encodes");
        out.freeze()
    }

    async fn run(items: Vec<Outgoing>) -> Vec<u8> {
        let (tx, rx) = mpsc::channel(items.len() + 1);
        for item in items {
            tx.send(item).await.expect("queued");
        }
        drop(tx);
        let (client, server) = tokio::io::duplex(1 << 20);
        write_loop(rx, server, Arc::default()).await;
        let mut bytes = Vec::new();
        let mut client = client;
        client.read_to_end(&mut bytes).await.expect("reads");
        bytes
    }

    #[tokio::test]
    async fn the_envelope_before_start_framing_goes_out_bare() {
        let ready = envelope(0, ProtocolVersion::V5, 1);
        let after = envelope(1, ProtocolVersion::V5, 1);
        let bytes = run(vec![
            Outgoing::Envelope(ready.clone()),
            Outgoing::StartFraming { lz4: false },
            Outgoing::Envelope(after.clone()),
        ])
        .await;
        assert_eq!(&bytes[..ready.len()], &ready[..]);
        let mut rest = BytesMut::from(&bytes[ready.len()..]);
        let segment = SegmentDecoder::new(false)
            .decode(&mut rest)
            .expect("valid")
            .expect("whole");
        assert!(segment.self_contained);
        assert_eq!(segment.payload, after);
        assert!(rest.is_empty());
    }

    /// An `AsyncWrite` that counts the writes it is asked for.
    struct CountingWriter {
        bytes: Vec<u8>,
        writes: usize,
    }

    impl AsyncWrite for CountingWriter {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn queued_bare_frames_go_out_in_one_write_in_order() {
        let small: Vec<Bytes> = (0..20)
            .map(|s| envelope(s, ProtocolVersion::V4, 10))
            .collect();
        let mut large = envelope(99, ProtocolVersion::V4, 100).to_vec();
        large.extend(std::iter::repeat_n(0u8, DIRECT_WRITE_BYTES));
        let length = u32::try_from(large.len() - 9).expect("fits");
        large[5..9].copy_from_slice(&length.to_be_bytes());
        let large = Bytes::from(large);
        let (tx, rx) = mpsc::channel(64);
        for e in &small[..10] {
            tx.send(Outgoing::Envelope(e.clone()))
                .await
                .expect("queued");
        }
        tx.send(Outgoing::Envelope(large.clone()))
            .await
            .expect("queued");
        for e in &small[10..] {
            tx.send(Outgoing::Envelope(e.clone()))
                .await
                .expect("queued");
        }
        drop(tx);
        let mut w = CountingWriter {
            bytes: Vec::new(),
            writes: 0,
        };
        write_loop(rx, &mut w, Arc::default()).await;
        let expected = [small[..10].concat(), large.to_vec(), small[10..].concat()].concat();
        assert_eq!(w.bytes, expected);
        // The first ten together, the large frame alone, the last ten together.
        assert_eq!(w.writes, 3);
    }

    #[tokio::test]
    async fn queued_envelopes_share_one_segment() {
        for lz4 in [false, true] {
            let mut items = vec![Outgoing::StartFraming { lz4 }];
            let envelopes: Vec<Bytes> = (0..20)
                .map(|s| envelope(s, ProtocolVersion::V5, 10))
                .collect();
            items.extend(envelopes.iter().cloned().map(Outgoing::Envelope));
            let bytes = run(items).await;
            let mut rest = BytesMut::from(&bytes[..]);
            let segment = SegmentDecoder::new(lz4)
                .decode(&mut rest)
                .expect("valid")
                .expect("whole");
            assert!(rest.is_empty(), "one segment");
            assert_eq!(segment.payload, envelopes.concat());
        }
    }

    #[tokio::test]
    async fn a_large_envelope_is_split_and_reads_back() {
        let big = envelope(7, ProtocolVersion::V5, 60_000);
        let mut large = big.to_vec();
        // Pad the body past two segments (trailing bytes are allowed by the spec).
        large.extend(std::iter::repeat_n(0u8, 300_000));
        let length = u32::try_from(large.len() - 9).expect("fits");
        large[5..9].copy_from_slice(&length.to_be_bytes());
        let bytes = run(vec![
            Outgoing::StartFraming { lz4: true },
            Outgoing::Envelope(envelope(1, ProtocolVersion::V5, 1)),
            Outgoing::Envelope(Bytes::from(large.clone())),
            Outgoing::Envelope(envelope(2, ProtocolVersion::V5, 1)),
        ])
        .await;
        let mut rest = BytesMut::from(&bytes[..]);
        let mut decoder = SegmentDecoder::new(true);
        let mut payload = Vec::new();
        let mut kinds = Vec::new();
        while let Some(segment) = decoder.decode(&mut rest).expect("valid") {
            kinds.push(segment.self_contained);
            payload.extend_from_slice(&segment.payload);
        }
        assert_eq!(kinds, vec![true, false, false, false, true]);
        let expected = [
            &envelope(1, ProtocolVersion::V5, 1)[..],
            &large[..],
            &envelope(2, ProtocolVersion::V5, 1)[..],
        ]
        .concat();
        assert_eq!(payload, expected);
    }
}
