//! Bad input against the `khata` binary: garbage and oversized frames, truncated frames,
//! protocol versions it does not speak, unknown opcodes, requests before STARTUP, malformed
//! bodies, bad CQL and values of the wrong type. Each gets its error, at worst the offending
//! connection closes, the server stays up for other connections, and the rows written at the
//! start are still there (issue 3, "Frame limits" and "How it is shown").
//!
//! The frames are written by hand here (a few helpers below, from
//! `doc/native_protocol_v4.spec`) rather than with khata's own codec, so that a mistake shared
//! by the server's encoder and decoder cannot hide. The last test sends a few thousand random
//! and mutated frames from a fixed seed; a failure names the case and the bytes sent.

use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::frame::response::result::ColumnType;
use scylla::serialize::SerializationError;
use scylla::serialize::value::SerializeValue;
use scylla::serialize::writers::{CellWriter, WrittenCellProof};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// `native_transport_max_frame_size` by default: 16 MiB.
const MAX_FRAME_SIZE_BYTES: u32 = 16 * 1024 * 1024;
/// The longest the server may take to answer a frame or to close a connection.
const PATIENCE: Duration = Duration::from_secs(10);
/// Rows written before any bad input, checked after it.
const SEEDED_ROWS: i32 = 20;

// Opcodes (spec §2.4).
const ERROR: u8 = 0x00;
const STARTUP: u8 = 0x01;
const READY: u8 = 0x02;
const OPTIONS: u8 = 0x05;
const SUPPORTED: u8 = 0x06;
const QUERY: u8 = 0x07;
const RESULT: u8 = 0x08;
const PREPARE: u8 = 0x09;
const EXECUTE: u8 = 0x0A;
const REGISTER: u8 = 0x0B;
const BATCH: u8 = 0x0D;

// Error codes (spec §9).
const PROTOCOL_ERROR: i32 = 0x000A;
const INVALID: i32 = 0x2200;
const UNPREPARED: i32 = 0x2500;

/// The consistency ONE.
const ONE: u16 = 0x0001;

// ---------------------------------------------------------------------------------------------
// The node

/// A `khata server` child process, killed and reaped on drop so that a failing test leaves
/// no node behind.
struct NodeProcess {
    child: Option<Child>,
    address: SocketAddr,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl NodeProcess {
    fn start() -> NodeProcess {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let log = dir.path().join("node.log");
        let log_file = File::create(&log).expect("create the node's log file");
        let child = Command::new(env!("CARGO_BIN_EXE_khata"))
            .args(["server", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--cql-port", &port.to_string()])
            .args([
                "--admin-port",
                "0",
                "--dynamo-port",
                "0",
                "--internode-port",
                "0",
            ])
            .env("RUST_LOG", "info")
            .env_remove("KHATA_CHECK_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file))
            .spawn()
            .expect("spawn khata");
        let mut node = NodeProcess {
            child: Some(child),
            address: SocketAddr::from(([127, 0, 0, 1], port)),
            log,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(node.address).is_err() {
            node.assert_running();
            assert!(
                Instant::now() < deadline,
                "khata did not listen; log:\n{}",
                node.log_tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        node
    }

    /// The process has not exited.
    fn assert_running(&mut self) {
        let child = self.child.as_mut().expect("the node was started");
        let exited = child.try_wait().expect("poll khata");
        assert!(
            exited.is_none(),
            "khata exited ({exited:?}); log:\n{}",
            self.log_tail()
        );
    }

    /// SIGTERM, then the process must exit cleanly: bad input left nothing that stops a
    /// clean shutdown.
    fn stop(&mut self) {
        let mut child = self.child.take().expect("the node is running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let exit = loop {
            if let Some(exit) = child.try_wait().expect("poll khata") {
                break exit;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("khata did not stop on SIGTERM; log:\n{}", self.log_tail());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(exit.success(), "exit {exit}; log:\n{}", self.log_tail());
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local address")
        .port()
}

/// A node with rows written through the driver before any bad input.
struct Fixture {
    node: NodeProcess,
    session: Session,
}

impl Fixture {
    async fn start() -> Fixture {
        let node = NodeProcess::start();
        let session = connect(&node).await;
        session
            .query_unpaged(
                "CREATE KEYSPACE bad WITH replication = \
                 {'class': 'SimpleStrategy', 'replication_factor': 1}",
                &[],
            )
            .await
            .expect("create the keyspace");
        session
            .query_unpaged(
                "CREATE TABLE bad.kept (k int PRIMARY KEY, v text, n bigint)",
                &[],
            )
            .await
            .expect("create the table");
        let insert = session
            .prepare("INSERT INTO bad.kept (k, v, n) VALUES (?, ?, ?)")
            .await
            .expect("prepare");
        for k in 0..SEEDED_ROWS {
            session
                .execute_unpaged(&insert, (k, format!("kept {k}"), i64::from(k) * 7))
                .await
                .expect("seed a row");
        }
        Fixture { node, session }
    }

    /// The server is up, a new raw connection and a new driver session work, the old session
    /// still works, and the seeded rows are all there.
    async fn assert_healthy(&mut self) {
        self.node.assert_running();
        let mut raw = Raw::connect(self.node.address).await;
        raw.send(&frame(4, 0, 9, OPTIONS, &[])).await;
        let reply = raw.recv().await.expect("SUPPORTED");
        assert_eq!((reply.stream, reply.opcode), (9, SUPPORTED), "{reply:?}");
        let fresh = connect(&self.node).await;
        for session in [&self.session, &fresh] {
            let mut rows: Vec<(i32, String, i64)> = session
                .query_unpaged("SELECT k, v, n FROM bad.kept", &[])
                .await
                .expect("read the seeded rows")
                .into_rows_result()
                .expect("rows")
                .rows::<(i32, String, i64)>()
                .expect("row types")
                .map(|r| r.expect("a row"))
                .collect();
            rows.sort();
            let expected: Vec<(i32, String, i64)> = (0..SEEDED_ROWS)
                .map(|k| (k, format!("kept {k}"), i64::from(k) * 7))
                .collect();
            assert_eq!(rows, expected, "the seeded rows changed");
        }
    }

    async fn finish(mut self) {
        self.assert_healthy().await;
        drop(self.session);
        self.node.stop();
    }
}

async fn connect(node: &NodeProcess) -> Session {
    SessionBuilder::new()
        .known_node_addr(node.address)
        .build()
        .await
        .unwrap_or_else(|e| panic!("driver connects: {e}; log:\n{}", node.log_tail()))
}

fn db_error(e: &ExecutionError) -> Option<&DbError> {
    match e {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => Some(db),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Frames by hand (spec §1-§4)

/// A request frame: the 9-byte header of v3+ and `body`.
fn frame(version: u8, flags: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
    let length = u32::try_from(body.len()).expect("body fits a frame");
    let mut out = header(version, flags, stream, opcode, length);
    out.extend_from_slice(body);
    out
}

fn header(version: u8, flags: u8, stream: i16, opcode: u8, length: u32) -> Vec<u8> {
    let mut out = vec![version, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode);
    out.extend_from_slice(&length.to_be_bytes());
    out
}

/// `[string]`: a [short] length and UTF-8 bytes.
fn string(s: &str) -> Vec<u8> {
    let mut out = u16::try_from(s.len())
        .expect("short string")
        .to_be_bytes()
        .to_vec();
    out.extend_from_slice(s.as_bytes());
    out
}

/// `[long string]`: an [int] length and UTF-8 bytes.
fn long_string(s: &[u8]) -> Vec<u8> {
    let mut out = i32::try_from(s.len())
        .expect("long string")
        .to_be_bytes()
        .to_vec();
    out.extend_from_slice(s);
    out
}

/// `[string map]`.
fn string_map(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut out = u16::try_from(entries.len())
        .expect("short count")
        .to_be_bytes()
        .to_vec();
    for (k, v) in entries {
        out.extend(string(k));
        out.extend(string(v));
    }
    out
}

fn startup_body(compression: Option<&str>) -> Vec<u8> {
    match compression {
        Some(c) => string_map(&[("CQL_VERSION", "3.0.0"), ("COMPRESSION", c)]),
        None => string_map(&[("CQL_VERSION", "3.0.0")]),
    }
}

/// `<query_parameters>` at ONE with the given bound values (v4: one-byte flags).
fn parameters(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut out = ONE.to_be_bytes().to_vec();
    if values.is_empty() {
        out.push(0);
        return out;
    }
    out.push(0x01);
    out.extend_from_slice(&u16::try_from(values.len()).expect("count").to_be_bytes());
    for value in values {
        match value {
            Some(v) => {
                out.extend_from_slice(&i32::try_from(v.len()).expect("value").to_be_bytes());
                out.extend_from_slice(v);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    out
}

fn query_body(cql: &str, values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut out = long_string(cql.as_bytes());
    out.extend(parameters(values));
    out
}

fn execute_body(id: &[u8], values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut out = u16::try_from(id.len()).expect("id").to_be_bytes().to_vec();
    out.extend_from_slice(id);
    out.extend(parameters(values));
    out
}

/// A response frame as received.
#[derive(Debug)]
struct Reply {
    version: u8,
    stream: i16,
    opcode: u8,
    body: Vec<u8>,
}

impl Reply {
    /// The code and message of an ERROR.
    fn error(&self) -> (i32, String) {
        assert_eq!(self.opcode, ERROR, "expected an ERROR, got {self:?}");
        let code = i32::from_be_bytes(self.body[0..4].try_into().expect("code"));
        let len = usize::from(u16::from_be_bytes([self.body[4], self.body[5]]));
        let message = String::from_utf8(self.body[6..6 + len].to_vec()).expect("UTF-8 message");
        (code, message)
    }

    /// The kind of a RESULT (1 void, 2 rows, 3 set keyspace, 4 prepared, 5 schema change).
    fn result_kind(&self) -> i32 {
        assert_eq!(self.opcode, RESULT, "expected a RESULT, got {self:?}");
        i32::from_be_bytes(self.body[0..4].try_into().expect("kind"))
    }

    /// Asserts a protocol error (0x000A) on `stream`; returns its message.
    fn protocol_error_on(&self, stream: i16) -> String {
        let (code, message) = self.error();
        assert_eq!(
            (code, self.stream),
            (PROTOCOL_ERROR, stream),
            "expected a protocol error on stream {stream}, got {self:?} ({message})"
        );
        message
    }
}

/// A raw client connection.
struct Raw {
    stream: TcpStream,
}

impl Raw {
    async fn connect(address: SocketAddr) -> Raw {
        Raw {
            stream: TcpStream::connect(address).await.expect("connect"),
        }
    }

    /// A connection after OPTIONS/STARTUP in v4, without compression.
    async fn ready(address: SocketAddr) -> Raw {
        let mut raw = Raw::connect(address).await;
        raw.send(&frame(4, 0, 0, STARTUP, &startup_body(None)))
            .await;
        let reply = raw.recv().await.expect("READY");
        assert_eq!(reply.opcode, READY, "{reply:?}");
        raw
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("send");
    }

    /// The next frame, or `None` when the server closed the connection. v1/v2 replies have
    /// an 8-byte header with a one-byte stream.
    async fn recv(&mut self) -> Option<Reply> {
        tokio::time::timeout(PATIENCE, self.recv_inner())
            .await
            .expect("the server answered or closed in time")
    }

    async fn recv_inner(&mut self) -> Option<Reply> {
        let mut first = [0u8; 1];
        self.stream.read_exact(&mut first).await.ok()?;
        let version = first[0];
        let legacy = version & 0x7F <= 2;
        let mut rest = vec![0u8; if legacy { 7 } else { 8 }];
        self.stream.read_exact(&mut rest).await.ok()?;
        let (stream, opcode, length) = if legacy {
            (i16::from(rest[1] as i8), rest[2], &rest[3..7])
        } else {
            (i16::from_be_bytes([rest[1], rest[2]]), rest[3], &rest[4..8])
        };
        assert!(version & 0x80 != 0, "a response has the direction bit");
        let length = u32::from_be_bytes(length.try_into().expect("length"));
        assert!(length <= MAX_FRAME_SIZE_BYTES, "reply of {length} bytes");
        let mut body = vec![0u8; length as usize];
        self.stream.read_exact(&mut body).await.ok()?;
        Some(Reply {
            version,
            stream,
            opcode,
            body,
        })
    }

    /// The server closes the connection, sending nothing more.
    async fn assert_closed(&mut self) {
        if let Some(reply) = self.recv().await {
            panic!("expected the connection to close, got {reply:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A tiny deterministic generator for the garbage and the fuzzing

/// xorshift64*: deterministic from its seed; good enough to pick bytes and mutations.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---------------------------------------------------------------------------------------------
// The tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_gets_a_protocol_error_and_only_its_connection_closes() {
    let fixture = Fixture::start().await;
    // A connection that is working before, during and after the garbage elsewhere.
    let mut bystander = Raw::ready(fixture.node.address).await;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut random = rng.bytes(4096);
    random[0] = 0x17;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "HTTP",
            b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
        ),
        ("TLS client hello", {
            let mut hello = vec![0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc];
            hello.extend(rng.bytes(508));
            hello
        }),
        ("random", random),
        ("zeros", vec![0u8; 64]),
        ("ones", vec![0xFFu8; 64]),
    ];
    for (name, bytes) in cases {
        let mut raw = Raw::connect(fixture.node.address).await;
        raw.send(&bytes).await;
        let reply = raw
            .recv()
            .await
            .unwrap_or_else(|| panic!("{name}: no answer"));
        let (code, message) = reply.error();
        assert_eq!(code, PROTOCOL_ERROR, "{name}: {message}");
        assert!(
            message.contains("Invalid or unsupported protocol version"),
            "{name}: {message}"
        );
        raw.assert_closed().await;

        bystander.send(&frame(4, 0, 3, OPTIONS, &[])).await;
        let reply = bystander.recv().await.expect("the bystander is answered");
        assert_eq!((reply.stream, reply.opcode), (3, SUPPORTED), "{name}");
    }
    // The TLS record header reads as a v0x16 frame; a v3 frame header with a random opcode
    // and length is garbage that looks like a frame: it is answered, and what follows is read
    // as the next frame.
    let mut raw = Raw::ready(fixture.node.address).await;
    raw.send(&header(4, 0, 11, 0x3C, 5)).await;
    raw.send(b"12345").await;
    raw.send(&frame(4, 0, 12, OPTIONS, &[])).await;
    raw.recv().await.expect("an answer").protocol_error_on(11);
    let reply = raw.recv().await.expect("SUPPORTED");
    assert_eq!((reply.stream, reply.opcode), (12, SUPPORTED));
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_frame_gets_a_protocol_error_on_its_stream() {
    let fixture = Fixture::start().await;
    let mut raw = Raw::ready(fixture.node.address).await;
    // The header alone is answered: the limit is checked before the body is buffered.
    let oversized = MAX_FRAME_SIZE_BYTES + 1;
    raw.send(&header(4, 0, 7, QUERY, oversized)).await;
    let message = raw.recv().await.expect("an answer").protocol_error_on(7);
    assert!(
        message.contains("too big") && message.contains(&oversized.to_string()),
        "{message}"
    );
    // Other connections carry on meanwhile, raw and through the driver.
    let mut other = Raw::ready(fixture.node.address).await;
    other.send(&frame(4, 0, 1, OPTIONS, &[])).await;
    assert_eq!(other.recv().await.expect("SUPPORTED").opcode, SUPPORTED);
    let (v,) = fixture
        .session
        .query_unpaged("SELECT v FROM bad.kept WHERE k = 3", &[])
        .await
        .expect("the driver is served")
        .into_rows_result()
        .expect("rows")
        .single_row::<(String,)>()
        .expect("one row");
    assert_eq!(v, "kept 3");
    // The body is skipped as it arrives; the connection then goes on with the next frame.
    let chunk = vec![b'x'; 1024 * 1024];
    let mut left = oversized as usize;
    while left > 0 {
        let n = left.min(chunk.len());
        raw.send(&chunk[..n]).await;
        left -= n;
    }
    raw.send(&frame(4, 0, 8, OPTIONS, &[])).await;
    let reply = raw.recv().await.expect("SUPPORTED after the skipped body");
    assert_eq!((reply.stream, reply.opcode), (8, SUPPORTED), "{reply:?}");

    // The largest length a header can declare, before STARTUP and after it.
    for ready in [false, true] {
        let mut raw = if ready {
            Raw::ready(fixture.node.address).await
        } else {
            Raw::connect(fixture.node.address).await
        };
        raw.send(&header(4, 0, 21, QUERY, u32::MAX)).await;
        raw.recv().await.expect("an answer").protocol_error_on(21);
    }

    // A compressed body whose declared decompressed length is past the limit.
    let mut raw = Raw::connect(fixture.node.address).await;
    raw.send(&frame(4, 0, 0, STARTUP, &startup_body(Some("lz4"))))
        .await;
    assert_eq!(raw.recv().await.expect("READY").opcode, READY);
    let mut body = (MAX_FRAME_SIZE_BYTES + 1).to_be_bytes().to_vec();
    body.extend_from_slice(&[0x10, b'x', 0, 0]);
    raw.send(&frame(4, 0x01, 22, QUERY, &body)).await;
    raw.recv().await.expect("an answer").protocol_error_on(22);
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_frame_then_close_leaves_the_server_serving() {
    let mut fixture = Fixture::start().await;
    let query = frame(
        4,
        0,
        5,
        QUERY,
        &query_body("SELECT v FROM bad.kept WHERE k = 1", &[]),
    );
    for cut in [1, 4, 5, 8, 9, 10, query.len() / 2, query.len() - 1] {
        for startup_first in [false, true] {
            let mut raw = if startup_first {
                Raw::ready(fixture.node.address).await
            } else {
                Raw::connect(fixture.node.address).await
            };
            raw.send(&query[..cut]).await;
            raw.stream.shutdown().await.expect("half-close");
            // Nothing to answer: the frame never completed.
            raw.assert_closed().await;
        }
        fixture.node.assert_running();
    }
    // Cut, then dropped without a half-close: a reset rather than an EOF.
    let mut raw = Raw::ready(fixture.node.address).await;
    raw.send(&query[..query.len() - 3]).await;
    drop(raw);
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_and_older_versions_get_the_step_down_error() {
    let fixture = Fixture::start().await;
    // The DSE betas 0x41/0x42, as drivers try them, and versions no one speaks: answered in v4
    // on the request's stream, then closed.
    for version in [0x41u8, 0x42, 6, 0x7F] {
        for stream in [0i16, 77] {
            let mut raw = Raw::connect(fixture.node.address).await;
            raw.send(&frame(version, 0, stream, OPTIONS, &[])).await;
            let reply = raw.recv().await.expect("an answer");
            assert_eq!(reply.version, 0x84, "answered in v4: {reply:?}");
            let message = reply.protocol_error_on(stream);
            assert_eq!(
                message,
                format!(
                    "Invalid or unsupported protocol version ({version}); \
                     supported versions are (3/v3, 4/v4, 5/v5)"
                )
            );
            raw.assert_closed().await;
        }
    }
    // v5 is spoken: OPTIONS gets SUPPORTED, in v5.
    let mut raw = Raw::connect(fixture.node.address).await;
    raw.send(&frame(5, 0, 12, OPTIONS, &[])).await;
    let reply = raw.recv().await.expect("an answer");
    assert_eq!(
        (reply.version, reply.opcode),
        (0x85, SUPPORTED),
        "{reply:?}"
    );
    // v1 and v2 have an 8-byte header with a one-byte stream; the answer uses it.
    for version in [1u8, 2] {
        let mut raw = Raw::connect(fixture.node.address).await;
        raw.send(&[version, 0, 3, OPTIONS, 0, 0, 0, 0]).await;
        let reply = raw.recv().await.expect("an answer");
        assert_eq!(reply.version, 0x80 | version, "{reply:?}");
        let message = reply.protocol_error_on(3);
        assert!(
            message.starts_with(&format!(
                "Invalid or unsupported protocol version ({version})"
            )),
            "{message}"
        );
        raw.assert_closed().await;
    }
    // v3 is spoken.
    let mut raw = Raw::connect(fixture.node.address).await;
    raw.send(&frame(3, 0, 1, OPTIONS, &[])).await;
    let reply = raw.recv().await.expect("SUPPORTED");
    assert_eq!((reply.version, reply.opcode), (0x83, SUPPORTED));
    // A connection pinned to v4 that switches version mid-way is refused and closed.
    let mut raw = Raw::ready(fixture.node.address).await;
    raw.send(&frame(3, 0, 2, OPTIONS, &[])).await;
    raw.recv().await.expect("an answer").protocol_error_on(2);
    raw.assert_closed().await;
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_response_opcodes_get_a_protocol_error_and_the_connection_goes_on() {
    let fixture = Fixture::start().await;
    let mut raw = Raw::ready(fixture.node.address).await;
    // Undefined opcodes, then response opcodes sent as requests (ERROR, READY, RESULT, EVENT).
    let opcodes = [0x04u8, 0x11, 0x7F, 0xFF, 0x00, 0x02, 0x08, 0x0C];
    for (i, opcode) in opcodes.into_iter().enumerate() {
        let stream = 100 + i as i16;
        raw.send(&frame(4, 0, stream, opcode, b"some body")).await;
        let message = raw
            .recv()
            .await
            .expect("an answer")
            .protocol_error_on(stream);
        assert!(!message.is_empty());
    }
    raw.send(&frame(
        4,
        0,
        200,
        QUERY,
        &query_body("SELECT v FROM bad.kept WHERE k = 2", &[]),
    ))
    .await;
    let reply = raw.recv().await.expect("the query is answered");
    assert_eq!((reply.stream, reply.result_kind()), (200, 2), "{reply:?}");
    assert!(reply.body.windows(6).any(|w| w == b"kept 2"), "{reply:?}");
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_before_startup_get_a_protocol_error() {
    let fixture = Fixture::start().await;
    let mut raw = Raw::connect(fixture.node.address).await;
    let select = query_body("SELECT v FROM bad.kept WHERE k = 1", &[]);
    let mut batch = vec![0u8];
    batch.extend_from_slice(&1u16.to_be_bytes());
    batch.push(0);
    batch.extend(long_string(
        b"INSERT INTO bad.kept (k, v) VALUES (1, 'changed')",
    ));
    batch.extend_from_slice(&0u16.to_be_bytes());
    batch.extend_from_slice(&ONE.to_be_bytes());
    batch.push(0);
    let mut register = 1u16.to_be_bytes().to_vec();
    register.extend(string("SCHEMA_CHANGE"));
    let requests: [(u8, Vec<u8>); 5] = [
        (QUERY, select.clone()),
        (PREPARE, long_string(b"SELECT v FROM bad.kept WHERE k = ?")),
        (EXECUTE, execute_body(&[1, 2, 3, 4], &[])),
        (BATCH, batch),
        (REGISTER, register),
    ];
    for (i, (opcode, body)) in requests.iter().enumerate() {
        let stream = 10 + i as i16;
        raw.send(&frame(4, 0, stream, *opcode, body)).await;
        raw.recv()
            .await
            .expect("an answer")
            .protocol_error_on(stream);
    }
    // The connection is still usable: STARTUP, then the same query works.
    raw.send(&frame(4, 0, 0, STARTUP, &startup_body(None)))
        .await;
    assert_eq!(raw.recv().await.expect("READY").opcode, READY);
    raw.send(&frame(4, 0, 20, QUERY, &select)).await;
    let reply = raw.recv().await.expect("RESULT");
    assert_eq!((reply.stream, reply.result_kind()), (20, 2), "{reply:?}");
    assert!(reply.body.windows(6).any(|w| w == b"kept 1"), "{reply:?}");
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_get_a_protocol_error_on_their_stream() {
    let fixture = Fixture::start().await;
    let mut raw = Raw::ready(fixture.node.address).await;
    let mut cases: Vec<(&str, u8, u8, Vec<u8>)> = Vec::new();
    // QUERY whose [long string] length runs past the end of the body.
    let mut past_end = 1000i32.to_be_bytes().to_vec();
    past_end.extend_from_slice(b"SELECT");
    cases.push(("long string past the end", 0, QUERY, past_end));
    let mut negative = (-5i32).to_be_bytes().to_vec();
    negative.extend_from_slice(&ONE.to_be_bytes());
    negative.push(0);
    cases.push(("negative query length", 0, QUERY, negative));
    cases.push((
        "no consistency",
        0,
        QUERY,
        long_string(b"SELECT v FROM bad.kept"),
    ));
    let mut consistency = long_string(b"SELECT v FROM bad.kept");
    consistency.extend_from_slice(&0x00FFu16.to_be_bytes());
    consistency.push(0);
    cases.push(("unknown consistency", 0, QUERY, consistency));
    let mut values = long_string(b"SELECT v FROM bad.kept WHERE k = ?");
    values.extend_from_slice(&ONE.to_be_bytes());
    values.push(0x01);
    values.extend_from_slice(&5u16.to_be_bytes());
    cases.push(("five values promised, none sent", 0, QUERY, values));
    let mut value_length = long_string(b"SELECT v FROM bad.kept WHERE k = ?");
    value_length.extend_from_slice(&ONE.to_be_bytes());
    value_length.push(0x01);
    value_length.extend_from_slice(&1u16.to_be_bytes());
    value_length.extend_from_slice(&(-7i32).to_be_bytes());
    cases.push(("value length -7", 0, QUERY, value_length));
    let mut utf8 = long_string(b"SELECT v FROM bad.kept WHERE k = \xff\xfe");
    utf8.extend_from_slice(&ONE.to_be_bytes());
    utf8.push(0);
    cases.push(("query not UTF-8", 0, QUERY, utf8));
    let mut id_past_end = 300u16.to_be_bytes().to_vec();
    id_past_end.extend_from_slice(&[1, 2, 3]);
    cases.push(("prepared id past the end", 0, EXECUTE, id_past_end));
    let mut batch_type = vec![9u8];
    batch_type.extend_from_slice(&0u16.to_be_bytes());
    batch_type.extend_from_slice(&ONE.to_be_bytes());
    batch_type.push(0);
    cases.push(("batch type 9", 0, BATCH, batch_type));
    let mut batch_kind = vec![0u8];
    batch_kind.extend_from_slice(&1u16.to_be_bytes());
    batch_kind.push(7);
    cases.push(("batch statement kind 7", 0, BATCH, batch_kind));
    let mut event = 1u16.to_be_bytes().to_vec();
    event.extend(string("NOT_AN_EVENT"));
    cases.push(("unknown event", 0, REGISTER, event));
    cases.push(("empty PREPARE", 0, PREPARE, Vec::new()));
    cases.push((
        "custom payload flag with a short map",
        0x04,
        OPTIONS,
        vec![0x00],
    ));
    cases.push((
        "compressed without negotiation",
        0x01,
        QUERY,
        query_body("SELECT v FROM bad.kept", &[]),
    ));
    for (i, (name, flags, opcode, body)) in cases.iter().enumerate() {
        let stream = 300 + i as i16;
        raw.send(&frame(4, *flags, stream, *opcode, body)).await;
        let reply = raw
            .recv()
            .await
            .unwrap_or_else(|| panic!("{name}: the connection closed"));
        let (code, message) = reply.error();
        assert_eq!(
            (code, reply.stream),
            (PROTOCOL_ERROR, stream),
            "{name}: {message}"
        );
    }
    // STARTUP without CQL_VERSION, or with an unknown compression, on fresh connections.
    for (name, body) in [
        ("no CQL_VERSION", string_map(&[("DRIVER_NAME", "x")])),
        ("unknown compression", startup_body(Some("zstd"))),
        ("CQL version 2", string_map(&[("CQL_VERSION", "2.0.0")])),
    ] {
        let mut fresh = Raw::connect(fixture.node.address).await;
        fresh.send(&frame(4, 0, 4, STARTUP, &body)).await;
        let reply = fresh.recv().await.expect("an answer");
        let (code, message) = reply.error();
        assert_eq!(
            (code, reply.stream),
            (PROTOCOL_ERROR, 4),
            "{name}: {message}"
        );
    }
    // The connection that got all of it still serves.
    raw.send(&frame(
        4,
        0,
        400,
        QUERY,
        &query_body("SELECT v FROM bad.kept WHERE k = 4", &[]),
    ))
    .await;
    let reply = raw.recv().await.expect("RESULT");
    assert_eq!((reply.stream, reply.result_kind()), (400, 2), "{reply:?}");
    fixture.finish().await;
}

/// A value written as given, whatever the column's type: the driver checks types before it
/// sends, and this is how a client that does not would look.
struct RawValue(&'static [u8]);

impl SerializeValue for RawValue {
    fn serialize<'b>(
        &self,
        _typ: &ColumnType,
        writer: CellWriter<'b>,
    ) -> Result<WrittenCellProof<'b>, SerializationError> {
        writer.set_value(self.0).map_err(SerializationError::new)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_cql_and_values_of_the_wrong_type_get_their_errors() {
    let fixture = Fixture::start().await;
    let session = &fixture.session;
    let syntax = [
        "SELEKT * FROM bad.kept",
        "SELECT * FROM",
        "INSERT INTO bad.kept (k, v) VALUES (1, 'unterminated)",
        "SELECT * FROM bad.kept WHERE k = 1 AND AND",
        "\u{0}\u{1}\u{2}",
        ";;",
    ];
    for cql in syntax {
        let e = session.query_unpaged(cql, &[]).await.unwrap_err();
        assert!(
            matches!(db_error(&e), Some(DbError::SyntaxError)),
            "{cql}: {e}"
        );
    }
    let invalid = [
        "SELECT * FROM nowhere.kept",
        "SELECT * FROM bad.nothing",
        "SELECT nope FROM bad.kept",
        "INSERT INTO bad.kept (k, v) VALUES ('one', 'x')",
        "INSERT INTO bad.kept (k, n) VALUES (1, 'many')",
        "INSERT INTO bad.kept (k, v) VALUES (1, 2)",
        "INSERT INTO bad.kept (k, n) VALUES (1, 99999999999999999999999)",
        "INSERT INTO bad.kept (v) VALUES ('no key')",
        "UPDATE bad.kept SET k = 3 WHERE k = 1",
        "DELETE FROM bad.kept WHERE v = 'kept 1'",
        "USE nowhere",
    ];
    for cql in invalid {
        let e = session.query_unpaged(cql, &[]).await.unwrap_err();
        assert!(matches!(db_error(&e), Some(DbError::Invalid)), "{cql}: {e}");
    }
    // Values of the wrong type bound to a prepared statement.
    let insert = session
        .prepare("INSERT INTO bad.kept (k, v, n) VALUES (?, ?, ?)")
        .await
        .expect("prepare");
    let wrong: [(&str, RawValue, RawValue, RawValue); 4] = [
        (
            "3-byte int",
            RawValue(&[0, 0, 1]),
            RawValue(b"x"),
            RawValue(&[0; 8]),
        ),
        (
            "4-byte bigint",
            RawValue(&[0, 0, 0, 1]),
            RawValue(b"x"),
            RawValue(&[0; 4]),
        ),
        (
            "text not UTF-8",
            RawValue(&[0, 0, 0, 1]),
            RawValue(&[0xC3, 0x28]),
            RawValue(&[0; 8]),
        ),
        (
            "9-byte bigint",
            RawValue(&[0, 0, 0, 1]),
            RawValue(b"x"),
            RawValue(&[0; 9]),
        ),
    ];
    for (name, k, v, n) in wrong {
        let e = session
            .execute_unpaged(&insert, (k, v, n))
            .await
            .unwrap_err();
        assert!(
            matches!(db_error(&e), Some(DbError::Invalid)),
            "{name}: {e}"
        );
    }
    // The same through raw frames: a wrong-sized value, too few values, an unknown id.
    let mut raw = Raw::ready(fixture.node.address).await;
    raw.send(&frame(
        4,
        0,
        1,
        PREPARE,
        &long_string(b"SELECT v FROM bad.kept WHERE k = ?"),
    ))
    .await;
    let prepared = raw.recv().await.expect("RESULT");
    assert_eq!(prepared.result_kind(), 4, "{prepared:?}");
    let id_len = usize::from(u16::from_be_bytes([prepared.body[4], prepared.body[5]]));
    let id = prepared.body[6..6 + id_len].to_vec();
    let cases: [(&str, Vec<u8>, i32); 4] = [
        (
            "a 3-byte int",
            execute_body(&id, &[Some(&[0, 0, 1])]),
            INVALID,
        ),
        ("no values", execute_body(&id, &[]), INVALID),
        (
            "two values for one marker",
            execute_body(&id, &[Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 1])]),
            INVALID,
        ),
        (
            "an unknown id",
            execute_body(b"0123456789abcdef", &[Some(&[0, 0, 0, 1])]),
            UNPREPARED,
        ),
    ];
    for (i, (name, body, expected)) in cases.iter().enumerate() {
        let stream = 10 + i as i16;
        raw.send(&frame(4, 0, stream, EXECUTE, body)).await;
        let reply = raw.recv().await.expect("an answer");
        let (code, message) = reply.error();
        assert_eq!(
            (code, reply.stream),
            (*expected, stream),
            "{name}: {message}"
        );
    }
    raw.send(&frame(
        4,
        0,
        20,
        EXECUTE,
        &execute_body(&id, &[Some(&[0, 0, 0, 5])]),
    ))
    .await;
    let reply = raw.recv().await.expect("RESULT");
    assert_eq!(reply.result_kind(), 2, "{reply:?}");
    assert!(reply.body.windows(6).any(|w| w == b"kept 5"), "{reply:?}");
    fixture.finish().await;
}

/// An error whose message quotes a huge statement back keeps its own code: the message is cut
/// to fit its [string] (it used to become a server error, "response could not be encoded").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_quoting_a_huge_statement_keeps_its_code() {
    let fixture = Fixture::start().await;
    let mut raw = Raw::ready(fixture.node.address).await;
    let cases = [
        (
            "a syntax error in 200000 minus signs",
            format!("SELECT * FROM bad.kept WHERE k = {}1", "-".repeat(200_000)),
            0x2000,
        ),
        (
            "an unknown column of 70000 letters",
            format!("SELECT {} FROM bad.kept", "a".repeat(70_000)),
            INVALID,
        ),
        (
            "an int of a million digits",
            format!("SELECT * FROM bad.kept WHERE k = {}", "9".repeat(1_000_000)),
            INVALID,
        ),
    ];
    for (i, (name, cql, expected)) in cases.iter().enumerate() {
        let stream = 30 + i as i16;
        raw.send(&frame(4, 0, stream, QUERY, &query_body(cql, &[])))
            .await;
        let reply = raw.recv().await.expect("an answer");
        let (code, message) = reply.error();
        assert_eq!(
            (code, reply.stream),
            (*expected, stream),
            "{name}: {}",
            &message[..message.len().min(200)]
        );
        assert!(message.len() <= usize::from(u16::MAX), "{name}");
    }
    fixture.finish().await;
}

/// Valid v4 request frames the fuzzer mutates.
fn corpus(prepared_id: &[u8]) -> Vec<Vec<u8>> {
    let k: &[u8] = &[0, 0, 0, 42];
    let v: &[u8] = b"fuzzed";
    let mut paged = long_string(b"SELECT * FROM fuzz.t");
    paged.extend_from_slice(&ONE.to_be_bytes());
    paged.push(0x04 | 0x08 | 0x02);
    paged.extend_from_slice(&3i32.to_be_bytes());
    paged.extend_from_slice(&4i32.to_be_bytes());
    paged.extend_from_slice(b"\x00\x01\x02\x03");
    let mut batch = vec![1u8];
    batch.extend_from_slice(&2u16.to_be_bytes());
    batch.push(0);
    batch.extend(long_string(b"INSERT INTO fuzz.t (k, v) VALUES (?, ?)"));
    batch.extend_from_slice(&2u16.to_be_bytes());
    for value in [k, v] {
        batch.extend_from_slice(&(value.len() as i32).to_be_bytes());
        batch.extend_from_slice(value);
    }
    batch.push(1);
    batch.extend_from_slice(&(prepared_id.len() as u16).to_be_bytes());
    batch.extend_from_slice(prepared_id);
    batch.extend_from_slice(&1u16.to_be_bytes());
    batch.extend_from_slice(&4i32.to_be_bytes());
    batch.extend_from_slice(k);
    batch.extend_from_slice(&ONE.to_be_bytes());
    batch.push(0);
    let mut register = 3u16.to_be_bytes().to_vec();
    for e in ["TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"] {
        register.extend(string(e));
    }
    vec![
        frame(4, 0, 1, OPTIONS, &[]),
        frame(4, 0, 0, STARTUP, &startup_body(None)),
        frame(4, 0, 0, STARTUP, &startup_body(Some("snappy"))),
        frame(
            4,
            0,
            2,
            QUERY,
            &query_body("SELECT * FROM fuzz.t WHERE k = 42", &[]),
        ),
        frame(
            4,
            0,
            3,
            QUERY,
            &query_body(
                "INSERT INTO fuzz.t (k, v) VALUES (?, ?)",
                &[Some(k), Some(v)],
            ),
        ),
        frame(4, 0, 4, QUERY, &paged),
        frame(
            4,
            0,
            5,
            PREPARE,
            &long_string(b"SELECT v FROM fuzz.t WHERE k = ?"),
        ),
        frame(4, 0, 6, EXECUTE, &execute_body(prepared_id, &[Some(k)])),
        frame(4, 0, 7, BATCH, &batch),
        frame(4, 0, 8, REGISTER, &register),
        frame(3, 0, 9, QUERY, &query_body("SELECT k FROM fuzz.t", &[])),
    ]
}

/// One mutation of a corpus frame (or plain garbage).
fn mutate(rng: &mut XorShift, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut f = corpus[rng.below(corpus.len())].clone();
    match rng.below(11) {
        0 => {
            // Bits flipped in the body: the header stays valid, so the body decoder and the
            // executor see the damage.
            if f.len() > 9 {
                for _ in 0..1 + rng.below(4) {
                    let i = 9 + rng.below(f.len() - 9);
                    f[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => f.truncate(rng.below(f.len())),
        2 => {
            let extra = rng.below(64);
            f.extend(rng.bytes(extra));
        }
        3 => {
            let body = (f.len() - 9) as u32;
            let length = match rng.below(4) {
                0 => rng.next() as u32,
                1 => body.wrapping_add(1 + rng.below(16) as u32),
                2 => body.saturating_sub(1 + rng.below(16) as u32),
                _ => MAX_FRAME_SIZE_BYTES + rng.below(2) as u32 - 1,
            };
            f[5..9].copy_from_slice(&length.to_be_bytes());
        }
        4 => f[4] = rng.next() as u8,
        5 => {
            const VERSIONS: [u8; 10] = [0, 1, 2, 3, 4, 5, 0x41, 0x42, 0x83, 0x84];
            f[0] = if rng.below(4) == 0 {
                rng.next() as u8
            } else {
                VERSIONS[rng.below(VERSIONS.len())]
            };
        }
        6 => {
            let other = &corpus[rng.below(corpus.len())];
            let cut = rng.below(f.len());
            f.truncate(cut);
            f.extend_from_slice(&other[rng.below(other.len())..]);
        }
        7 => {
            let n = rng.below(200);
            f = rng.bytes(n);
        }
        8 => f[1] = rng.next() as u8,
        9 => {
            // An extreme count or length written over a field inside the body.
            if f.len() > 11 {
                let at = 9 + rng.below(f.len() - 11);
                let extreme: [u8; 4] = match rng.below(5) {
                    0 => [0xFF, 0xFF, 0xFF, 0xFF],
                    1 => [0x7F, 0xFF, 0xFF, 0xFF],
                    2 => [0x80, 0x00, 0x00, 0x00],
                    3 => [0xFF, 0xFF, 0xFF, 0xFE],
                    _ => [0x00, 0x00, 0xFF, 0xFF],
                };
                let n = extreme.len().min(f.len() - at);
                f[at..at + n].copy_from_slice(&extreme[..n]);
            }
        }
        _ => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(f.len());
                f[i] ^= 1 << rng.below(8);
            }
        }
    }
    f
}

/// Reads everything until the server closes; checks each frame's header is a response and
/// returns the opcodes. A v5 STARTUP answered with READY switches the rest of the stream to v5
/// segments, which are checked too (header CRC24, payload CRC32) and, when uncompressed, their
/// envelopes read like frames.
async fn drain(stream: &mut TcpStream) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    }
    let (mut opcodes, at) = replies(&bytes, true)?;
    if at < bytes.len() {
        // Framing is on: the rest is segments.
        let (envelopes, compressed) = segments(&bytes[at..])?;
        if !compressed {
            let (framed, _) =
                replies(&envelopes, false).map_err(|e| format!("in segments: {e}"))?;
            opcodes.extend(framed);
        }
    }
    Ok(opcodes)
}

/// Reads replies from the front of `bytes`; returns their opcodes and where it stopped: at the
/// end, or (when `stop_at_v5_ready`) right after a v5 READY.
fn replies(bytes: &[u8], stop_at_v5_ready: bool) -> Result<(Vec<u8>, usize), String> {
    let mut at = 0;
    let mut opcodes = Vec::new();
    while at < bytes.len() {
        let version = bytes[at];
        if version & 0x80 == 0 {
            return Err(format!("byte {at}: a reply without the response bit"));
        }
        let legacy = version & 0x7F <= 2;
        let head = if legacy { 8 } else { 9 };
        if bytes.len() < at + head {
            return Err(format!("byte {at}: a truncated reply header"));
        }
        let (opcode, length) = if legacy {
            (bytes[at + 3], &bytes[at + 4..at + 8])
        } else {
            (bytes[at + 4], &bytes[at + 5..at + 9])
        };
        if ![ERROR, READY, SUPPORTED, RESULT, 0x03, 0x0C].contains(&opcode) {
            return Err(format!("byte {at}: reply opcode 0x{opcode:02x}"));
        }
        let length = u32::from_be_bytes(length.try_into().expect("4 bytes")) as usize;
        if bytes.len() < at + head + length {
            return Err(format!(
                "byte {at}: a reply body of {length} bytes, {} sent",
                bytes.len() - at - head
            ));
        }
        at += head + length;
        opcodes.push(opcode);
        if stop_at_v5_ready && version == 0x85 && opcode == READY {
            break;
        }
    }
    Ok((opcodes, at))
}

/// The CRC24 of a v5 segment header (native_protocol_v5.spec §2.1: initial value 0x875060,
/// polynomial 0x1974F0B), written here from the spec rather than taken from the server.
fn crc24(bytes: &[u8]) -> u32 {
    let mut crc: u32 = 0x0087_5060;
    for &b in bytes {
        crc ^= u32::from(b) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x0100_0000 != 0 {
                crc ^= 0x0197_4F0B;
            }
        }
    }
    crc & 0x00FF_FFFF
}

/// The IEEE CRC32 of a v5 segment payload, primed with the bytes FA 2D 55 CA (as Cassandra).
fn crc32(payload: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in [0xFA, 0x2D, 0x55, 0xCA].iter().chain(payload) {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Checks a stream of v5 segments, uncompressed or LZ4 (told apart by which header CRC24
/// holds); returns the joined payloads and whether any was compressed (whose envelopes this
/// test does not decompress).
fn segments(bytes: &[u8]) -> Result<(Vec<u8>, bool), String> {
    let mut at = 0;
    let mut payloads = Vec::new();
    let mut compressed = false;
    while at < bytes.len() {
        let le = |n: usize| -> Option<u64> {
            let b = bytes.get(at..at + n)?;
            Some(b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
        };
        let (header_len, payload_len, lz4) = match (le(3), le(6), le(8)) {
            (Some(h), Some(with_crc), _)
                if crc24(&bytes[at..at + 3]) == (with_crc >> 24) as u32 =>
            {
                (6, (h & 0x1_FFFF) as usize, false)
            }
            (_, _, Some(with_crc)) if crc24(&bytes[at..at + 5]) == (with_crc >> 40) as u32 => (
                8,
                (with_crc & 0x1_FFFF) as usize,
                with_crc >> 17 & 0x1_FFFF != 0,
            ),
            _ => return Err(format!("segment byte {at}: no valid segment header")),
        };
        let start = at + header_len;
        let end = start + payload_len;
        let Some(trailer) = bytes.get(end..end + 4) else {
            return Err(format!("segment byte {at}: truncated segment"));
        };
        let payload = &bytes[start..end];
        if crc32(payload) != u32::from_le_bytes(trailer.try_into().expect("4 bytes")) {
            return Err(format!("segment byte {at}: payload CRC32 mismatch"));
        }
        compressed |= lz4;
        payloads.extend_from_slice(payload);
        at = end + 4;
    }
    Ok((payloads, compressed))
}

/// Random and mutated frames from a fixed seed, each case on a fresh connection (after a valid
/// STARTUP half of the time, so that mutated bodies reach the executor): the server answers
/// well-formed frames or closes, never hangs on a closed client, and never stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_and_mutated_frames_never_stop_the_server() {
    const CASES: usize = 4000;
    const SEED: u64 = 0x6B68_6174_6100_0003;
    let mut fixture = Fixture::start().await;
    fixture
        .session
        .query_unpaged(
            "CREATE KEYSPACE fuzz WITH replication = \
             {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .expect("create the keyspace");
    fixture
        .session
        .query_unpaged("CREATE TABLE fuzz.t (k int PRIMARY KEY, v text)", &[])
        .await
        .expect("create the table");
    let prepared_id = {
        let mut raw = Raw::ready(fixture.node.address).await;
        raw.send(&frame(
            4,
            0,
            1,
            PREPARE,
            &long_string(b"INSERT INTO fuzz.t (k) VALUES (?)"),
        ))
        .await;
        let prepared = raw.recv().await.expect("RESULT");
        assert_eq!(prepared.result_kind(), 4, "{prepared:?}");
        let id_len = usize::from(u16::from_be_bytes([prepared.body[4], prepared.body[5]]));
        prepared.body[6..6 + id_len].to_vec()
    };
    let corpus = corpus(&prepared_id);
    let mut rng = XorShift(SEED);
    // Replies by opcode: how far the cases got.
    let mut replies = [0usize; 256];
    for case in 0..CASES {
        let mut sent = Vec::new();
        if rng.below(2) == 0 {
            sent.extend(frame(4, 0, 0, STARTUP, &startup_body(None)));
        }
        for _ in 0..1 + rng.below(3) {
            sent.extend(mutate(&mut rng, &corpus));
        }
        let mut stream = TcpStream::connect(fixture.node.address)
            .await
            .unwrap_or_else(|e| panic!("case {case}: connect: {e}"));
        // The server may close first (a fatal frame); a failed write is then expected.
        let _ = stream.write_all(&sent).await;
        let _ = stream.shutdown().await;
        match tokio::time::timeout(PATIENCE, drain(&mut stream)).await {
            Ok(Ok(opcodes)) => opcodes.iter().for_each(|&o| replies[usize::from(o)] += 1),
            Ok(Err(e)) => panic!("case {case} (seed {SEED:#x}): {e}; sent {}", hex(&sent)),
            Err(_) => panic!(
                "case {case} (seed {SEED:#x}): the server neither answered nor closed in \
                 {PATIENCE:?}; sent {}",
                hex(&sent)
            ),
        }
        if case % 250 == 0 {
            fixture.node.assert_running();
        }
    }
    let (errors, results) = (replies[usize::from(ERROR)], replies[usize::from(RESULT)]);
    eprintln!(
        "{CASES} cases: {errors} errors, {results} results, {} ready, {} supported",
        replies[usize::from(READY)],
        replies[usize::from(SUPPORTED)]
    );
    assert!(
        errors >= CASES / 2,
        "only {errors} errors for {CASES} cases"
    );
    assert!(results > 0, "no mutated request reached the executor");
    fixture.finish().await;
}
