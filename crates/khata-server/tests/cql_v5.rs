//! Native protocol v5 over a socket, through a small client written from the spec with
//! khata-cql's own frame and segment types: the unframed OPTIONS/STARTUP handshake, segments
//! (uncompressed and LZ4) from READY on in both directions, envelopes larger than a segment
//! split and reassembled, result metadata ids through PREPARE/EXECUTE and an ALTER TABLE, the
//! v5 query flags, the envelope limit, and broken segments closing only their own connection.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use khata_cql::frame::{
    BoundValues, Compression, Consistency, ErrorKind, Execute, FrameFlags, HEADER_LEN, Prepare,
    Prepared, ProtocolVersion, Query, QueryParameters, Request, RequestFrame, Response,
    ResponseFrame, ResultBody, Rows, SegmentDecoder, SegmentWriter, Startup, Value, encode_segment,
};
use khata_server::node::Node;
use support::{TestNode, test_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long any one read may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most a response may decompress to in this client.
const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// A v5 client: the handshake unframed, then segments both ways.
struct V5Client {
    socket: TcpStream,
    /// Bytes read from the socket and not decoded yet.
    inbox: BytesMut,
    /// The segment decoder once framing is on.
    segments: Option<SegmentDecoder>,
    /// Whether framing is LZ4-compressed.
    lz4: bool,
    /// Segment payloads not yet decoded as envelopes.
    payloads: BytesMut,
    /// The self-contained flag of every segment received, in order.
    received: Vec<bool>,
    next_stream: i16,
}

impl V5Client {
    async fn open(addr: SocketAddr) -> Self {
        V5Client {
            socket: TcpStream::connect(addr).await.expect("connects"),
            inbox: BytesMut::new(),
            segments: None,
            lz4: false,
            payloads: BytesMut::new(),
            received: Vec::new(),
            next_stream: 0,
        }
    }

    /// OPTIONS, STARTUP (with `lz4` or no compression), READY, framing on.
    async fn connect(addr: SocketAddr, lz4: bool) -> Self {
        let mut client = V5Client::open(addr).await;
        let Response::Supported(options) = client.request(Request::Options).await.response else {
            panic!("OPTIONS must be answered with SUPPORTED");
        };
        let versions = options
            .iter()
            .find(|(k, _)| k == "PROTOCOL_VERSIONS")
            .map(|(_, v)| v.clone())
            .expect("PROTOCOL_VERSIONS");
        assert!(versions.contains(&"5/v5".to_string()), "{versions:?}");
        let compression = lz4.then_some(Compression::Lz4);
        let ready = client.request(startup(compression)).await;
        assert_eq!(ready.response, Response::Ready);
        client.start_framing(lz4);
        client
    }

    fn start_framing(&mut self, lz4: bool) {
        self.segments = Some(SegmentDecoder::new(lz4));
        self.lz4 = lz4;
    }

    /// Encodes `request` as a v5 envelope on a fresh stream.
    fn envelope(&mut self, request: Request) -> (i16, BytesMut) {
        self.envelope_with(request, false)
    }

    fn envelope_with(&mut self, request: Request, beta: bool) -> (i16, BytesMut) {
        let stream = self.next_stream;
        self.next_stream = self.next_stream.wrapping_add(1) & 0x7FFF;
        let mut out = BytesMut::new();
        RequestFrame {
            version: ProtocolVersion::V5,
            stream,
            tracing: false,
            custom_payload: None,
            request,
        }
        .encode(None, &mut out)
        .expect("encodes");
        if beta {
            out[1] |= FrameFlags::USE_BETA;
        }
        (stream, out)
    }

    /// Sends envelopes: bare before framing, packed into segments after.
    async fn send(&mut self, envelopes: &[BytesMut]) {
        let mut out = BytesMut::new();
        if self.segments.is_some() {
            let mut writer = SegmentWriter::new(self.lz4);
            for e in envelopes {
                writer.push_envelope(e, &mut out).expect("frames");
            }
            writer.flush(&mut out).expect("frames");
        } else {
            for e in envelopes {
                out.extend_from_slice(e);
            }
        }
        self.socket.write_all(&out).await.expect("writes");
    }

    async fn request(&mut self, request: Request) -> ResponseFrame {
        let (stream, envelope) = self.envelope(request);
        self.send(&[envelope]).await;
        let response = self
            .response()
            .await
            .expect("a response before the socket closed");
        assert_eq!(response.stream, stream);
        response
    }

    /// The next response envelope; `None` when the server closed the connection.
    async fn response(&mut self) -> Option<ResponseFrame> {
        loop {
            if let Some(segments) = self.segments.as_mut() {
                while let Some(segment) = segments.decode(&mut self.inbox).expect("valid segment") {
                    self.received.push(segment.self_contained);
                    self.payloads.extend_from_slice(&segment.payload);
                }
            }
            let source = if self.segments.is_some() {
                &mut self.payloads
            } else {
                &mut self.inbox
            };
            if let Some(response) = take_envelope(source) {
                return Some(response);
            }
            let read = tokio::time::timeout(TIMEOUT, self.socket.read_buf(&mut self.inbox))
                .await
                .expect("the server answers in time")
                .expect("reads");
            if read == 0 {
                return None;
            }
        }
    }

    /// Reads until the server closes the connection; the responses received on the way.
    async fn until_closed(&mut self) -> Vec<ResponseFrame> {
        let mut responses = Vec::new();
        while let Some(r) = self.response().await {
            responses.push(r);
        }
        responses
    }
}

/// One whole response envelope from the front of `buf`, if there is one.
fn take_envelope(buf: &mut BytesMut) -> Option<ResponseFrame> {
    if buf.len() < HEADER_LEN {
        return None;
    }
    let length = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) as usize;
    if buf.len() < HEADER_LEN + length {
        return None;
    }
    let bytes = buf.split_to(HEADER_LEN + length);
    let (header, response) =
        ResponseFrame::decode(&bytes, None, MAX_RESPONSE_BYTES).expect("a valid response");
    assert_eq!(header.version, ProtocolVersion::V5, "{response:?}");
    assert!(header.is_response);
    Some(response)
}

fn startup(compression: Option<Compression>) -> Request {
    Request::Startup(Startup {
        cql_version: "3.0.0".into(),
        compression,
        options: [("DRIVER_NAME".to_string(), "cql_v5 test".to_string())].into(),
    })
}

fn query(cql: &str) -> Request {
    Request::Query(Query {
        query: cql.into(),
        parameters: QueryParameters::new(Consistency::One),
    })
}

fn query_with(cql: &str, values: Vec<Value>) -> Request {
    let mut parameters = QueryParameters::new(Consistency::One);
    parameters.values = BoundValues::Positional(values);
    Request::Query(Query {
        query: cql.into(),
        parameters,
    })
}

fn execute(id: &Bytes, metadata_id: &Bytes, values: Vec<Value>, skip_metadata: bool) -> Request {
    let mut parameters = QueryParameters::new(Consistency::One);
    parameters.values = BoundValues::Positional(values);
    parameters.skip_metadata = skip_metadata;
    Request::Execute(Execute {
        id: id.clone(),
        result_metadata_id: Some(metadata_id.clone()),
        parameters,
    })
}

fn int(v: i32) -> Value {
    Value::Set(Bytes::copy_from_slice(&v.to_be_bytes()))
}

fn rows(response: ResponseFrame) -> Rows {
    match response.response {
        Response::Result(ResultBody::Rows(rows)) => rows,
        other => panic!("expected rows, got {other:?}"),
    }
}

fn prepared(response: ResponseFrame) -> Prepared {
    match response.response {
        Response::Result(ResultBody::Prepared(p)) => p,
        other => panic!("expected a prepared result, got {other:?}"),
    }
}

fn column_names(rows: &Rows) -> Vec<String> {
    rows.metadata
        .columns
        .as_ref()
        .expect("metadata")
        .iter()
        .map(|c| c.name.clone())
        .collect()
}

/// Runs a statement that must succeed.
async fn ok(client: &mut V5Client, cql: &str) {
    let response = client.request(query(cql)).await;
    assert!(
        matches!(response.response, Response::Result(_)),
        "{cql}: {response:?}"
    );
}

/// Bytes that LZ4 cannot shrink much (an xorshift stream), so segments stay large.
fn noise(len: usize, seed: u64) -> Bytes {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_then_segments_with_and_without_lz4() {
    let mut node = TestNode::start().await;
    for lz4 in [false, true] {
        let mut client = V5Client::connect(node.cql_address(), lz4).await;
        let local = rows(
            client
                .request(query(
                    "SELECT cluster_name, release_version FROM system.local WHERE key = 'local'",
                ))
                .await,
        );
        assert_eq!(local.rows_count, 1);
        assert_eq!(client.received, vec![true], "one self-contained segment");
        // OPTIONS after the handshake is framed too (spec v5 §2.3.1).
        let supported = client.request(Request::Options).await;
        assert!(matches!(supported.response, Response::Supported(_)));
        assert_eq!(client.received.len(), 2);
    }
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snappy_is_refused_in_v5_and_the_handshake_can_go_on() {
    let mut node = TestNode::start().await;
    let mut client = V5Client::open(node.cql_address()).await;
    let refused = client.request(startup(Some(Compression::Snappy))).await;
    let Response::Error(error) = refused.response else {
        panic!("{refused:?}");
    };
    assert_eq!(error.kind, ErrorKind::ProtocolError);
    assert_eq!(
        error.message,
        "Snappy compression is not supported in protocol V5"
    );
    // Still unframed: the connection is not started.
    let ready = client.request(startup(Some(Compression::Lz4))).await;
    assert_eq!(ready.response, Response::Ready);
    client.start_framing(true);
    assert_eq!(
        rows(client.request(query("SELECT key FROM system.local")).await).rows_count,
        1
    );
    // A second STARTUP cannot change the framing of a started v5 connection.
    let again = client.request(startup(None)).await;
    assert!(
        matches!(&again.response, Response::Error(e) if e.kind == ErrorKind::ProtocolError),
        "{again:?}"
    );
    assert_eq!(
        rows(client.request(query("SELECT key FROM system.local")).await).rows_count,
        1
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_versions_step_down_and_the_beta_flag_is_ignored_on_v5() {
    let mut node = TestNode::start().await;
    // v6: the step-down error, as a v4 frame, then the connection closes.
    let mut client = V5Client::open(node.cql_address()).await;
    let (_, mut envelope) = client.envelope(Request::Options);
    envelope[0] = 6;
    client.send(&[envelope]).await;
    let mut raw = Vec::new();
    tokio::time::timeout(TIMEOUT, client.socket.read_to_end(&mut raw))
        .await
        .expect("closes in time")
        .expect("reads");
    assert_eq!(raw[0], 0x84, "answered in v4");
    let (_, error) = ResponseFrame::decode(&raw, None, MAX_RESPONSE_BYTES).expect("decodes");
    let Response::Error(error) = error.response else {
        panic!("{error:?}");
    };
    assert_eq!(
        error.message,
        "Invalid or unsupported protocol version (6); supported versions are (3/v3, 4/v4, 5/v5)"
    );
    // v5 is not a beta version: USE_BETA changes nothing, as in Cassandra.
    let mut client = V5Client::open(node.cql_address()).await;
    let (_, envelope) = client.envelope_with(Request::Options, true);
    client.send(&[envelope]).await;
    let supported = client.response().await.expect("answered");
    assert!(matches!(supported.response, Response::Supported(_)));
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_carry_a_result_metadata_id_that_follows_the_table() {
    let mut node = TestNode::start().await;
    let mut client = V5Client::connect(node.cql_address(), true).await;
    ok(
        &mut client,
        "CREATE KEYSPACE v5ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    )
    .await;
    ok(
        &mut client,
        "CREATE TABLE v5ks.t (k int PRIMARY KEY, a text)",
    )
    .await;
    ok(&mut client, "INSERT INTO v5ks.t (k, a) VALUES (1, 'one')").await;

    let select = "SELECT * FROM v5ks.t WHERE k = ?";
    let prepare = || {
        Request::Prepare(Prepare {
            query: select.into(),
            keyspace: None,
        })
    };
    let first = prepared(client.request(prepare()).await);
    let old_id = first.result_metadata_id.clone().expect("v5 has one");
    assert_eq!(old_id.len(), 16);
    assert_eq!(
        prepared(client.request(prepare()).await).result_metadata_id,
        Some(old_id.clone()),
        "the id is stable"
    );

    // Up to date and skipping metadata: none sent.
    let fresh = rows(
        client
            .request(execute(&first.id, &old_id, vec![int(1)], true))
            .await,
    );
    assert_eq!(fresh.metadata.columns, None);
    assert_eq!(fresh.metadata.new_metadata_id, None);
    assert_eq!(fresh.rows_count, 1);
    // Up to date, metadata asked for: sent, not flagged as changed.
    let asked = rows(
        client
            .request(execute(&first.id, &old_id, vec![int(1)], false))
            .await,
    );
    assert_eq!(column_names(&asked), vec!["k", "a"]);
    assert_eq!(asked.metadata.new_metadata_id, None);
    // An id the server does not know: Metadata_changed with the current id.
    let unknown = rows(
        client
            .request(execute(&first.id, &Bytes::new(), vec![int(1)], true))
            .await,
    );
    assert_eq!(unknown.metadata.new_metadata_id, Some(old_id.clone()));
    assert_eq!(column_names(&unknown), vec!["k", "a"]);

    // The table gains a column: the statement is forgotten, as Cassandra evicts it, and the
    // client prepares it again; an EXECUTE still holding the old result metadata id gets
    // Metadata_changed with the new one.
    ok(&mut client, "ALTER TABLE v5ks.t ADD b int").await;
    let evicted = client
        .request(execute(&first.id, &old_id, vec![int(1)], true))
        .await;
    assert!(
        matches!(&evicted.response, Response::Error(e) if matches!(e.kind, ErrorKind::Unprepared { .. })),
        "{evicted:?}"
    );
    let reprepared = prepared(client.request(prepare()).await);
    assert_eq!(reprepared.id, first.id);
    let changed = rows(
        client
            .request(execute(&first.id, &old_id, vec![int(1)], true))
            .await,
    );
    let new_id = changed.metadata.new_metadata_id.clone().expect("changed");
    assert_ne!(new_id, old_id);
    assert_eq!(column_names(&changed), vec!["k", "a", "b"]);
    let cells = changed.cells().expect("cells");
    assert_eq!(cells[0].len(), 3);
    assert_eq!(cells[0][1].as_deref(), Some(&b"one"[..]));
    assert_eq!(cells[0][2], None);
    // With the new id the client may skip metadata again.
    let settled = rows(
        client
            .request(execute(&first.id, &new_id, vec![int(1)], true))
            .await,
    );
    assert_eq!(settled.metadata.columns, None);
    assert_eq!(settled.metadata.new_metadata_id, None);
    // Prepared again, it had the new id and metadata.
    assert_eq!(reprepared.result_metadata_id, Some(new_id));
    assert_eq!(reprepared.result_metadata.column_count, 3);

    // A statement without rows has the id of empty metadata; its EXECUTE is Void.
    let insert = prepared(
        client
            .request(Request::Prepare(Prepare {
                query: "INSERT INTO t (k, a) VALUES (?, ?)".into(),
                keyspace: Some("v5ks".into()),
            }))
            .await,
    );
    let empty_id = insert.result_metadata_id.clone().expect("v5 has one");
    let void = client
        .request(execute(
            &insert.id,
            &empty_id,
            vec![int(2), Value::Set(Bytes::from_static(b"two"))],
            false,
        ))
        .await;
    assert_eq!(void.response, Response::Result(ResultBody::Void));
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_and_now_in_seconds_flags() {
    let mut node = TestNode::start().await;
    let mut client = V5Client::connect(node.cql_address(), false).await;
    ok(
        &mut client,
        "CREATE KEYSPACE flags WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    )
    .await;
    ok(
        &mut client,
        "CREATE TABLE flags.t (k int PRIMARY KEY, v int)",
    )
    .await;
    ok(
        &mut client,
        "INSERT INTO flags.t (k, v) VALUES (1, 10) USING TTL 1000",
    )
    .await;
    let in_keyspace = |now_in_seconds: Option<i32>| {
        let mut parameters = QueryParameters::new(Consistency::One);
        parameters.keyspace = Some("flags".into());
        parameters.now_in_seconds = now_in_seconds;
        Request::Query(Query {
            query: "SELECT v FROM t WHERE k = 1".into(),
            parameters,
        })
    };
    // The QUERY names its keyspace (0x80): the unqualified table resolves there.
    assert_eq!(rows(client.request(in_keyspace(None)).await).rows_count, 1);
    // now_in_seconds (0x100) past the TTL: the cell has expired for this read.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let later = i32::try_from(now + 5000).expect("fits");
    let expired = rows(client.request(in_keyspace(Some(later))).await);
    assert_eq!(expired.rows_count, 0, "{:?}", expired.cells());
    // In a write it sets the local deletion time: written "5000 s ago" with a TTL of 1000 s,
    // the row has expired by now.
    let mut parameters = QueryParameters::new(Consistency::One);
    parameters.now_in_seconds = Some(i32::try_from(now - 5000).expect("fits"));
    let written = client
        .request(Request::Query(Query {
            query: "INSERT INTO flags.t (k, v) VALUES (1, 11) USING TTL 1000".into(),
            parameters,
        }))
        .await;
    assert_eq!(written.response, Response::Result(ResultBody::Void));
    let gone = rows(client.request(in_keyspace(None)).await);
    assert_eq!(gone.rows_count, 0, "{:?}", gone.cells());
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelopes_larger_than_a_segment_travel_both_ways() {
    let mut node = TestNode::start().await;
    for lz4 in [false, true] {
        let mut client = V5Client::connect(node.cql_address(), lz4).await;
        let ks = if lz4 { "big_lz4" } else { "big_plain" };
        ok(
            &mut client,
            &format!(
                "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
            ),
        )
        .await;
        ok(
            &mut client,
            &format!("CREATE TABLE {ks}.t (k int, c int, v blob, PRIMARY KEY (k, c))"),
        )
        .await;
        // A request over two segments' worth: the client splits it, the server reassembles it.
        let blobs: Vec<Bytes> = (0..3)
            .map(|c| noise(if c == 0 { 300_000 } else { 100_000 }, c as u64 + 7))
            .collect();
        for (c, blob) in blobs.iter().enumerate() {
            let response = client
                .request(query_with(
                    &format!("INSERT INTO {ks}.t (k, c, v) VALUES (0, ?, ?)"),
                    vec![int(c as i32), Value::Set(blob.clone())],
                ))
                .await;
            assert_eq!(response.response, Response::Result(ResultBody::Void));
        }
        // A response of about 500 KB comes back over non-self-contained segments.
        client.received.clear();
        let result = rows(
            client
                .request(query(&format!("SELECT c, v FROM {ks}.t WHERE k = 0")))
                .await,
        );
        assert!(
            client.received.iter().filter(|s| !**s).count() >= 4,
            "split over segments: {:?}",
            client.received
        );
        let cells = result.cells().expect("cells");
        assert_eq!(cells.len(), 3);
        for (c, row) in cells.iter().enumerate() {
            assert_eq!(row[1].as_ref(), Some(&blobs[c]), "row {c}");
        }
        // The connection goes on with small messages afterwards.
        assert_eq!(
            rows(client.request(query("SELECT key FROM system.local")).await).rows_count,
            1
        );
    }
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_all_answered() {
    let mut node = TestNode::start().await;
    let mut client = V5Client::connect(node.cql_address(), true).await;
    let mut envelopes = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..200 {
        let (stream, envelope) = client.envelope(query("SELECT key FROM system.local"));
        streams.push(stream);
        envelopes.push(envelope);
    }
    // All of them in as few segments as the client can make.
    client.send(&envelopes).await;
    let mut answered = Vec::new();
    for _ in 0..streams.len() {
        let response = client.response().await.expect("answered");
        assert_eq!(rows(response.clone()).rows_count, 1);
        answered.push(response.stream);
    }
    answered.sort_unstable();
    assert_eq!(answered, streams);
    assert!(client.received.iter().all(|s| *s));
    assert!(client.received.len() <= streams.len());
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_segment_closes_only_its_connection() {
    let mut node = TestNode::start().await;
    let addr = node.cql_address();
    let mut bystander = V5Client::connect(addr, true).await;

    // A payload whose CRC32 does not match, a header whose CRC24 does not match, and a
    // self-contained segment ending inside an envelope: each closes its connection.
    for (lz4, breakage) in [
        (false, "payload"),
        (true, "payload"),
        (false, "header"),
        (true, "partial"),
    ] {
        let mut victim = V5Client::connect(addr, lz4).await;
        let (_, envelope) = victim.envelope(query("SELECT key FROM system.local"));
        let mut wire = BytesMut::new();
        match breakage {
            "partial" => {
                encode_segment(&envelope[..envelope.len() - 3], true, lz4, &mut wire).unwrap()
            }
            _ => encode_segment(&envelope, true, lz4, &mut wire).unwrap(),
        }
        match breakage {
            "payload" => {
                let at = wire.len() - 6;
                wire[at] ^= 0x55;
            }
            "header" => wire[1] ^= 0x01,
            _ => {}
        }
        victim.socket.write_all(&wire).await.expect("writes");
        let answers = victim.until_closed().await;
        for answer in &answers {
            assert!(
                matches!(&answer.response, Response::Error(e) if e.kind == ErrorKind::ProtocolError),
                "{answer:?}"
            );
        }
        // The others carry on.
        assert_eq!(
            rows(
                bystander
                    .request(query("SELECT key FROM system.local"))
                    .await
            )
            .rows_count,
            1,
            "after a broken {breakage} segment"
        );
    }
    // A segment cut short by the client going away: nothing breaks either.
    let mut quitter = V5Client::connect(addr, false).await;
    let (_, envelope) = quitter.envelope(query("SELECT key FROM system.local"));
    let mut wire = BytesMut::new();
    encode_segment(&envelope, true, false, &mut wire).unwrap();
    quitter
        .socket
        .write_all(&wire[..wire.len() / 2])
        .await
        .unwrap();
    drop(quitter);
    let mut newcomer = V5Client::connect(addr, false).await;
    assert_eq!(
        rows(
            newcomer
                .request(query("SELECT key FROM system.local"))
                .await
        )
        .rows_count,
        1
    );
    assert_eq!(
        rows(
            bystander
                .request(query("SELECT key FROM system.local"))
                .await
        )
        .rows_count,
        1
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_frame_limit_applies_to_envelopes_and_refuses_only_the_envelope() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = test_config(dir.path());
    config.native_transport_max_frame_size_bytes = 256 * 1024;
    let node = Node::start(&config).await.expect("starts");
    let mut node = TestNode {
        node: Some(node),
        dir,
    };
    let mut client = V5Client::connect(node.cql_address(), false).await;
    // 400 KB of query text: over the limit, sent over non-self-contained segments.
    let (stream, envelope) = client.envelope(query(&format!(
        "SELECT key FROM system.local /* {} */",
        "x".repeat(400_000)
    )));
    client.send(&[envelope]).await;
    let refused = client.response().await.expect("answered");
    assert_eq!(refused.stream, stream);
    let Response::Error(error) = refused.response else {
        panic!("{refused:?}");
    };
    assert_eq!(error.kind, ErrorKind::ProtocolError);
    assert!(
        error.message.contains("Request is too big"),
        "{}",
        error.message
    );
    // The connection is still in step.
    assert_eq!(
        rows(client.request(query("SELECT key FROM system.local")).await).rows_count,
        1
    );
    // Just under the limit is fine.
    let text = format!("SELECT key FROM system.local /* {} */", "y".repeat(200_000));
    assert_eq!(rows(client.request(query(&text)).await).rows_count, 1);
    node.stop().await;
}

/// A read that meets more tombstones than `tombstone_failure_threshold` fails with
/// ReadFailure, whose v5 reasons name the replica with Cassandra's READ_TOO_MANY_TOMBSTONES
/// (1), which drivers show as the cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_tombstones_is_a_read_failure_with_its_reason() {
    let mut node = TestNode::start_with(|c| c.tombstone_failure_threshold = 100).await;
    let mut client = V5Client::connect(node.cql_address(), false).await;
    ok(
        &mut client,
        "CREATE KEYSPACE tomb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    )
    .await;
    ok(
        &mut client,
        "CREATE TABLE tomb.t (p int, c int, v int, PRIMARY KEY (p, c))",
    )
    .await;
    for c in 0..150 {
        ok(
            &mut client,
            &format!("DELETE FROM tomb.t WHERE p = 1 AND c = {c}"),
        )
        .await;
    }
    let response = client
        .request(query("SELECT * FROM tomb.t WHERE p = 1"))
        .await;
    match response.response {
        Response::Error(e) => match e.kind {
            ErrorKind::ReadFailure { failures, .. } => {
                assert_eq!(failures.reasons, vec![("127.0.0.1".parse().unwrap(), 1)]);
                assert!(e.message.contains("tombstone_failure_threshold is 100"));
            }
            other => panic!("{other:?}: {}", e.message),
        },
        other => panic!("{other:?}"),
    }
    node.stop().await;
}
