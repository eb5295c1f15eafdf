//! The DynamoDB endpoint: JSON over HTTP/1.1, as DynamoDB's low-level API speaks it.
//!
//! Every request is `POST /` (DynamoDB ignores the path) with `X-Amz-Target:
//! DynamoDB_20120810.<Operation>` (or `DynamoDBStreams_20120810.<Operation>`), a JSON object
//! body of type `application/x-amz-json-1.0` (1.1 and `application/json` are accepted too),
//! and, when access keys are configured, a SigV4 `Authorization` header ([`crate::auth`]).
//! Connections are kept alive (hyper's HTTP/1.1 server).
//!
//! Every answer carries `x-amzn-RequestId` and `x-amz-crc32` (the CRC32 of the body bytes,
//! which the AWS SDKs check) and has the request's JSON content type. The order of checks,
//! each with DynamoDB's error ([`crate::error`]):
//!
//! 1. `GET` (any path): `200 healthy: <host>`, DynamoDB's health answer.
//! 2. Another method than `POST`, or a content type that is not JSON: 404
//!    `UnknownOperationException`.
//! 3. A body larger than `max_request_size_bytes` (DynamoDB: 16 MB): 413
//!    `RequestEntityTooLarge`, decided from `Content-Length` before anything is read, and
//!    while reading a body sent without one, so no more than the limit is ever buffered.
//! 4. The signature, when keys are configured.
//! 5. `X-Amz-Target`: `UnknownOperationException` for an operation we do not know.
//! 6. The body: `SerializationException` unless it is one JSON object (serde_json's
//!    recursion limit bounds nesting). The item operations' item member is read straight
//!    into an item ([`crate::ops::request`]); answers with items are printed straight into
//!    bytes ([`crate::reply`]).
//! 7. The operation ([`crate::ops`]): a panic in it becomes a 500 `InternalServerError` for
//!    that request, and the node serves on. Writes run in a task of their own, so a client
//!    that goes away does not cut one short; reads run in the connection's task.
//!
//! The server does not enforce DynamoDB's request-rate limits or idle timeouts.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt as _;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use khata_coordinator::Coordinator;
use tracing::{debug, warn};

use crate::auth::{self, AccessKeys, SignedRequest};
use crate::error::{DynamoError, ErrorKind};
use crate::ops::request::Request as RequestBody;
use crate::ops::{Operations, RequestInfo};
use crate::reply::Reply;

/// What a request body's errors may become.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// DynamoDB's limit on a request body.
pub const DEFAULT_MAX_REQUEST_SIZE_BYTES: usize = 16 * 1024 * 1024;

/// The target prefix of DynamoDB's operations.
pub const DYNAMODB_TARGET: &str = "DynamoDB_20120810";
/// The target prefix of DynamoDB Streams' operations.
pub const STREAMS_TARGET: &str = "DynamoDBStreams_20120810";

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
}

impl Default for DynamoConfig {
    fn default() -> Self {
        DynamoConfig {
            access_keys: AccessKeys::default(),
            max_request_size_bytes: DEFAULT_MAX_REQUEST_SIZE_BYTES,
            item_collection_size_limit_bytes: crate::collections::DEFAULT_LIMIT_BYTES,
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
}

/// The endpoint as a hyper service (every path and method goes to one handler), served
/// straight on hyper's HTTP/1.1 connections: no router, no boxed bodies. Cloning it is an
/// `Arc` clone.
#[derive(Clone, Debug)]
pub struct Service(Arc<Endpoint>);

impl Service {
    pub fn new(endpoint: Arc<Endpoint>) -> Self {
        Service(endpoint)
    }
}

/// A request's answer: the body is one buffer, so hyper writes head and body in one `writev`.
pub type Answered = Response<Full<Bytes>>;

impl<B> hyper::service::Service<Request<B>> for Service
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Answered;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answered, Infallible>> + Send>>;

    fn call(&self, request: Request<B>) -> Self::Future {
        let endpoint = self.0.clone();
        Box::pin(async move { Ok(handle(&endpoint, request).await) })
    }
}

/// An answer before the request id and checksum are added.
struct Answer {
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
}

impl Answer {
    fn json(reply: Reply, content_type: &'static str) -> Answer {
        Answer {
            status: StatusCode::OK,
            content_type,
            body: reply.into_bytes(),
        }
    }

    fn error(e: &DynamoError, content_type: &'static str) -> Answer {
        Answer {
            status: StatusCode::from_u16(e.kind.status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            content_type,
            body: e.body().to_string().into_bytes(),
        }
    }
}

/// Answer one request, with its request id and checksum.
async fn handle<B>(endpoint: &Arc<Endpoint>, request: Request<B>) -> Answered
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let request_id = endpoint.request_ids.next();
    let answer = answer(endpoint, request).await;
    if answer.status.is_server_error() {
        warn!(request_id = %String::from_utf8_lossy(&request_id), status = answer.status.as_u16(), body = %String::from_utf8_lossy(&answer.body), "DynamoDB request failed");
    }
    let crc = crc32fast::hash(&answer.body);
    let mut response = Response::new(Full::new(Bytes::from(answer.body)));
    *response.status_mut() = answer.status;
    let headers = response.headers_mut();
    headers.reserve(3);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(answer.content_type),
    );
    headers.insert(
        HeaderName::from_static("x-amz-crc32"),
        HeaderValue::from(crc),
    );
    if let Ok(id) = HeaderValue::from_bytes(&request_id) {
        headers.insert(HeaderName::from_static("x-amzn-requestid"), id);
    }
    response
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

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn answer<B>(endpoint: &Arc<Endpoint>, request: Request<B>) -> Answer
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();
    if parts.method == Method::GET {
        let host = header_str(&parts.headers, "host").unwrap_or("localhost");
        return Answer {
            status: StatusCode::OK,
            content_type: "text/plain",
            body: format!("healthy: {host} ").into_bytes(),
        };
    }
    let content_type = match header_str(&parts.headers, "content-type") {
        None => Some(JSON_1_0),
        Some(t) => match t.split(';').next().unwrap_or("").trim() {
            JSON_1_0 | "application/json" => Some(JSON_1_0),
            JSON_1_1 => Some(JSON_1_1),
            _ => None,
        },
    };
    let (Some(content_type), true) = (content_type, parts.method == Method::POST) else {
        let mut a = Answer::error(&DynamoError::bare(ErrorKind::UnknownOperation), JSON_1_0);
        a.status = StatusCode::NOT_FOUND;
        return a;
    };
    let limit = endpoint.config.max_request_size_bytes;
    let too_large = || {
        Answer::error(
            &DynamoError::new(ErrorKind::RequestEntityTooLarge, "Request Entity Too Large"),
            content_type,
        )
    };
    let declared = header_str(&parts.headers, "content-length").and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    let bytes = match Limited::new(body, limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            debug!(error = %e, "DynamoDB request body unreadable");
            return too_large();
        }
    };
    let error = |e: DynamoError| Answer::error(&e, content_type);

    if endpoint.config.access_keys.enabled() {
        let headers: Vec<(&str, &str)> = parts
            .headers
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)))
            .collect();
        let signed = SignedRequest {
            method: parts.method.as_str(),
            path: parts.uri.path(),
            query: parts.uri.query().unwrap_or(""),
            headers,
            body: &bytes,
        };
        let now = i64::from(endpoint.ops.coordinator.now_seconds());
        if let Err(e) = auth::verify_at(&endpoint.config.access_keys, &signed, now) {
            return error(e);
        }
    }

    let target = header_str(&parts.headers, "x-amz-target").unwrap_or("");
    let (service, operation) = target.split_once('.').unwrap_or(("", ""));
    let streams = match service {
        DYNAMODB_TARGET if crate::ops::is_known(operation) => false,
        STREAMS_TARGET => true,
        _ => return error(DynamoError::bare(ErrorKind::UnknownOperation)),
    };
    let body = match RequestBody::parse(operation, &bytes) {
        Ok(body) => body,
        Err(e) => return error(e),
    };
    let info = RequestInfo {
        host: parts.headers.get(header::HOST).cloned(),
        authorization: parts.headers.get(header::AUTHORIZATION).cloned(),
    };
    let done = if !streams && crate::ops::is_read_only(operation) {
        // A read changes nothing, so it may stop at any await (when the client goes away): it
        // runs in the connection's task, sparing a task's allocation and scheduling. A panic
        // in it is still a 500 for this request only.
        // Boxed: the dispatcher's future is as large as its largest operation's, and this
        // one is moved several times on its way to being polled.
        AssertUnwindSafe(Box::pin(endpoint.ops.dispatch(operation, body, &info)))
            .catch_unwind()
            .await
            .map_err(|panic| panic_message(&*panic))
    } else {
        // A write runs in a task of its own, which finishes it even if the client goes away.
        let endpoint = endpoint.clone();
        let operation = operation.to_string();
        tokio::spawn(async move {
            if streams {
                Box::pin(
                    endpoint
                        .ops
                        .dispatch_streams(&operation, body.object, &info),
                )
                .await
            } else {
                Box::pin(endpoint.ops.dispatch(&operation, body, &info)).await
            }
        })
        .await
        .map_err(|e| e.to_string())
    };
    match done {
        Ok(Ok(reply)) => Answer::json(reply, content_type),
        Ok(Err(e)) => error(e),
        Err(e) => error(DynamoError::internal(format!(
            "Internal server error: the request failed ({e})"
        ))),
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
