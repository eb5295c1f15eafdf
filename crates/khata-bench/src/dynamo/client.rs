//! A DynamoDB JSON client for the benchmark: signed `POST /` requests over a fixed pool of
//! HTTP/1.1 keep-alive connections (hyper's client connection, one request at a time per
//! connection: HTTP/1.1 without pipelining, as the AWS SDKs use it).
//!
//! At most `connections` connections are open; a request takes an idle one (or opens one when
//! fewer are open), gives it back when the answer is read, and drops it if it failed. The
//! number opened over a run is counted, so a report shows that connections were kept alive
//! (a server that closes idle connections, as dynalite does after 5 s, costs a reconnect).
//!
//! An answer other than 200 is an error that names the operation, DynamoDB's error type (the
//! part of `__type` after `#`) and its message, as `PutItem failed: ValidationException (400):
//! ...`, so a target that does not implement an operation says so plainly.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::Semaphore;

use super::sigv4::{Signer, SigningTime};

/// The content type of DynamoDB's JSON protocol (version 1.0).
const CONTENT_TYPE: &str = "application/x-amz-json-1.0";
/// The target prefix of DynamoDB's operations.
const TARGET_PREFIX: &str = "DynamoDB_20120810.";
/// Dummy credentials: dynalite ignores them, khata checks them only when keys are configured.
const ACCESS_KEY_ID: &str = "AKIDKHATABENCH";
const SECRET_ACCESS_KEY: &str = "khata-bench-dummy-secret-access-key";

/// A pool of keep-alive connections to one DynamoDB endpoint.
#[derive(Debug)]
pub struct Client {
    address: SocketAddr,
    host: String,
    signer: Signer,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
    /// One permit per connection: a request holds one from taking a connection to returning it.
    permits: Semaphore,
    opened: AtomicU64,
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
        let mut sender = match self.take_idle() {
            Some(sender) => sender,
            None => self.connect().await.map_err(fail)?,
        };
        sender
            .ready()
            .await
            .map_err(|e| fail(format!("connection: {e}")))?;
        let request = self.request(operation, body).map_err(fail)?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| fail(format!("request: {e}")))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| fail(format!("reading the answer: {e}")))?
            .to_bytes();
        // The answer is read whole, so the connection is ready for the next request.
        self.idle
            .lock()
            .expect("idle connections lock")
            .push(sender);
        if status == StatusCode::OK {
            Ok(body)
        } else {
            Err(fail(describe_error(status, &body)))
        }
    }

    fn take_idle(&self) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().expect("idle connections lock");
        while let Some(sender) = idle.pop() {
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let stream = tokio::net::TcpStream::connect(self.address)
            .await
            .map_err(|e| format!("connecting to {}: {e}", self.address))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("TCP_NODELAY: {e}"))?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake with {}: {e}", self.address))?;
        tokio::spawn(async move {
            // Ends when the server closes the connection or the sender is dropped; a failure
            // shows up in the request that was on it.
            let _ = connection.await;
        });
        self.opened.fetch_add(1, Ordering::Relaxed);
        Ok(sender)
    }

    fn request(&self, operation: &str, body: String) -> Result<Request<Full<Bytes>>, String> {
        let target = format!("{TARGET_PREFIX}{operation}");
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
        let authorization = self
            .signer
            .authorization("POST", "/", &signed, body.as_bytes(), &time);
        let mut builder = Request::post("/");
        for (name, value) in signed {
            builder = builder.header(name, value);
        }
        builder
            .header("authorization", authorization)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("building the request: {e}"))
    }
}

/// `Type (status): message` from a DynamoDB error answer (`{"__type": "...#Type", "message":
/// ...}`), or the status and the start of the body when it is not one.
fn describe_error(status: StatusCode, body: &[u8]) -> String {
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
                "{short} ({}): {}",
                status.as_u16(),
                message.as_deref().unwrap_or("(no message)")
            )
        }
        _ => {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
            format!("HTTP {status}: {}", text.trim())
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
            describe_error(StatusCode::BAD_REQUEST, body),
            "ValidationException (400): One or more parameter values were invalid"
        );
        assert_eq!(
            describe_error(StatusCode::NOT_FOUND, b"no such thing"),
            "HTTP 404 Not Found: no such thing"
        );
    }
}
