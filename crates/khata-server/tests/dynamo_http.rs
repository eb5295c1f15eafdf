//! The DynamoDB endpoint over raw HTTP/1.1: every answer has `x-amz-crc32` (the CRC32 of its
//! body) and an `x-amzn-RequestId`; keep-alive; DynamoDB's errors for malformed JSON, unknown
//! operations, the Streams API, oversized bodies (declared or streamed); the health answer;
//! garbage on the socket leaves the node serving; bad input of every kind (malformed JSON, bad
//! types, deep nesting, huge numbers and bodies) gets its error and loses no data; requests
//! that take too long to arrive and idle connections time out, and a shutdown closes at once
//! the connections that have no whole request.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use khata_dynamo::http::{DynamoConfig, Endpoint};
use khata_dynamo::http1::Timeouts;
use khata_server::http_server::HttpServer;
use khata_server::request_threads::RequestThreads;
use support::TestNode;

/// One parsed answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }
}

/// Read one answer with a `Content-Length` from `stream`.
fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("read");
        assert!(
            n == 1,
            "connection closed in the head: {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse().unwrap())
        .expect("content-length");
    let mut body = vec![0; length];
    stream.read_exact(&mut body).unwrap();
    Answer {
        status,
        headers,
        body,
    }
}

fn connect(address: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(address).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

fn post(stream: &mut TcpStream, target: &str, body: &[u8]) -> Answer {
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: {target}\r\n\
         Content-Type: application/x-amz-json-1.0\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    read_answer(stream)
}

fn check_framing(a: &Answer) {
    let crc: u32 = a
        .header("x-amz-crc32")
        .expect("x-amz-crc32")
        .parse()
        .unwrap();
    assert_eq!(crc, crc32fast::hash(&a.body), "crc32 of {}", a.text());
    let id = a.header("x-amzn-RequestId").expect("request id");
    assert_eq!(id.len(), 52);
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    );
}

fn error_type(a: &Answer) -> String {
    a.json()["__type"].as_str().unwrap_or("").to_string()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_framed_and_errors_are_dynamodbs() {
    let mut node = TestNode::start().await;
    let address = node.dynamo_address();
    blocking(move || {
        let mut s = connect(address);
        // Two requests on one kept-alive connection.
        let a = post(&mut s, "DynamoDB_20120810.ListTables", b"{}");
        assert_eq!(a.status, 200, "{}", a.text());
        check_framing(&a);
        assert_eq!(a.header("content-type"), Some("application/x-amz-json-1.0"));
        assert_eq!(a.json()["TableNames"], serde_json::json!([]));
        let b = post(&mut s, "DynamoDB_20120810.ListTables", b"{}");
        check_framing(&b);
        assert_ne!(a.header("x-amzn-RequestId"), b.header("x-amzn-RequestId"));

        let a = post(&mut s, "DynamoDB_20120810.ListTables", b"{\"Limit\": ");
        assert_eq!(a.status, 400);
        check_framing(&a);
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#SerializationException"
        );

        let a = post(&mut s, "DynamoDB_20120810.ListTables", b"[1, 2]");
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#SerializationException"
        );

        let a = post(&mut s, "DynamoDB_20120810.FlyToTheMoon", b"{}");
        assert_eq!(a.status, 400);
        check_framing(&a);
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#UnknownOperationException"
        );
        let a = post(&mut s, "", b"{}");
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#UnknownOperationException"
        );
        // The Streams API answers on the same endpoint; an unknown Streams operation is
        // unknown there too.
        let a = post(&mut s, "DynamoDBStreams_20120810.ListStreams", b"{}");
        assert_eq!(a.status, 200);
        assert_eq!(a.json(), serde_json::json!({ "Streams": [] }));
        let a = post(&mut s, "DynamoDBStreams_20120810.PutRecord", b"{}");
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#UnknownOperationException"
        );

        let a = post(
            &mut s,
            "DynamoDB_20120810.DescribeTable",
            br#"{"TableName": "nothere"}"#,
        );
        assert_eq!(a.status, 400);
        assert_eq!(
            a.json(),
            serde_json::json!({
                "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                "message": "Requested resource not found: Table: nothere not found"
            })
        );

        // Deep nesting is refused by the JSON reader, not by the stack.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let a = post(&mut s, "DynamoDB_20120810.ListTables", deep.as_bytes());
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#SerializationException"
        );

        // The 1.1 content type is answered in kind.
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
             Content-Type: application/x-amz-json-1.1\r\nContent-Length: 2\r\n\r\n{{}}"
        )
        .unwrap();
        let a = read_answer(&mut s);
        assert_eq!(a.status, 200);
        assert_eq!(a.header("content-type"), Some("application/x-amz-json-1.1"));

        // So is plain JSON (dynalite's AWS-validated listTables test).
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
             Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        )
        .unwrap();
        let a = read_answer(&mut s);
        assert_eq!(a.status, 200);
        assert_eq!(a.header("content-type"), Some("application/json"));

        // Health.
        write!(s, "GET / HTTP/1.1\r\nHost: localhost:8000\r\n\r\n").unwrap();
        let a = read_answer(&mut s);
        assert_eq!(a.status, 200);
        assert!(
            a.text().starts_with("healthy: localhost:8000"),
            "{}",
            a.text()
        );
        check_framing(&a);
    })
    .await;
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_are_refused_before_they_are_buffered() {
    let mut node = TestNode::start().await;
    let address = node.dynamo_address();
    blocking(move || {
        // Declared: refused from the head alone, nothing else sent.
        let mut s = connect(address);
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
             Content-Type: application/x-amz-json-1.0\r\nContent-Length: {}\r\n\r\n",
            16 * 1024 * 1024 + 1
        )
        .unwrap();
        let a = read_answer(&mut s);
        assert_eq!(a.status, 413);
        check_framing(&a);
        assert_eq!(
            error_type(&a),
            "com.amazon.coral.service#RequestEntityTooLarge"
        );

        // Streamed without a length: refused once the limit is passed.
        let mut s = connect(address);
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
             Content-Type: application/x-amz-json-1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        .unwrap();
        let chunk = vec![b' '; 1024 * 1024];
        for _ in 0..17 {
            if write!(s, "{:x}\r\n", chunk.len()).is_err()
                || s.write_all(&chunk).is_err()
                || s.write_all(b"\r\n").is_err()
            {
                break; // the server may stop reading once it has answered
            }
        }
        let _ = s.write_all(b"0\r\n\r\n");
        let a = read_answer(&mut s);
        assert_eq!(a.status, 413);
    })
    .await;
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_leaves_the_node_serving() {
    let mut node = TestNode::start().await;
    let address = node.dynamo_address();
    blocking(move || {
        let garbage: [&[u8]; 6] = [
            b"\x00\x01\x02\x03\r\n\r\n",
            b"GET\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nab",
            b"PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: a\r\nX-Amz-Target: DynamoDB_20120810.CreateTable\r\nContent-Length: 26\r\n\r\n{\"TableName\": [1, {\"a\":2}]}",
        ];
        for g in garbage {
            let mut s = connect(address);
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = s.write_all(g);
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
        }
        let mut s = connect(address);
        let a = post(&mut s, "DynamoDB_20120810.ListTables", b"{}");
        assert_eq!(a.status, 200);
    })
    .await;
    node.stop().await;
}

/// Bad input of every kind on one keep-alive connection, after an item was written: each gets
/// DynamoDB's error, the connection and the node keep serving, and the item is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_dynamodb_errors_and_loses_nothing() {
    let mut node = TestNode::start().await;
    let address = node.dynamo_address();
    blocking(move || {
        let mut s = connect(address);
        let create = br#"{"TableName": "bad", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}"#;
        assert_eq!(post(&mut s, "DynamoDB_20120810.CreateTable", create).status, 200);
        let put = br#"{"TableName": "bad", "Item": {"id": {"S": "kept"}, "n": {"N": "42"}}}"#;
        assert_eq!(post(&mut s, "DynamoDB_20120810.PutItem", put).status, 200);

        let nested = |depth: usize| {
            let mut v = r#"{"S": "leaf"}"#.to_string();
            for _ in 0..depth {
                v = format!(r#"{{"M": {{"a": {v}}}}}"#);
            }
            format!(r#"{{"TableName": "bad", "Item": {{"id": {{"S": "deep"}}, "d": {v}}}}}"#)
        };
        let deep_json = "[".repeat(100_000);
        let cases: Vec<(&str, Vec<u8>, u16, &str, &str)> = vec![
            // (operation, body, status, __type suffix, words in the message)
            ("PutItem", b"{\"TableName\": \"bad\", \"Item\": ".to_vec(), 400,
             "SerializationException", ""),
            ("PutItem", b"\xff\xfe not json".to_vec(), 400, "SerializationException", ""),
            ("FlyToTheMoon", b"{}".to_vec(), 400, "UnknownOperationException", ""),
            ("PutItem", br#"{"TableName": "bad", "Item": {"id": {"S": "x"}, "n": {"N": "abc"}}}"#.to_vec(),
             400, "ValidationException", "cannot be converted to a numeric value"),
            ("PutItem", br#"{"TableName": "bad", "Item": {"id": {"S": 5}}}"#.to_vec(), 400,
             "SerializationException", ""),
            ("PutItem", br#"{"TableName": "bad", "Item": {"id": {"N": "5"}}}"#.to_vec(), 400,
             "ValidationException", "Type mismatch for key"),
            ("PutItem", br#"{"TableName": "bad", "Item": {"id": {"S": "x"}, "n": {"N": "1e126"}}}"#.to_vec(),
             400, "ValidationException", "Number overflow"),
            ("PutItem", br#"{"TableName": "bad", "Item": {"id": {"S": "x"}, "s": {"SS": ["a", "a"]}}}"#.to_vec(),
             400, "ValidationException", "duplicates"),
            ("PutItem", nested(40).into_bytes(), 400, "ValidationException", "Nesting Levels"),
            ("PutItem", deep_json.into_bytes(), 400, "SerializationException", ""),
            ("GetItem", br#"{"TableName": "bad", "Key": {"id": {"B": "not base64!"}}}"#.to_vec(), 400,
             "SerializationException", ""),
            ("UpdateItem", br#"{"TableName": "bad", "Key": {"id": {"S": "kept"}}, "UpdateExpression": "SET n = n +"}"#.to_vec(),
             400, "ValidationException", "Invalid UpdateExpression"),
            ("Query", br#"{"TableName": "nope", "KeyConditionExpression": "id = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}}"#.to_vec(),
             400, "ResourceNotFoundException", ""),
        ];
        for (op, body, status, kind, words) in cases {
            let a = post(&mut s, &format!("DynamoDB_20120810.{op}"), &body);
            check_framing(&a);
            let text = a.text();
            assert_eq!(a.status, status, "{op}: {text}");
            assert!(error_type(&a).ends_with(kind), "{op}: {text}");
            assert!(text.contains(words), "{op}: {text}");
        }
        // A body over 16 MB: 413, and the connection closes; the node serves a new one.
        let mut big = connect(address);
        write!(
            big,
            "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\n\
             Content-Length: {}\r\n\r\n",
            16 * 1024 * 1024 + 1
        )
        .unwrap();
        let _ = big.write_all(&[b' '; 64 * 1024]);
        let a = read_answer(&mut big);
        assert_eq!(a.status, 413, "{}", a.text());

        let get = br#"{"TableName": "bad", "Key": {"id": {"S": "kept"}}, "ConsistentRead": true}"#;
        let a = post(&mut s, "DynamoDB_20120810.GetItem", get);
        assert_eq!(a.status, 200);
        assert_eq!(a.json()["Item"]["n"]["N"], "42", "{}", a.text());
        let a = post(&mut connect(address), "DynamoDB_20120810.Scan", br#"{"TableName": "bad"}"#);
        assert_eq!(a.json()["Count"], 1, "{}", a.text());
    })
    .await;
    node.stop().await;
}

/// Read an answer's head only (the answer to a `HEAD` has no body).
fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            stream.read(&mut byte).expect("read"),
            1,
            "closed in the head"
        );
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

/// Whether the server has closed `stream` (it reads to the end without more bytes).
fn closed(stream: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    matches!(stream.read_to_end(&mut rest), Ok(0))
}

/// HTTP/1.1 as clients speak it: pipelined requests answered in order, chunked bodies,
/// `Expect: 100-continue`, `HEAD`, HTTP/1.0 with and without keep-alive, `Connection: close`,
/// and the framings that could smuggle a request refused with `400` and a closed connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_1_1_as_clients_speak_it() {
    let mut node = TestNode::start().await;
    let address = node.dynamo_address();
    blocking(move || {
        let request = |extra: &str, body: &str| {
            format!(
                "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
                 Content-Type: application/x-amz-json-1.0\r\n{extra}\r\n{body}"
            )
        };
        // Three requests in one write: three answers, in order.
        let mut s = connect(address);
        let three = [
            request("Content-Length: 2\r\n", "{}"),
            request("Content-Length: 10\r\n", "{\"Limit\": "),
            request("Content-Length: 2\r\n", "{}"),
        ]
        .concat();
        s.write_all(three.as_bytes()).unwrap();
        let statuses: Vec<u16> = (0..3).map(|_| read_answer(&mut s).status).collect();
        assert_eq!(statuses, [200, 400, 200]);

        // A chunked body, in pieces.
        s.write_all(request("Transfer-Encoding: chunked\r\n", "1\r\n{\r\n").as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        s.write_all(b"1;ext\r\n}\r\n0\r\n\r\n").unwrap();
        let a = read_answer(&mut s);
        assert_eq!(a.status, 200, "{}", a.text());
        check_framing(&a);

        // Expect: 100-continue: the interim answer comes before the body is sent.
        s.write_all(request("Content-Length: 2\r\nExpect: 100-continue\r\n", "").as_bytes())
            .unwrap();
        assert_eq!(read_head(&mut s), "HTTP/1.1 100 Continue\r\n\r\n");
        s.write_all(b"{}").unwrap();
        assert_eq!(read_answer(&mut s).status, 200);

        // HEAD: the head of the answer, no body; the connection carries on.
        write!(s, "HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let head = read_head(&mut s);
        assert!(head.starts_with("HTTP/1.1 404 Not Found\r\n"), "{head}");
        s.write_all(request("Content-Length: 2\r\n", "{}").as_bytes())
            .unwrap();
        assert_eq!(read_answer(&mut s).status, 200);

        // Connection: close: answered, then closed.
        s.write_all(request("Content-Length: 2\r\nConnection: close\r\n", "{}").as_bytes())
            .unwrap();
        let a = read_answer(&mut s);
        assert_eq!((a.status, a.header("connection")), (200, Some("close")));
        assert!(closed(&mut s));

        // HTTP/1.0: closed after the answer unless it asks for keep-alive.
        let mut s = connect(address);
        write!(s, "GET / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\n\r\n").unwrap();
        let a = read_answer(&mut s);
        assert_eq!((a.status, a.header("connection")), (200, Some("keep-alive")));
        write!(s, "GET / HTTP/1.0\r\nHost: h\r\n\r\n").unwrap();
        assert_eq!(read_answer(&mut s).status, 200);
        assert!(closed(&mut s));

        // Framings that could smuggle a request: 400, closed.
        for extra in [
            "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
            "Content-Length: 2\r\nContent-Length: 3\r\n",
            "Transfer-Encoding: gzip\r\n",
        ] {
            let mut s = connect(address);
            s.write_all(request(extra, "{}").as_bytes()).unwrap();
            let head = read_head(&mut s);
            assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{extra:?}: {head}");
            assert!(closed(&mut s), "{extra:?}");
        }
        // A malformed chunk: 400, closed.
        let mut s = connect(address);
        s.write_all(request("Transfer-Encoding: chunked\r\n", "zz\r\n{}\r\n0\r\n\r\n").as_bytes())
            .unwrap();
        assert!(read_head(&mut s).starts_with("HTTP/1.1 400 Bad Request\r\n"));
        assert!(closed(&mut s));

        let mut s = connect(address);
        assert_eq!(post(&mut s, "DynamoDB_20120810.ListTables", b"{}").status, 200);
    })
    .await;
    node.stop().await;
}

/// The endpoint of `node` served on a port of its own with `timeouts`, as the node serves it.
async fn serve_with_timeouts(node: &TestNode, timeouts: Timeouts) -> HttpServer {
    let endpoint = Arc::new(Endpoint::new(
        node.node().coordinator().clone(),
        DynamoConfig {
            timeouts,
            ..DynamoConfig::default()
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    HttpServer::start_connections(
        "test DynamoDB endpoint",
        listener,
        move |stream, closing| khata_dynamo::http1::serve(stream, endpoint.clone(), closing),
        RequestThreads::start("test-dynamo", 2).unwrap(),
    )
    .unwrap()
}

/// A request head of about 230 bytes, as a slowloris client sends it, one byte at a time.
const SLOW_HEAD: &[u8] = b"POST / HTTP/1.1\r\nHost: localhost\r\n\
    X-Amz-Target: DynamoDB_20120810.ListTables\r\n\
    Content-Type: application/x-amz-json-1.0\r\nUser-Agent: slowloris/1.0 (slow)\r\n\
    Accept-Encoding: identity\r\nContent-Length: 2\r\nX-Padding: aaaaaaaaaaaaaa\r\n\r\n";

/// Timeouts the tests can wait out.
const SHORT: Timeouts = Timeouts {
    request: Duration::from_millis(400),
    request_min_bytes_per_second: 32 * 1024,
    idle: Duration::from_millis(600),
};

/// A request that takes longer than its timeout to arrive gets `408` and a closed connection,
/// however steadily its bytes trickle in (slowloris), in its head or its body; a connection
/// idle longer than the idle timeout is closed silently; neither cuts off a client that keeps
/// its connection busy, nor a big body that keeps coming.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_requests_and_idle_connections_time_out() {
    let mut node = TestNode::start().await;
    let server = serve_with_timeouts(&node, SHORT).await;
    let address = server.address();
    // The cases run side by side, so the test takes about as long as the longest.
    blocking(move || {
        std::thread::scope(|cases| {
            cases.spawn(|| slow_heads_time_out(address));
            cases.spawn(|| stalled_body_times_out(address));
            cases.spawn(|| idle_connection_is_closed_silently(address));
            cases.spawn(|| busy_connection_stays_open(address));
            cases.spawn(|| big_body_that_keeps_coming_is_answered(address));
        });
    })
    .await;
    server.shutdown(Duration::from_secs(10)).await;
    node.stop().await;
}

/// A `408` answer, then the connection closed.
fn request_timed_out(s: &mut TcpStream, what: &str) {
    let head = read_head(s);
    assert!(
        head.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{what}: {head}"
    );
    assert!(head.contains("connection: close\r\n"), "{what}: {head}");
    assert!(closed(s), "{what}");
}

/// Slowloris: heads sent a byte every 50 ms (11.5 s for the head) are cut at the timeout.
fn slow_heads_time_out(address: SocketAddr) {
    let started = std::time::Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let slow: Vec<_> = (0..8)
        .map(|_| {
            let s = connect(address);
            let mut writer = s.try_clone().unwrap();
            let done = done.clone();
            let trickle = std::thread::spawn(move || {
                for byte in SLOW_HEAD {
                    if done.load(Ordering::Relaxed) || writer.write_all(&[*byte]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            (s, trickle)
        })
        .collect();
    let mut trickles = Vec::new();
    for (mut s, trickle) in slow {
        request_timed_out(&mut s, "slow head");
        trickles.push(trickle);
    }
    let took = started.elapsed();
    assert!(
        (SHORT.request..Duration::from_millis(1500)).contains(&took),
        "slow heads closed after {took:?}"
    );
    // Stop sending, so the server's lingering reads end.
    done.store(true, Ordering::Relaxed);
    for trickle in trickles {
        trickle.join().unwrap();
    }
}

/// A whole head whose body stalls halfway.
fn stalled_body_times_out(address: SocketAddr) {
    let mut s = connect(address);
    let started = std::time::Instant::now();
    s.write_all(&[SLOW_HEAD, b"{"].concat()).unwrap();
    request_timed_out(&mut s, "stalled body");
    let took = started.elapsed();
    assert!(
        (SHORT.request..Duration::from_millis(1500)).contains(&took),
        "stalled body closed after {took:?}"
    );
}

/// An idle connection is closed without a word once the idle timeout passes.
fn idle_connection_is_closed_silently(address: SocketAddr) {
    let mut s = connect(address);
    assert_eq!(
        post(&mut s, "DynamoDB_20120810.ListTables", b"{}").status,
        200
    );
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).unwrap(), 0, "closed silently");
    let took = started.elapsed();
    assert!(
        (SHORT.idle - Duration::from_millis(50)..Duration::from_millis(1500)).contains(&took),
        "idle connection closed after {took:?}"
    );
}

/// A connection used more often than the idle timeout stays open (1.2 s of requests).
fn busy_connection_stays_open(address: SocketAddr) {
    let mut s = connect(address);
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            post(&mut s, "DynamoDB_20120810.ListTables", b"{}").status,
            200
        );
    }
}

/// A body that keeps coming (16 KiB every 50 ms, 0.8 s in all, twice the request timeout)
/// earns its time.
fn big_body_that_keeps_coming_is_answered(address: SocketAddr) {
    let mut s = connect(address);
    let body = [&b"{"[..], &vec![b' '; 256 * 1024 - 2], b"}"].concat();
    write!(
        s,
        "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
         Content-Type: application/x-amz-json-1.0\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    for piece in body.chunks(16 * 1024) {
        std::thread::sleep(Duration::from_millis(50));
        s.write_all(piece).unwrap();
    }
    let a = read_answer(&mut s);
    assert_eq!(a.status, 200, "{}", a.text());
}

/// Connections to `address` that have sent half a head, a head and half its body, and a whole
/// request (answered: then idle), once the server has read what they sent.
fn connections_without_a_whole_request(address: SocketAddr) -> [TcpStream; 3] {
    let mut half_head = connect(address);
    half_head
        .write_all(b"POST / HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut half_body = connect(address);
    half_body.write_all(&[SLOW_HEAD, b"{"].concat()).unwrap();
    let mut idle = connect(address);
    assert_eq!(
        post(&mut idle, "DynamoDB_20120810.ListTables", b"{}").status,
        200
    );
    std::thread::sleep(Duration::from_millis(100));
    [half_head, half_body, idle]
}

/// At shutdown, connections with no whole request (half a head, a head and part of its body,
/// idle ones) are closed at once, with the node's own timeouts: the shutdown does not wait out
/// its grace (10 s) for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_connections_without_a_whole_request_at_once() {
    let mut node = TestNode::start().await;
    let server = serve_with_timeouts(&node, Timeouts::DEFAULT).await;
    let address = server.address();
    let clients = blocking(move || connections_without_a_whole_request(address)).await;
    let started = tokio::time::Instant::now();
    server.shutdown(Duration::from_secs(10)).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(500), "shutdown took {took:?}");
    blocking(move || {
        for mut s in clients {
            assert!(closed(&mut s));
        }
    })
    .await;

    // The node's own endpoint likewise: the whole node stops in well under its grace.
    let address = node.dynamo_address();
    let clients = blocking(move || connections_without_a_whole_request(address)).await;
    let started = tokio::time::Instant::now();
    node.stop().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "the node's shutdown took {took:?}"
    );
    blocking(move || {
        for mut s in clients {
            assert!(closed(&mut s));
        }
    })
    .await;
}
