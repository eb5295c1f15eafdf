//! The DynamoDB endpoint's HTTP/1.1 connections: request heads parsed by `httparse`, bodies
//! framed by `Content-Length` or chunked, answers written with one `writev`, keep-alive and
//! pipelining, on a bare socket.
//!
//! Why not hyper, which served the endpoint until stop 21: under GetItem and PutItem load hyper's
//! dispatcher, header maps and body plumbing were 15-20 % of the node's CPU per request, the
//! largest part of it after the kernel's TCP (`docs/benchmarks.md`, DynamoDB, stop 21). The
//! endpoint needs little of HTTP: one request at a time per connection, small JSON bodies, a
//! handful of headers read, five written. ScyllaDB's Alternator answers on Seastar's own HTTP
//! server for the same reason. The admin API stays on axum.
//!
//! What a connection does, in order, for each request:
//!
//! 1. Reads until the head is whole: at most [`MAX_HEAD_BYTES`] and [`MAX_HEADERS`] lines, or
//!    `431`; a head `httparse` rejects gets `400`. Both close the connection. An idle
//!    connection (nothing of a next request read) closes silently after [`IDLE_TIMEOUT`], as a
//!    load balancer closes one, or at once when the server stops.
//! 2. Frames the body: `Transfer-Encoding` whose last coding is `chunked` ([`ChunkedBody`]),
//!    else `Content-Length` (none: no body). Both at once, another transfer coding, or
//!    disagreeing or malformed lengths: `400` and close (RFC 9112 §6.3, against request
//!    smuggling). A body over the endpoint's limit gets DynamoDB's `413
//!    RequestEntityTooLarge`, decided from `Content-Length` before the body is read, or as soon
//!    as a chunked body passes the limit, so no more than the limit is ever buffered; the
//!    connection then closes. `Expect: 100-continue` is answered `100 Continue` before the body
//!    is read.
//!
//!    From the first byte of a request until its head and body are whole, the request has
//!    [`REQUEST_TIMEOUT`] (more for a big body that keeps coming: [`Timeouts`]); past it the
//!    client gets `408` and the connection closes, so a client that sends a request a byte at
//!    a time (slowloris) holds a connection, and its file descriptor, for seconds, not for
//!    ever. When the server stops, a connection whose request is not whole yet is closed at
//!    once, as an idle one is: only requests being answered get the shutdown's grace.
//! 3. Has the endpoint answer it ([`Endpoint::answer`]), to the end: the socket is not read
//!    meanwhile, so a client that goes away cannot cut a write short, and no timeout runs.
//! 4. Writes the answer: status, `Content-Type`, `Content-Length`, `x-amzn-RequestId`,
//!    `x-amz-crc32`, `Content-Encoding` (gzip, when the endpoint compressed the body), `Date`,
//!    `Server`, then the body (none for `HEAD`). HTTP/1.0 requests are kept alive
//!    only when they ask to be; `Connection: close` (or the server stopping) closes after the
//!    answer. A write the client takes nothing of for [`IDLE_TIMEOUT`] (a client that
//!    pipelines requests and reads no answers) ends the connection.
//!
//! A connection the server closes (after an error, `Connection: close` or at stop) is shut for
//! writing and then read and discarded for up to [`LINGER`], so that unread request bytes do
//! not make the kernel reset the connection before the client has read the answer.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderValue;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use crate::http::{Answer, Endpoint};

/// The longest request head (request line and header lines) read.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The most header lines a request may have.
pub const MAX_HEADERS: usize = 100;
/// The longest chunk-size line (extensions included) of a chunked body.
const MAX_CHUNK_LINE: usize = 4 * 1024;
/// The most bytes of trailer lines after a chunked body.
const MAX_TRAILER_BYTES: usize = 64 * 1024;
/// How much the read buffer grows by when it is full.
const READ_RESERVE: usize = 16 * 1024;
/// How long a connection the server closes is read and discarded after its last answer.
pub const LINGER: Duration = Duration::from_secs(2);
/// How long a request may take to arrive, from its first byte until its head and body are
/// whole (plus the allowance of [`REQUEST_MIN_BYTES_PER_SECOND`] for a big body).
///
/// Ten seconds: the AWS SDKs write a request's head, and mostly its body, at once, so a whole
/// request takes a round trip or two; ten seconds still covers a few lost segments resent
/// with the kernel's doubling retransmission timeout (1 + 2 + 4 s). A shorter bound is what
/// limits a slowloris client: holding `n` connections open takes `n` new ones every ten
/// seconds. (Apache's `mod_reqtimeout` has 20 s for a head, nginx 60 s; AWS's load balancers
/// close slow requests too, without saying when.)
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Each this many bytes of a request read while waiting for the rest of it give it one more
/// second than [`REQUEST_TIMEOUT`], so a 16 MB body still arrives over a slow link (32 KiB/s is
/// 256 kbit/s, slower than any broadband uplink), while a client sending slower than that
/// falls behind its deadline and a slowloris one gains nothing. A head (at most
/// [`MAX_HEAD_BYTES`]) earns at most two seconds. Apache's `mod_reqtimeout` extends its
/// timeouts the same way (`MinRate`).
pub const REQUEST_MIN_BYTES_PER_SECOND: u64 = 32 * 1024;
/// How long a keep-alive connection may wait with nothing of a next request read before it is
/// closed (silently, as a load balancer closes one), and how long a write may wait for the
/// client to take any of an answer.
///
/// Sixty seconds: the idle timeout of AWS's load balancers in front of DynamoDB, which the
/// SDKs' connection pools are made for (a pooled connection the server closed is dropped,
/// or the request retried on a new one).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a connection waits on its client: [`Timeouts::DEFAULT`] in a node; tests shorten
/// them. None runs while a request is being answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// From a request's first byte until its head and body are whole ([`REQUEST_TIMEOUT`]).
    pub request: Duration,
    /// Each this many bytes of a request read while waiting for the rest of it extend
    /// `request` by a second ([`REQUEST_MIN_BYTES_PER_SECOND`]).
    pub request_min_bytes_per_second: u64,
    /// Between requests, with nothing of the next one read, and for a write the client takes
    /// nothing of ([`IDLE_TIMEOUT`]).
    pub idle: Duration,
}

impl Timeouts {
    /// The node's timeouts.
    pub const DEFAULT: Timeouts = Timeouts {
        request: REQUEST_TIMEOUT,
        request_min_bytes_per_second: REQUEST_MIN_BYTES_PER_SECOND,
        idle: IDLE_TIMEOUT,
    };

    /// How much longer than `request` a request may take once `bytes` more of it were read.
    fn extension(&self, bytes: u64) -> Duration {
        let rate = u128::from(self.request_min_bytes_per_second.max(1));
        let nanos = u128::from(bytes) * 1_000_000_000 / rate;
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts::DEFAULT
    }
}

/// Where a part of a request head is in its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
}

/// A request's head: its bytes and where its parts are in them (nothing copied).
#[derive(Debug)]
pub struct Head {
    bytes: Bytes,
    method: Span,
    target: Span,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    minor_version: u8,
    headers: Vec<(Span, Span)>,
}

impl Head {
    fn text(&self, span: Span) -> &str {
        std::str::from_utf8(self.slice(span)).unwrap_or("")
    }

    fn slice(&self, span: Span) -> &[u8] {
        self.bytes
            .get(span.start as usize..span.end as usize)
            .unwrap_or_default()
    }

    /// `GET`, `POST`, ...
    pub fn method(&self) -> &str {
        self.text(self.method)
    }

    /// The path as it came on the wire (still percent-encoded), without the query.
    pub fn path(&self) -> &str {
        let target = self.text(self.target);
        target.split_once('?').map_or(target, |(path, _)| path)
    }

    /// The query string as it came on the wire, without `?` (empty when there is none).
    pub fn query(&self) -> &str {
        self.text(self.target)
            .split_once('?')
            .map_or("", |(_, query)| query)
    }

    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub fn minor_version(&self) -> u8 {
        self.minor_version
    }

    /// Where the value of the first header named `name` (in any case) is.
    fn find(&self, name: &str) -> Option<Span> {
        self.named(name).next()
    }

    /// Where the values of the headers named `name` (in any case) are, in order.
    fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = Span> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| self.slice(*n).eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| *v)
    }

    /// The first header named `name` (in any case).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.find(name).map(|v| self.slice(v))
    }

    /// The first header named `name`, if it is UTF-8.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The first header named `name` as an `http` header value sharing the head's bytes.
    pub fn header_value(&self, name: &str) -> Option<HeaderValue> {
        let value = self.find(name)?;
        let bytes = self.bytes.slice(value.start as usize..value.end as usize);
        HeaderValue::from_maybe_shared(bytes).ok()
    }

    /// Every header in the order received, names as sent.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.headers
            .iter()
            .map(|(n, v)| (self.text(*n), self.slice(*v)))
    }

    /// Whether the client lets the connection carry another request.
    fn keep_alive(&self) -> bool {
        let has_token = |token: &[u8]| {
            self.named("connection")
                .flat_map(|v| self.slice(v).split(|b| *b == b','))
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
        };
        if self.minor_version == 0 {
            has_token(b"keep-alive")
        } else {
            !has_token(b"close")
        }
    }

    /// Whether the client waits for `100 Continue` before it sends the body.
    fn expects_continue(&self) -> bool {
        self.minor_version == 1
            && self
                .header("expect")
                .is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"100-continue"))
    }
}

/// What the start of a read buffer holds.
#[derive(Debug)]
pub enum Parsed {
    /// A whole head, taken off the buffer.
    Head(Head),
    /// Not yet a whole head.
    Partial,
    /// Not a head we serve: the status to answer before closing (400 or 431).
    Refused(u16),
}

/// Take a request head off the start of `buffer` if it holds a whole one.
pub fn parse_head(buffer: &mut BytesMut) -> Parsed {
    if buffer.is_empty() {
        return Parsed::Partial;
    }
    // Uninitialised: httparse writes the headers it finds, so a head of a few lines does not
    // pay for clearing a hundred.
    let mut headers =
        [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let length = match request.parse_with_uninit_headers(buffer, &mut headers) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) if buffer.len() > MAX_HEAD_BYTES => {
            return Parsed::Refused(431);
        }
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => return Parsed::Refused(431),
        Err(_) => return Parsed::Refused(400),
    };
    if length > MAX_HEAD_BYTES {
        return Parsed::Refused(431);
    }
    let base = buffer.as_ptr() as usize;
    // Every part httparse hands back is a slice of the buffer's first `length` bytes.
    let span = |part: &[u8]| {
        let start = (part.as_ptr() as usize).wrapping_sub(base);
        let end = start.wrapping_add(part.len());
        if start <= end && end <= length {
            Span {
                start: start as u32,
                end: end as u32,
            }
        } else {
            Span::default()
        }
    };
    let method = span(request.method.unwrap_or("").as_bytes());
    let target = span(request.path.unwrap_or("").as_bytes());
    let minor_version = request.version.unwrap_or(1);
    let headers = request
        .headers
        .iter()
        .map(|h| (span(h.name.as_bytes()), span(h.value)))
        .collect();
    Parsed::Head(Head {
        bytes: buffer.split_to(length).freeze(),
        method,
        target,
        minor_version,
        headers,
    })
}

/// How a request's body is delimited.
#[derive(Debug, PartialEq, Eq)]
pub enum Framing {
    Length(u64),
    Chunked,
    /// Not a framing we accept (answered `400`).
    Bad,
}

/// How `head`'s body is delimited (RFC 9112 §6.3).
pub fn framing(head: &Head) -> Framing {
    let mut length: Option<u64> = None;
    let mut coding: Option<&[u8]> = None;
    for (name, value) in head.headers() {
        if name.eq_ignore_ascii_case("content-length") {
            let value = value.trim_ascii();
            let parsed =
                (!value.is_empty() && value.len() <= 19 && value.iter().all(u8::is_ascii_digit))
                    .then(|| value.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')));
            match (parsed, length) {
                (None, _) => return Framing::Bad,
                (Some(n), Some(m)) if n != m => return Framing::Bad,
                (Some(n), _) => length = Some(n),
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // Several headers are one list: the last coding is the last header's last.
            coding = value.rsplit(|b| *b == b',').next().map(<[u8]>::trim_ascii);
        }
    }
    match (coding, length) {
        (Some(_), Some(_)) => Framing::Bad,
        (Some(c), None) if c.eq_ignore_ascii_case(b"chunked") => Framing::Chunked,
        (Some(_), None) => Framing::Bad,
        (None, n) => Framing::Length(n.unwrap_or(0)),
    }
}

/// Why a chunked body was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum ChunkError {
    /// Not chunked coding as RFC 9112 §7.1 has it (or lines past our bounds).
    Malformed,
    /// More data than the limit.
    TooLarge,
}

/// A chunked body being decoded, fed whatever has been read.
#[derive(Debug, Default)]
pub struct ChunkedBody {
    state: ChunkState,
    trailer_bytes: usize,
}

#[derive(Debug, Default, Clone, Copy)]
enum ChunkState {
    /// At a chunk-size line.
    #[default]
    Size,
    /// In a chunk's data, with this many bytes to come.
    Data(u64),
    /// At the CRLF after a chunk's data.
    DataEnd,
    /// In the trailer section, after the last chunk.
    Trailer,
    Done,
}

impl ChunkedBody {
    /// Decode what `input` holds of the body, moving its data to `out` (no more than `limit`
    /// bytes in all). `Ok(true)`: the body has ended, and `input` holds what follows it.
    /// `Ok(false)`: more input is needed (`input` then holds at most an incomplete line).
    pub fn decode(
        &mut self,
        input: &mut BytesMut,
        out: &mut BytesMut,
        limit: usize,
    ) -> Result<bool, ChunkError> {
        loop {
            match self.state {
                ChunkState::Size => {
                    let Some(end) = line_end(input, MAX_CHUNK_LINE)? else {
                        return Ok(false);
                    };
                    let size = chunk_size(&input[..end])?;
                    input.advance(end + 2);
                    if size == 0 {
                        self.state = ChunkState::Trailer;
                    } else if (out.len() as u64).saturating_add(size) > limit as u64 {
                        return Err(ChunkError::TooLarge);
                    } else {
                        self.state = ChunkState::Data(size);
                    }
                }
                ChunkState::Data(left) => {
                    if input.is_empty() {
                        return Ok(false);
                    }
                    let take = left.min(input.len() as u64) as usize;
                    out.extend_from_slice(&input[..take]);
                    input.advance(take);
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left)
                    };
                }
                ChunkState::DataEnd => {
                    if input.len() < 2 {
                        return Ok(false);
                    }
                    if &input[..2] != b"\r\n" {
                        return Err(ChunkError::Malformed);
                    }
                    input.advance(2);
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let bound = MAX_TRAILER_BYTES - self.trailer_bytes;
                    let Some(end) = line_end(input, bound)? else {
                        return Ok(false);
                    };
                    input.advance(end + 2);
                    if end == 0 {
                        self.state = ChunkState::Done;
                    } else {
                        self.trailer_bytes += end + 2;
                        if self.trailer_bytes > MAX_TRAILER_BYTES {
                            return Err(ChunkError::Malformed);
                        }
                    }
                }
                ChunkState::Done => return Ok(true),
            }
        }
    }
}

/// Where the line at the start of `input` ends (the index of its CR), when its CRLF has come;
/// a line longer than `max` is malformed.
fn line_end(input: &[u8], max: usize) -> Result<Option<usize>, ChunkError> {
    let window = &input[..input.len().min(max.saturating_add(2))];
    match window.windows(2).position(|w| w == b"\r\n") {
        Some(end) => Ok(Some(end)),
        None if input.len() > max.saturating_add(1) => Err(ChunkError::Malformed),
        None => Ok(None),
    }
}

/// The size on a chunk-size line: hex digits, then optional whitespace and `;` extensions.
fn chunk_size(line: &[u8]) -> Result<u64, ChunkError> {
    let digits = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    if digits == 0 || digits > 15 {
        return Err(ChunkError::Malformed);
    }
    let rest = line[digits..].trim_ascii_start();
    if !(rest.is_empty() || rest[0] == b';') {
        return Err(ChunkError::Malformed);
    }
    let hex = std::str::from_utf8(&line[..digits]).map_err(|_| ChunkError::Malformed)?;
    u64::from_str_radix(hex, 16).map_err(|_| ChunkError::Malformed)
}

/// Serve HTTP/1.1 requests on `stream` until the client closes it, a request closes it, it
/// times out ([`Endpoint::timeouts`]), or `closing` turns true while no whole request is
/// being answered. An error is the socket's.
pub async fn serve<S>(
    stream: S,
    endpoint: Arc<Endpoint>,
    mut closing: watch::Receiver<bool>,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut connection = Connection {
        stream,
        input: BytesMut::with_capacity(READ_RESERVE),
        head: Vec::with_capacity(512),
        date: (u32::MAX, String::new()),
        timeouts: endpoint.timeouts(),
    };
    loop {
        // Set when the connection first waits for more of this request.
        let mut receiving: Option<Receiving> = None;
        let head = loop {
            match parse_head(&mut connection.input) {
                Parsed::Head(head) => break head,
                Parsed::Refused(status) => return connection.refuse(status).await,
                Parsed::Partial if connection.input.is_empty() => {
                    // Idle: the next request, the idle timeout or the server stopping.
                    match connection.wait_idle(&mut closing).await? {
                        Wait::Read => {}
                        Wait::Closed | Wait::Stopping | Wait::TimedOut => return Ok(()),
                    }
                }
                Parsed::Partial => match connection.receive(&mut receiving, &mut closing).await? {
                    Wait::Read => {}
                    Wait::Closed | Wait::Stopping => return Ok(()),
                    Wait::TimedOut => return connection.refuse(408).await,
                },
            }
        };
        let limit = endpoint.max_request_size();
        let body = match framing(&head) {
            Framing::Bad => return connection.refuse(400).await,
            Framing::Length(n) if n > limit as u64 => {
                let answer = endpoint.too_large(&head);
                return connection.answer_and_close(&head, &endpoint, answer).await;
            }
            Framing::Length(n) => {
                let n = n as usize;
                if connection.input.len() < n && head.expects_continue() {
                    connection
                        .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                        .await?;
                }
                while connection.input.len() < n {
                    connection.input.reserve(n - connection.input.len());
                    match connection.receive(&mut receiving, &mut closing).await? {
                        Wait::Read => {}
                        Wait::Closed | Wait::Stopping => return Ok(()),
                        Wait::TimedOut => return connection.refuse(408).await,
                    }
                }
                connection.input.split_to(n).freeze()
            }
            Framing::Chunked => {
                let mut decoder = ChunkedBody::default();
                let mut body = BytesMut::new();
                let mut continued = false;
                loop {
                    match decoder.decode(&mut connection.input, &mut body, limit) {
                        Ok(true) => break,
                        Ok(false) => {
                            if !continued && head.expects_continue() {
                                continued = true;
                                connection
                                    .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                                    .await?;
                            }
                            match connection.receive(&mut receiving, &mut closing).await? {
                                Wait::Read => {}
                                Wait::Closed | Wait::Stopping => return Ok(()),
                                Wait::TimedOut => return connection.refuse(408).await,
                            }
                        }
                        Err(ChunkError::Malformed) => return connection.refuse(400).await,
                        Err(ChunkError::TooLarge) => {
                            let answer = endpoint.too_large(&head);
                            return connection.answer_and_close(&head, &endpoint, answer).await;
                        }
                    }
                }
                body.freeze()
            }
        };
        // The request is whole: it runs to its end, whatever the timeouts or the server
        // stopping meanwhile.
        drop(receiving);
        let answer = endpoint.answer(&head, body).await;
        let keep_alive = head.keep_alive() && !*closing.borrow();
        if !keep_alive {
            return connection.answer_and_close(&head, &endpoint, answer).await;
        }
        connection
            .write_answer(&head, &endpoint, &answer, true)
            .await?;
    }
}

/// What waiting for more of the client's bytes came to.
#[derive(Debug, PartialEq, Eq)]
enum Wait {
    /// Bytes were read into the input buffer.
    Read,
    /// The client closed the connection.
    Closed,
    /// The server is stopping.
    Stopping,
    /// The timeout passed first.
    TimedOut,
}

/// The deadline of a request being received.
struct Receiving {
    timer: Pin<Box<Sleep>>,
    /// The deadline it was first given ([`Timeouts::request`] from then).
    first: Instant,
    /// The bytes read since.
    read: u64,
}

/// One connection's socket and buffers.
struct Connection<S> {
    stream: S,
    /// What has been read and not yet taken.
    input: BytesMut,
    /// An answer's head being written.
    head: Vec<u8>,
    /// The `Date` value of the second last written.
    date: (u32, String),
    timeouts: Timeouts,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// Read what the socket has into the input buffer; 0 when the client has closed.
    async fn read_more(&mut self) -> io::Result<usize> {
        if self.input.capacity() - self.input.len() < 1024 {
            self.input.reserve(READ_RESERVE);
        }
        self.stream.read_buf(&mut self.input).await
    }

    /// Wait for the first bytes of a next request, for [`Timeouts::idle`] at most.
    async fn wait_idle(&mut self, closing: &mut watch::Receiver<bool>) -> io::Result<Wait> {
        if *closing.borrow_and_update() {
            return Ok(Wait::Stopping);
        }
        let idle = self.timeouts.idle;
        tokio::select! {
            biased;
            read = tokio::time::timeout(idle, self.read_more()) => match read {
                Ok(read) => Ok(if read? == 0 { Wait::Closed } else { Wait::Read }),
                Err(_) => Ok(Wait::TimedOut),
            },
            _ = closing.changed() => Ok(Wait::Stopping),
        }
    }

    /// Wait for more of a request whose first bytes have come, until the request's deadline
    /// (set on the first wait, extended by what each read brings).
    async fn receive(
        &mut self,
        receiving: &mut Option<Receiving>,
        closing: &mut watch::Receiver<bool>,
    ) -> io::Result<Wait> {
        if *closing.borrow_and_update() {
            return Ok(Wait::Stopping);
        }
        let timeouts = self.timeouts;
        let receiving = receiving.get_or_insert_with(|| {
            let timer = Box::pin(tokio::time::sleep(timeouts.request));
            Receiving {
                first: timer.deadline(),
                timer,
                read: 0,
            }
        });
        let read = tokio::select! {
            biased;
            read = self.read_more() => read?,
            _ = closing.changed() => return Ok(Wait::Stopping),
            () = &mut receiving.timer => return Ok(Wait::TimedOut),
        };
        if read == 0 {
            return Ok(Wait::Closed);
        }
        receiving.read += read as u64;
        if let Some(deadline) = receiving
            .first
            .checked_add(timeouts.extension(receiving.read))
        {
            receiving.timer.as_mut().reset(deadline);
        }
        Ok(Wait::Read)
    }

    /// Write all of `bytes`, unless the client takes none of them for [`Timeouts::idle`].
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match tokio::time::timeout(self.timeouts.idle, self.stream.write_all(bytes)).await {
            Ok(written) => written,
            Err(_) => Err(io::ErrorKind::TimedOut.into()),
        }
    }

    /// Answer `status` with no body, then close.
    async fn refuse(&mut self, status: u16) -> io::Result<()> {
        let reason = reason(status);
        let answer = format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nserver: Server\r\nconnection: close\r\n\r\n"
        );
        self.write_all(answer.as_bytes()).await?;
        self.linger().await;
        Ok(())
    }

    async fn answer_and_close(
        &mut self,
        head: &Head,
        endpoint: &Endpoint,
        answer: Answer,
    ) -> io::Result<()> {
        self.write_answer(head, endpoint, &answer, false).await?;
        self.linger().await;
        Ok(())
    }

    /// Write `answer`'s head and body in one `writev` (more if the socket takes less).
    async fn write_answer(
        &mut self,
        request: &Head,
        endpoint: &Endpoint,
        answer: &Answer,
        keep_alive: bool,
    ) -> io::Result<()> {
        let now = endpoint.now_seconds();
        if self.date.0 != now {
            self.date = (
                now,
                httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(u64::from(now))),
            );
        }
        let head = &mut self.head;
        head.clear();
        head.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(head, u64::from(answer.status));
        head.push(b' ');
        head.extend_from_slice(reason(answer.status).as_bytes());
        head.extend_from_slice(b"\r\ncontent-type: ");
        head.extend_from_slice(answer.content_type.as_bytes());
        head.extend_from_slice(b"\r\ncontent-length: ");
        push_decimal(head, answer.body.len() as u64);
        head.extend_from_slice(b"\r\nx-amzn-requestid: ");
        head.extend_from_slice(&answer.request_id);
        head.extend_from_slice(b"\r\nx-amz-crc32: ");
        push_decimal(head, u64::from(crc32fast::hash(&answer.body)));
        if answer.gzipped {
            head.extend_from_slice(b"\r\ncontent-encoding: gzip");
        }
        head.extend_from_slice(b"\r\ndate: ");
        head.extend_from_slice(self.date.1.as_bytes());
        // DynamoDB names itself so.
        head.extend_from_slice(b"\r\nserver: Server\r\n");
        if !keep_alive {
            self.head.extend_from_slice(b"connection: close\r\n");
        } else if request.minor_version == 0 {
            self.head.extend_from_slice(b"connection: keep-alive\r\n");
        }
        self.head.extend_from_slice(b"\r\n");
        let body: &[u8] = if request.method() == "HEAD" {
            &[]
        } else {
            &answer.body
        };
        let (mut first, mut second) = (&self.head[..], body);
        while !first.is_empty() || !second.is_empty() {
            let slices = [IoSlice::new(first), IoSlice::new(second)];
            let write = self.stream.write_vectored(&slices);
            let n = match tokio::time::timeout(self.timeouts.idle, write).await {
                Ok(written) => written?,
                Err(_) => return Err(io::ErrorKind::TimedOut.into()),
            };
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            if n < first.len() {
                first = &first[n..];
            } else {
                second = &second[n - first.len()..];
                first = &[];
            }
        }
        Ok(())
    }

    /// Shut the socket for writing, then read and drop what the client still sends, until it
    /// closes or for [`LINGER`] at most.
    async fn linger(&mut self) {
        let _ = self.stream.shutdown().await;
        let mut sink = [0u8; 8 * 1024];
        let _ = tokio::time::timeout(LINGER, async {
            while let Ok(1..) = self.stream.read(&mut sink).await {}
        })
        .await;
    }
}

/// Append `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The reason phrase of `status`.
fn reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(text: &[u8]) -> Head {
        match parse_head(&mut BytesMut::from(text)) {
            Parsed::Head(head) => head,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_head_is_taken_off_the_buffer_with_its_parts() {
        let mut buffer = BytesMut::from(
            &b"POST /a/b?x=1&y HTTP/1.1\r\nHost: h:8000\r\nX-Amz-Target: T.Op\r\nEmpty:\r\n\r\n{}rest"[..],
        );
        let Parsed::Head(head) = parse_head(&mut buffer) else {
            panic!("a whole head")
        };
        assert_eq!(&buffer[..], b"{}rest");
        assert_eq!(head.method(), "POST");
        assert_eq!(head.path(), "/a/b");
        assert_eq!(head.query(), "x=1&y");
        assert_eq!(head.minor_version(), 1);
        assert_eq!(head.header_str("host"), Some("h:8000"));
        assert_eq!(head.header_str("x-amz-target"), Some("T.Op"));
        assert_eq!(head.header("empty"), Some(&b""[..]));
        assert_eq!(head.header("absent"), None);
        assert_eq!(head.header_value("HOST").unwrap(), "h:8000");
        assert_eq!(head.headers().count(), 3);
        assert!(head.keep_alive());
    }

    #[test]
    fn partial_oversized_and_garbage_heads() {
        let mut partial = BytesMut::from(&b"POST / HTTP/1.1\r\nHost: a\r\n"[..]);
        assert!(matches!(parse_head(&mut partial), Parsed::Partial));
        assert_eq!(partial.len(), 26, "nothing taken");
        let mut long = BytesMut::from(&b"POST / HTTP/1.1\r\nX: "[..]);
        long.extend_from_slice(&vec![b'a'; MAX_HEAD_BYTES]);
        assert!(matches!(parse_head(&mut long), Parsed::Refused(431)));
        let mut many = BytesMut::from(&b"POST / HTTP/1.1\r\n"[..]);
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("h{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert!(matches!(parse_head(&mut many), Parsed::Refused(431)));
        let mut garbage = BytesMut::from(&b"\x00\x01\x02\r\n\r\n"[..]);
        assert!(matches!(parse_head(&mut garbage), Parsed::Refused(400)));
    }

    #[test]
    fn bytes_received_extend_a_request_by_the_minimum_rate() {
        let timeouts = Timeouts::DEFAULT;
        assert_eq!(timeouts.extension(0), Duration::ZERO);
        assert_eq!(
            timeouts.extension(REQUEST_MIN_BYTES_PER_SECOND / 2),
            Duration::from_millis(500)
        );
        // The largest body DynamoDB takes, at the minimum rate: 8 minutes 32 s more.
        assert_eq!(
            timeouts.extension(16 * 1024 * 1024),
            Duration::from_secs(512)
        );
        assert!(timeouts.extension(u64::MAX) > Duration::from_secs(1 << 30));
        let never = Timeouts {
            request_min_bytes_per_second: 0,
            ..Timeouts::DEFAULT
        };
        assert_eq!(never.extension(3), Duration::from_secs(3));
    }

    #[test]
    fn decimals() {
        for n in [0, 7, 10, 413, 4_294_967_295, u64::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
        }
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_tokens() {
        assert!(!head_of(b"GET / HTTP/1.1\r\nConnection: x, Close\r\n\r\n").keep_alive());
        assert!(!head_of(b"GET / HTTP/1.0\r\n\r\n").keep_alive());
        assert!(head_of(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive());
        assert!(head_of(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n").expects_continue());
        assert!(!head_of(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").expects_continue());
    }

    #[test]
    fn framing_refuses_what_could_smuggle_a_request() {
        let f = |text: &[u8]| framing(&head_of(text));
        assert_eq!(f(b"POST / HTTP/1.1\r\n\r\n"), Framing::Length(0));
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n"),
            Framing::Length(12)
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n"),
            Framing::Length(2)
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
            Framing::Bad
        );
        for bad in ["-5", "", "+1", "1,1", "0x10", "99999999999999999999"] {
            let text = format!("POST / HTTP/1.1\r\nContent-Length: {bad}\r\n\r\n");
            assert_eq!(f(text.as_bytes()), Framing::Bad, "{bad:?}");
        }
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"),
            Framing::Chunked
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
            Framing::Bad
        );
        assert_eq!(
            f(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"),
            Framing::Bad
        );
    }

    fn decode_all(input: &[u8], limit: usize) -> Result<(Vec<u8>, Vec<u8>), ChunkError> {
        let mut decoder = ChunkedBody::default();
        let mut input = BytesMut::from(input);
        let mut out = BytesMut::new();
        if decoder.decode(&mut input, &mut out, limit)? {
            Ok((out.to_vec(), input.to_vec()))
        } else {
            Err(ChunkError::Malformed)
        }
    }

    #[test]
    fn chunked_bodies() {
        let (body, rest) = decode_all(
            b"3\r\nabc\r\n2;ext=1\r\nde\r\nA \r\n0123456789\r\n0\r\nT: x\r\n\r\nNEXT",
            100,
        )
        .unwrap();
        assert_eq!(body, b"abcde0123456789");
        assert_eq!(rest, b"NEXT");
        assert_eq!(
            decode_all(b"3\r\nabc\r\n0\r\n\r\n", 2),
            Err(ChunkError::TooLarge)
        );
        for bad in [
            &b"x\r\n"[..],
            b"3\r\nabcX\r\n",
            b"\r\n",
            b"1000000000000000\r\n",
            b"3 x\r\nabc\r\n",
        ] {
            assert_eq!(decode_all(bad, 100), Err(ChunkError::Malformed), "{bad:?}");
        }
        let mut long = vec![b'1'; 1];
        long.extend_from_slice(&vec![b' '; MAX_CHUNK_LINE + 8]);
        assert_eq!(decode_all(&long, 100), Err(ChunkError::Malformed));
    }

    proptest::proptest! {
        /// Fed in any pieces, a chunked body decodes as it does whole.
        #[test]
        fn chunked_bodies_decode_the_same_in_any_pieces(
            chunks in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 1..40), 0..6),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut wire = Vec::new();
            let mut expected = Vec::new();
            for c in &chunks {
                wire.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
                wire.extend_from_slice(c);
                wire.extend_from_slice(b"\r\n");
                expected.extend_from_slice(c);
            }
            wire.extend_from_slice(b"0\r\n\r\nafter");
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (wire.len() + 1)).collect();
            cuts.sort_unstable();
            cuts.push(wire.len());
            let mut decoder = ChunkedBody::default();
            let mut input = BytesMut::new();
            let mut out = BytesMut::new();
            let mut fed = 0;
            let mut done = false;
            for cut in cuts {
                input.extend_from_slice(&wire[fed..cut]);
                fed = cut;
                done = decoder.decode(&mut input, &mut out, 1 << 20).unwrap();
                if done {
                    break;
                }
            }
            proptest::prop_assert!(done);
            input.extend_from_slice(&wire[fed..]);
            proptest::prop_assert_eq!(&out[..], &expected[..]);
            proptest::prop_assert_eq!(&input[..], b"after");
        }

        /// Whatever bytes come, parsing a head and decoding a body answer without panicking.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let mut buffer = BytesMut::from(&bytes[..]);
            if let Parsed::Head(head) = parse_head(&mut buffer) {
                let _ = framing(&head);
                let _ = (head.keep_alive(), head.path(), head.query(), head.header_value("host"));
            }
            let _ = ChunkedBody::default().decode(&mut BytesMut::from(&bytes[..]), &mut BytesMut::new(), 1000);
        }
    }
}
