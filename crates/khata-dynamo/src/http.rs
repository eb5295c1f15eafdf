//! The DynamoDB endpoint: JSON over HTTP/1.1, as DynamoDB's low-level API speaks it.
//!
//! Every request is `POST /` (DynamoDB ignores the path) with `X-Amz-Target:
//! DynamoDB_20120810.<Operation>` (or `DynamoDBStreams_20120810.<Operation>`), a JSON object
//! body of type `application/x-amz-json-1.0` (1.1 and `application/json` are accepted too, and
//! answered in kind), and, when access keys are configured, a SigV4 `Authorization` header ([`crate::auth`]).
//! Connections are kept alive; [`crate::http1`] serves them and frames bodies.
//!
//! Every answer carries `x-amzn-RequestId`, `x-amz-crc32` (the CRC32 of the body bytes as
//! sent, which the AWS SDKs check) and `Server: Server`, and has the request's JSON content
//! type. As DynamoDB does, an answer over [`GZIP_MIN_BYTES`] to a request whose
//! `Accept-Encoding` takes gzip is sent gzipped (`Content-Encoding: gzip`, the checksum over
//! the compressed bytes); a shorter one is sent as it is without looking at the request's
//! headers. The order of checks, each with DynamoDB's error ([`crate::error`]):
//!
//! 1. `GET` (any path): `200 healthy: <host>`, DynamoDB's health answer.
//! 2. A body larger than `max_request_size_bytes` (DynamoDB: 16 MB): 413
//!    `RequestEntityTooLarge`, decided by the connection ([`crate::http1`]) from
//!    `Content-Length` before anything is read, and while reading a chunked body, so no more
//!    than the limit is ever buffered.
//! 3. Another method than `POST`, or a content type that is not JSON: 404
//!    `UnknownOperationException`.
//! 4. The signature, when keys are configured.
//! 5. `X-Amz-Target`: `UnknownOperationException` for an operation we do not know.
//! 6. The body: `SerializationException` unless it is one JSON object (serde_json's
//!    recursion limit bounds nesting). The item operations' item member is read straight
//!    into an item ([`crate::ops::request`]); answers with items are printed straight into
//!    bytes ([`crate::reply`]).
//! 7. The operation ([`crate::ops`]): a panic in it becomes a 500 `InternalServerError` for
//!    that request, and the node serves on. Every request runs to its end in the connection's
//!    task, which reads nothing more from the socket meanwhile, so a client that goes away
//!    does not cut a write short.
//!
//! The server does not enforce DynamoDB's request-rate limits. Its connections time out as a
//! load balancer in front of DynamoDB would: a request that takes too long to arrive, or a
//! connection idle too long between requests, is closed ([`crate::http1::Timeouts`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt as _;
use khata_coordinator::Coordinator;
use khata_types::LocalTime;
use tracing::warn;

use crate::auth::{self, AccessKeys, SignedRequest};
use crate::error::{DynamoError, ErrorKind};
use crate::http1::{Head, Timeouts};
use crate::ops::request::Request as RequestBody;
use crate::ops::{Operations, RequestInfo};
use crate::reply::Reply;

/// DynamoDB's limit on a request body.
pub const DEFAULT_MAX_REQUEST_SIZE_BYTES: usize = 16 * 1024 * 1024;

/// The target prefix of DynamoDB's operations.
pub const DYNAMODB_TARGET: &str = "DynamoDB_20120810";
/// The target prefix of DynamoDB Streams' operations.
pub const STREAMS_TARGET: &str = "DynamoDBStreams_20120810";

/// Answers longer than this are gzipped for a client that accepts it (DynamoDB compresses
/// those over about 4 KB).
pub const GZIP_MIN_BYTES: usize = 4096;

const JSON_1_0: &str = "application/x-amz-json-1.0";
const JSON_1_1: &str = "application/x-amz-json-1.1";

/// The endpoint's settings.
#[derive(Clone, Debug)]
pub struct DynamoConfig {
    /// Empty: no authentication.
    pub access_keys: AccessKeys,
    pub max_request_size_bytes: usize,
    /// The largest item collection of a table with LSIs ([`crate::collections`]).
    pub item_collection_size_limit_bytes: u64,
    /// How long a connection waits on its client ([`crate::http1::Timeouts::DEFAULT`]; tests
    /// shorten them).
    pub timeouts: Timeouts,
}

impl Default for DynamoConfig {
    fn default() -> Self {
        DynamoConfig {
            access_keys: AccessKeys::default(),
            max_request_size_bytes: DEFAULT_MAX_REQUEST_SIZE_BYTES,
            item_collection_size_limit_bytes: crate::collections::DEFAULT_LIMIT_BYTES,
            timeouts: Timeouts::DEFAULT,
        }
    }
}

/// What the handler holds.
#[derive(Debug)]
pub struct Endpoint {
    ops: Arc<Operations>,
    config: DynamoConfig,
    request_ids: RequestIds,
}

impl Endpoint {
    pub fn new(coordinator: Arc<Coordinator>, config: DynamoConfig) -> Self {
        Endpoint {
            request_ids: RequestIds::new(&coordinator),
            ops: Arc::new(
                Operations::new(coordinator)
                    .with_collection_limit(config.item_collection_size_limit_bytes),
            ),
            config,
        }
    }

    /// The operations (the TTL expirer shares them, and so the streams' state).
    pub fn operations(&self) -> Arc<Operations> {
        self.ops.clone()
    }

    /// The largest request body taken.
    pub fn max_request_size(&self) -> usize {
        self.config.max_request_size_bytes
    }

    /// How long a connection waits on its client.
    pub fn timeouts(&self) -> Timeouts {
        self.config.timeouts
    }

    /// The node's clock, in seconds since the epoch (answers' `Date`).
    pub fn now_seconds(&self) -> LocalTime {
        self.ops.coordinator.now_seconds()
    }

    /// DynamoDB's answer to a body over [`Endpoint::max_request_size`].
    pub fn too_large(&self, head: &Head) -> Answer {
        let content_type = json_content_type(head).unwrap_or(JSON_1_0);
        self.identified(Answer::error(
            &DynamoError::new(ErrorKind::RequestEntityTooLarge, "Request Entity Too Large"),
            content_type,
        ))
    }

    /// Answer one request (its head and whole body), with a request id.
    pub async fn answer(&self, head: &Head, body: Bytes) -> Answer {
        let mut answer = self.identified(self.answer_body(head, body).await);
        if answer.status >= 500 {
            warn!(request_id = %String::from_utf8_lossy(&answer.request_id), status = answer.status, body = %String::from_utf8_lossy(&answer.body), "DynamoDB request failed");
        }
        if answer.body.len() > GZIP_MIN_BYTES && accepts_gzip(head) {
            answer.gzip();
        }
        answer
    }

    fn identified(&self, mut answer: Answer) -> Answer {
        answer.request_id = self.request_ids.next();
        answer
    }

    async fn answer_body(&self, head: &Head, body: Bytes) -> Answer {
        if head.method() == "GET" {
            let host = head.header_str("host").unwrap_or("localhost");
            return Answer {
                status: 200,
                content_type: "text/plain",
                body: format!("healthy: {host} ").into_bytes(),
                request_id: [b'0'; 52],
                gzipped: false,
            };
        }
        let (Some(content_type), "POST") = (json_content_type(head), head.method()) else {
            let mut a = Answer::error(&DynamoError::bare(ErrorKind::UnknownOperation), JSON_1_0);
            a.status = 404;
            return a;
        };
        let error = |e: DynamoError| Answer::error(&e, content_type);

        if self.config.access_keys.enabled() {
            let headers: Vec<(&str, &str)> = head
                .headers()
                .filter_map(|(k, v)| Some((k, std::str::from_utf8(v).ok()?)))
                .collect();
            let signed = SignedRequest {
                method: head.method(),
                path: head.path(),
                query: head.query(),
                headers,
                body: &body,
            };
            let now = i64::from(self.ops.coordinator.now_seconds());
            if let Err(e) = auth::verify_at(&self.config.access_keys, &signed, now) {
                return error(e);
            }
        }

        let target = head.header_str("x-amz-target").unwrap_or("");
        let (service, operation) = target.split_once('.').unwrap_or(("", ""));
        let streams = match service {
            DYNAMODB_TARGET if crate::ops::is_known(operation) => false,
            STREAMS_TARGET => true,
            _ => return error(DynamoError::bare(ErrorKind::UnknownOperation)),
        };
        let request = match RequestBody::parse(operation, &body) {
            Ok(request) => request,
            Err(e) => return error(e),
        };
        let info = RequestInfo {
            host: head.header_value("host"),
            authorization: head.header_value("authorization"),
        };
        // Run to the end in the connection's task (which reads nothing meanwhile, so a write is
        // never cut short); a panic is a 500 for this request only. Boxed: the dispatcher's
        // future is as large as its largest operation's.
        let done = if streams {
            AssertUnwindSafe(Box::pin(self.ops.dispatch_streams(
                operation,
                request.object,
                &info,
            )))
            .catch_unwind()
            .await
        } else {
            AssertUnwindSafe(Box::pin(self.ops.dispatch(operation, request, &info)))
                .catch_unwind()
                .await
        };
        match done {
            Ok(Ok(reply)) => Answer::json(reply, content_type),
            Ok(Err(e)) => error(e),
            Err(panic) => error(DynamoError::internal(format!(
                "Internal server error: the request failed ({})",
                panic_message(&*panic)
            ))),
        }
    }
}

/// The JSON content type a request is answered in (its own, as DynamoDB echoes it), `None` if
/// it is not JSON (no content type is JSON 1.0).
fn json_content_type(head: &Head) -> Option<&'static str> {
    match head.header_str("content-type") {
        None => Some(JSON_1_0),
        Some(t) => match t.split(';').next().unwrap_or("").trim() {
            JSON_1_0 => Some(JSON_1_0),
            "application/json" => Some("application/json"),
            JSON_1_1 => Some(JSON_1_1),
            _ => None,
        },
    }
}

/// A request's answer: status, content type, body and request id ([`crate::http1`] adds the
/// body's checksum as it writes it).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    /// As sent: gzipped when [`Answer::gzipped`].
    pub body: Vec<u8>,
    /// `x-amzn-RequestId`.
    pub request_id: [u8; 52],
    /// The body is gzipped (`Content-Encoding: gzip`).
    pub gzipped: bool,
}

impl Answer {
    fn json(reply: Reply, content_type: &'static str) -> Answer {
        Answer {
            status: 200,
            content_type,
            body: reply.into_bytes(),
            request_id: [b'0'; 52],
            gzipped: false,
        }
    }

    fn error(e: &DynamoError, content_type: &'static str) -> Answer {
        Answer {
            status: e.kind.status(),
            content_type,
            body: e.body().to_string().into_bytes(),
            request_id: [b'0'; 52],
            gzipped: false,
        }
    }

    /// Gzip the body (at the fastest level: the point is fewer bytes on the wire, cheaply).
    fn gzip(&mut self) {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(self.body.len() / 4 + 64),
            flate2::Compression::fast(),
        );
        // Writing to a `Vec` cannot fail.
        if encoder.write_all(&self.body).is_ok()
            && let Ok(compressed) = encoder.finish()
        {
            self.body = compressed;
            self.gzipped = true;
        }
    }
}

/// Whether the request's `Accept-Encoding` takes gzip (`gzip`, in any case, and not with
/// `q=0`).
fn accepts_gzip(head: &Head) -> bool {
    let Some(accepted) = head.header_str("accept-encoding") else {
        return false;
    };
    accepted.split(',').any(|coding| {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            let p = p.trim();
            p.get(..2).is_some_and(|q| q.eq_ignore_ascii_case("q="))
                && p[2..].trim().parse::<f32>().is_ok_and(|q| q == 0.0)
        });
        name.eq_ignore_ascii_case("gzip") && !refused
    })
}

/// Request ids in the shape of DynamoDB's (52 characters of `[A-Z0-9]`), unique within a run
/// of the node without a system call per request: a counter passed through the SplitMix64
/// finalizer (a bijection, so distinct counts give distinct ids) under four random seeds, each
/// of the four 64-bit words written whole as 13 base-36 digits (36^13 > 2^64).
#[derive(Debug)]
struct RequestIds {
    seed: [u64; 4],
    next: std::sync::atomic::AtomicU64,
}

impl RequestIds {
    fn new(coordinator: &Coordinator) -> Self {
        let (a, b) = coordinator.random_uuid().as_u64_pair();
        let (c, d) = coordinator.random_uuid().as_u64_pair();
        RequestIds {
            seed: [a, b, c, d],
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn next(&self) -> [u8; 52] {
        const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        fn mix(mut z: u64) -> u64 {
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        let count = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut id = [0u8; 52];
        for (digits, seed) in id.chunks_exact_mut(13).zip(self.seed) {
            let mut word = mix(seed ^ count);
            for d in digits {
                *d = DIGITS[(word % 36) as usize];
                word /= 36;
            }
        }
        id
    }
}

/// What a caught panic said.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let message = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    format!("panicked with message {message:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;

    fn head_with(accept_encoding: Option<&str>) -> Head {
        let mut text = String::from("POST / HTTP/1.1\r\nHost: h\r\n");
        if let Some(a) = accept_encoding {
            text.push_str(&format!("Accept-Encoding: {a}\r\n"));
        }
        text.push_str("\r\n");
        match crate::http1::parse_head(&mut BytesMut::from(text.as_bytes())) {
            crate::http1::Parsed::Head(head) => head,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn gzip_is_taken_as_accept_encoding_offers_it() {
        for (offer, taken) in [
            (None, false),
            (Some("gzip"), true),
            (Some("GZIP"), true),
            (Some("deflate, gzip;q=0.5"), true),
            (Some("identity"), false),
            (Some("gzip;q=0"), false),
            (Some("gzip; Q=0.0, br"), false),
            (Some("x-gzip"), false),
        ] {
            assert_eq!(accepts_gzip(&head_with(offer)), taken, "{offer:?}");
        }
    }

    #[test]
    fn a_gzipped_answer_decompresses_to_its_body() {
        use std::io::Read as _;
        let body = br#"{"Item":{"data":{"S":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}"#.repeat(200);
        let mut answer = Answer {
            status: 200,
            content_type: JSON_1_0,
            body: body.clone(),
            request_id: [b'0'; 52],
            gzipped: false,
        };
        answer.gzip();
        assert!(answer.gzipped);
        assert_eq!(&answer.body[..2], b"\x1f\x8b");
        assert!(answer.body.len() < body.len() / 10);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&answer.body[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
    }
}
