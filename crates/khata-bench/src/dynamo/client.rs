//! A DynamoDB JSON client for the benchmark: signed `POST /` requests over a fixed pool of
//! HTTP/1.1 keep-alive connections, one request at a time on each (HTTP/1.1 without
//! pipelining, as the AWS SDKs use it).
//!
//! At most `connections` connections are open; a request takes an idle one (or opens one when
//! fewer are open), gives it back when the answer is read, and drops it if it failed or the
//! server asked to close it. The number opened over a run is counted, so a report shows that
//! connections were kept alive (a server that closes idle connections, as dynalite does after
//! 5 s, costs a reconnect: a request whose reused connection turns out closed before any of the
//! answer arrived is sent once more on a new one, as HTTP clients do).
//!
//! The client is written on a bare [`TcpStream`]: the task that makes a request writes it (one
//! `write` of the head and body) and reads its answer itself (one `read`, when the answer fits
//! the buffer), parsing the head with `httparse`. hyper's client connection, used before,
//! runs each connection in a task of its own, hands every request and answer across a channel
//! and builds a header map both ways; measured under GetItem load on the two cores the server
//! shares with it, it cost about as much CPU per request as the server it measured, which
//! says less about the server than a load generator should (`docs/benchmarks.md`, stop 19).
//! Answers may come with `Content-Length`, chunked, or (when neither) up to the connection's
//! end.
//!
//! An answer other than 200 is an error that names the operation, DynamoDB's error type (the
//! part of `__type` after `#`) and its message, as `PutItem failed: ValidationException (400):
//! ...`, so a target that does not implement an operation says so plainly.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use super::sigv4::{Signer, SigningTime};

/// The content type of DynamoDB's JSON protocol (version 1.0).
const CONTENT_TYPE: &str = "application/x-amz-json-1.0";
/// The target prefix of DynamoDB's operations.
const TARGET_PREFIX: &str = "DynamoDB_20120810.";
/// Dummy credentials: dynalite ignores them, khata checks them only when keys are configured.
const ACCESS_KEY_ID: &str = "AKIDKHATABENCH";
const SECRET_ACCESS_KEY: &str = "khata-bench-dummy-secret-access-key";
/// The most header lines an answer may have.
const MAX_HEADERS: usize = 64;
/// The longest answer head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// How much the answer buffer grows by per read.
const READ_CHUNK: usize = 16 * 1024;

/// A pool of keep-alive connections to one DynamoDB endpoint.
#[derive(Debug)]
pub struct Client {
    address: SocketAddr,
    host: String,
    signer: Signer,
    idle: Mutex<Vec<Connection>>,
    /// One permit per connection: a request holds one from taking a connection to returning it.
    permits: Semaphore,
    opened: AtomicU64,
}

/// One keep-alive connection with its buffers (kept across requests).
#[derive(Debug)]
struct Connection {
    stream: TcpStream,
    /// The request being sent: head and body.
    request: Vec<u8>,
    /// The answer being read.
    answer: Vec<u8>,
}

/// An answer read whole.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: u16,
    reason: String,
    body: Bytes,
    /// Whether the connection may carry another request.
    keep_alive: bool,
}

/// Why an exchange failed.
#[derive(Debug)]
enum ExchangeError {
    /// The connection was closed (or reset) before any of the answer arrived: the request may
    /// be sent again on a new connection if this one had been used before.
    ClosedBeforeAnswer(String),
    /// Anything else.
    Failed(String),
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::ClosedBeforeAnswer(e) | ExchangeError::Failed(e) => f.write_str(e),
        }
    }
}

impl Client {
    /// A client of `address` with at most `connections` connections, signing for `region`.
    pub fn new(address: SocketAddr, connections: usize, region: &str) -> Client {
        Client {
            address,
            host: address.to_string(),
            signer: Signer::new(ACCESS_KEY_ID, SECRET_ACCESS_KEY, region, "dynamodb"),
            idle: Mutex::new(Vec::with_capacity(connections)),
            permits: Semaphore::new(connections.max(1)),
            opened: AtomicU64::new(0),
        }
    }

    /// Connections opened so far.
    pub fn connections_opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// Sends `operation` (e.g. `PutItem`) with a JSON `body`; the answer's body if it was 200.
    pub async fn call(&self, operation: &str, body: String) -> Result<Bytes, String> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| "the connection pool is closed".to_string())?;
        let fail = |e: String| format!("{operation} failed: {e}");
        let (mut connection, reused) = match self.take_idle() {
            Some(connection) => (connection, true),
            None => (self.connect().await.map_err(fail)?, false),
        };
        self.write_request(&mut connection.request, operation, body.as_bytes());
        let answer = match connection.exchange().await {
            Ok(answer) => answer,
            Err(ExchangeError::ClosedBeforeAnswer(_)) if reused => {
                // The server closed the idle connection: once more on a new one.
                let mut fresh = self.connect().await.map_err(fail)?;
                std::mem::swap(&mut fresh.request, &mut connection.request);
                connection = fresh;
                connection
                    .exchange()
                    .await
                    .map_err(|e| fail(e.to_string()))?
            }
            Err(e) => return Err(fail(e.to_string())),
        };
        if answer.keep_alive {
            self.idle
                .lock()
                .expect("idle connections lock")
                .push(connection);
        }
        if answer.status == 200 {
            Ok(answer.body)
        } else {
            Err(fail(describe_error(
                answer.status,
                &answer.reason,
                &answer.body,
            )))
        }
    }

    fn take_idle(&self) -> Option<Connection> {
        self.idle.lock().expect("idle connections lock").pop()
    }

    async fn connect(&self) -> Result<Connection, String> {
        let stream = TcpStream::connect(self.address)
            .await
            .map_err(|e| format!("connecting to {}: {e}", self.address))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("TCP_NODELAY: {e}"))?;
        self.opened.fetch_add(1, Ordering::Relaxed);
        Ok(Connection {
            stream,
            request: Vec::with_capacity(1024),
            answer: Vec::with_capacity(READ_CHUNK),
        })
    }

    /// The signed request for `operation` with `body`, head and body, into `out`.
    fn write_request(&self, out: &mut Vec<u8>, operation: &str, body: &[u8]) {
        let mut target = String::with_capacity(TARGET_PREFIX.len() + operation.len());
        target.push_str(TARGET_PREFIX);
        target.push_str(operation);
        let time = SigningTime::now();
        let length = body.len().to_string();
        // Sorted by name, as the canonical request wants them.
        let signed = [
            ("content-length", length.as_str()),
            ("content-type", CONTENT_TYPE),
            ("host", self.host.as_str()),
            ("x-amz-date", time.amz_date.as_str()),
            ("x-amz-target", target.as_str()),
        ];
        let authorization = self.signer.authorization("POST", "/", &signed, body, &time);
        out.clear();
        out.extend_from_slice(b"POST / HTTP/1.1\r\n");
        for (name, value) in signed {
            push_header(out, name, value);
        }
        push_header(out, "authorization", &authorization);
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }
}

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

impl Connection {
    /// Sends the request in `self.request` and reads its answer.
    async fn exchange(&mut self) -> Result<Answer, ExchangeError> {
        if let Err(e) = self.stream.write_all(&self.request).await {
            return Err(match e.kind() {
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset => {
                    ExchangeError::ClosedBeforeAnswer(format!("sending the request: {e}"))
                }
                _ => ExchangeError::Failed(format!("sending the request: {e}")),
            });
        }
        self.answer.clear();
        loop {
            match parse_answer(&self.answer, false).map_err(ExchangeError::Failed)? {
                Parsed::Complete(answer) => return Ok(answer),
                Parsed::Partial => {}
            }
            self.answer.reserve(READ_CHUNK);
            let read = match self.stream.read_buf(&mut self.answer).await {
                Ok(read) => read,
                Err(e) if self.answer.is_empty() && e.kind() == ErrorKind::ConnectionReset => {
                    return Err(ExchangeError::ClosedBeforeAnswer(format!(
                        "reading the answer: {e}"
                    )));
                }
                Err(e) => return Err(ExchangeError::Failed(format!("reading the answer: {e}"))),
            };
            if read == 0 {
                if self.answer.is_empty() {
                    return Err(ExchangeError::ClosedBeforeAnswer(
                        "the server closed the connection before answering".into(),
                    ));
                }
                // An answer delimited by the connection's end is complete now.
                return match parse_answer(&self.answer, true).map_err(ExchangeError::Failed)? {
                    Parsed::Complete(answer) => Ok(answer),
                    Parsed::Partial => Err(ExchangeError::Failed(
                        "the server closed the connection in the middle of an answer".into(),
                    )),
                };
            }
        }
    }
}

/// What [`parse_answer`] made of the bytes read so far.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    Partial,
    Complete(Answer),
}

/// Parses an HTTP/1.1 answer from `buffer`; `at_end` says the connection has ended (an answer
/// with neither a length nor chunks ends there).
fn parse_answer(buffer: &[u8], at_end: bool) -> Result<Parsed, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(buffer) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) if buffer.len() > MAX_HEAD => {
            return Err(format!("an answer head over {MAX_HEAD} bytes"));
        }
        Ok(httparse::Status::Partial) => return Ok(Parsed::Partial),
        Err(e) => return Err(format!("a malformed answer: {e}")),
    };
    let status = response.code.unwrap_or(0);
    let reason = response.reason.unwrap_or("").to_string();
    let mut length = None;
    let mut chunked = false;
    let mut keep_alive = response.version == Some(1);
    for header in response.headers.iter() {
        let value = std::str::from_utf8(header.value).unwrap_or("").trim();
        if header.name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| format!("a bad Content-Length: {value:?}"))?,
            );
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
        } else if header.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    let rest = &buffer[head..];
    let (body, used) = if chunked {
        match dechunk(rest)? {
            Some(decoded) => decoded,
            None => return Ok(Parsed::Partial),
        }
    } else if let Some(length) = length {
        if rest.len() < length {
            return Ok(Parsed::Partial);
        }
        (Bytes::copy_from_slice(&rest[..length]), length)
    } else if status == 204 || status == 304 || (100..200).contains(&status) {
        (Bytes::new(), 0)
    } else if at_end {
        keep_alive = false;
        (Bytes::copy_from_slice(rest), rest.len())
    } else {
        return Ok(Parsed::Partial);
    };
    if used != rest.len() {
        return Err(format!(
            "{} bytes after the answer, with one request in flight",
            rest.len() - used
        ));
    }
    Ok(Parsed::Complete(Answer {
        status,
        reason,
        body,
        keep_alive,
    }))
}

/// Decodes a chunked body at the start of `bytes`: the body and the bytes it took, or `None`
/// while it is incomplete. Chunk extensions and trailers are read and ignored.
fn dechunk(bytes: &[u8]) -> Result<Option<(Bytes, usize)>, String> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(line_end) = find_crlf(&bytes[at..]) else {
            return Ok(None);
        };
        let line = std::str::from_utf8(&bytes[at..at + line_end])
            .map_err(|_| "a chunk size that is not text".to_string())?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("a bad chunk size: {size_text:?}"))?;
        at += line_end + 2;
        if size == 0 {
            // Trailers, each a line, then an empty line.
            loop {
                let Some(end) = find_crlf(&bytes[at..]) else {
                    return Ok(None);
                };
                at += end + 2;
                if end == 0 {
                    return Ok(Some((Bytes::from(body), at)));
                }
            }
        }
        if bytes.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&bytes[at..at + size]);
        if &bytes[at + size..at + size + 2] != b"\r\n" {
            return Err("a chunk not followed by CRLF".into());
        }
        at += size + 2;
    }
}

fn find_crlf(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == b"\r\n")
}

/// `Type (status): message` from a DynamoDB error answer (`{"__type": "...#Type", "message":
/// ...}`), or the status and the start of the body when it is not one.
fn describe_error(status: u16, reason: &str, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        #[serde(rename = "__type")]
        kind: Option<String>,
        #[serde(alias = "Message")]
        message: Option<String>,
    }
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody {
            kind: Some(kind),
            message,
        }) => {
            let short = kind.rsplit('#').next().unwrap_or(&kind);
            format!(
                "{short} ({status}): {}",
                message.as_deref().unwrap_or("(no message)")
            )
        }
        _ => {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
            format!("HTTP {status} {reason}: {}", text.trim())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_type_and_message() {
        let body = br#"{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"One or more parameter values were invalid"}"#;
        assert_eq!(
            describe_error(400, "Bad Request", body),
            "ValidationException (400): One or more parameter values were invalid"
        );
        assert_eq!(
            describe_error(404, "Not Found", b"no such thing"),
            "HTTP 404 Not Found: no such thing"
        );
    }

    fn complete(bytes: &[u8], at_end: bool) -> Answer {
        match parse_answer(bytes, at_end) {
            Ok(Parsed::Complete(answer)) => answer,
            other => panic!("{other:?} from {:?}", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn answers_with_a_length_are_complete_at_their_length() {
        let whole = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nx-amz-crc32: 1\r\n\r\n{}";
        for cut in 0..whole.len() {
            assert_eq!(parse_answer(&whole[..cut], false), Ok(Parsed::Partial));
        }
        let answer = complete(whole, false);
        assert_eq!((answer.status, &answer.body[..]), (200, &b"{}"[..]));
        assert!(answer.keep_alive);
        let closing = complete(
            b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            false,
        );
        assert_eq!((closing.status, closing.keep_alive), (400, false));
        let old = complete(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false);
        assert!(!old.keep_alive);
        assert!(parse_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab", false).is_err());
        assert!(parse_answer(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false).is_err());
        assert!(parse_answer(b"garbage\r\n\r\n", false).is_err());
    }

    #[test]
    fn chunked_answers_are_decoded() {
        let whole = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\n{\"a\r\n3\r\n\":1\r\n1\r\n}\r\n0\r\nTrailer: t\r\n\r\n";
        for cut in 0..whole.len() {
            assert_eq!(parse_answer(&whole[..cut], false), Ok(Parsed::Partial));
        }
        assert_eq!(&complete(whole, false).body[..], b"{\"a\":1}");
        assert!(
            parse_answer(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                false
            )
            .is_err()
        );
    }

    #[test]
    fn answers_without_a_length_end_with_the_connection() {
        let bytes = b"HTTP/1.1 200 OK\r\n\r\n{\"x\":1}";
        assert_eq!(parse_answer(bytes, false), Ok(Parsed::Partial));
        let answer = complete(bytes, true);
        assert_eq!(&answer.body[..], b"{\"x\":1}");
        assert!(!answer.keep_alive);
    }

    /// A server that answers each request on a connection with `{"n":<count>}`, reading the
    /// request by its Content-Length, and closes every connection after `per_connection`
    /// answers without saying so (as a server closing idle connections does).
    async fn serve(per_connection: usize) -> (SocketAddr, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let handle = tokio::spawn(async move {
            let mut count = 0u64;
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut buffer = Vec::new();
                for _ in 0..per_connection {
                    let request = loop {
                        let mut headers = [httparse::EMPTY_HEADER; 16];
                        let mut request = httparse::Request::new(&mut headers);
                        if let Ok(httparse::Status::Complete(head)) = request.parse(&buffer) {
                            let length: usize = request
                                .headers
                                .iter()
                                .find(|h| h.name == "content-length")
                                .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                                .unwrap();
                            assert!(request.headers.iter().any(|h| h.name == "authorization"
                                && h.value.starts_with(b"AWS4-HMAC-SHA256 Credential=")));
                            if buffer.len() >= head + length {
                                break head + length;
                            }
                        }
                        buffer.reserve(1024);
                        if stream.read_buf(&mut buffer).await.unwrap() == 0 {
                            break 0;
                        }
                    };
                    if request == 0 {
                        break;
                    }
                    buffer.drain(..request);
                    count += 1;
                    let body = format!("{{\"n\":{count}}}");
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    stream.write_all(answer.as_bytes()).await.unwrap();
                }
            }
        });
        (address, handle)
    }

    #[tokio::test]
    async fn connections_are_kept_alive_and_reopened_when_the_server_closed_them() {
        let (address, server) = serve(3).await;
        let client = Client::new(address, 1, "us-east-1");
        for n in 1..=7 {
            let body = client.call("GetItem", "{}".to_string()).await.unwrap();
            assert_eq!(&body[..], format!("{{\"n\":{n}}}").as_bytes());
            // Let the server's close reach the client before the next request.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // Three answers per connection: the 4th and 7th requests found theirs closed.
        assert_eq!(client.connections_opened(), 3);
        server.abort();
    }
}
