//! The client side of the admin API, for `khata admin`: one HTTP/1.1 request per connection
//! (`Connection: close`) over a blocking `std::net::TcpStream`, the answer read to the end.
//!
//! This is deliberately small rather than a general HTTP client: it talks to one khata node,
//! whose server (hyper) answers with a `Content-Length` or chunked body and closes after the
//! answer. No TLS, no redirects, no keep-alive. Answers are bounded by
//! [`MAX_RESPONSE_BYTES`]; connecting is bounded by [`CONNECT_TIMEOUT`], reading by the
//! caller's timeout (none for `compact`, which answers when the compaction is done).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde::de::DeserializeOwned;

use super::api::ApiError;

/// How long to try to connect before calling the node unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest answer accepted (a `/tablestats` of thousands of tables is well under this).
pub const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a request to the admin API failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing answered at the address (refused, timed out, unknown host).
    #[error(
        "cannot reach the admin API of a khata node at {target}: {reason} \
         (is `khata server` running there, with admin_port {port}?)"
    )]
    Unreachable {
        target: String,
        port: u16,
        reason: String,
    },
    /// The connection broke or timed out mid-request.
    #[error("the admin API at {target} stopped answering: {source}")]
    Io {
        target: String,
        source: std::io::Error,
    },
    /// Something answered that is not the admin API.
    #[error("unexpected answer from {target}: {message}")]
    BadResponse { target: String, message: String },
    /// The node refused or failed the request, with its reason.
    #[error("{message} (HTTP {status})")]
    Api { status: u16, message: String },
}

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A client of one node's admin API.
#[derive(Debug, Clone)]
pub struct AdminClient {
    host: String,
    port: u16,
}

impl AdminClient {
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        AdminClient {
            host: host.into(),
            port,
        }
    }

    fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// `GET path` (with its query), expecting JSON of type `T`.
    pub fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        read_timeout: Option<Duration>,
    ) -> Result<T, ClientError> {
        self.json("GET", path, read_timeout)
    }

    /// `POST path` (with its query, no body), expecting JSON of type `T`.
    pub fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        read_timeout: Option<Duration>,
    ) -> Result<T, ClientError> {
        self.json("POST", path, read_timeout)
    }

    fn json<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        read_timeout: Option<Duration>,
    ) -> Result<T, ClientError> {
        let response = self.request(method, path, read_timeout)?;
        if !(200..300).contains(&response.status) {
            let message = serde_json::from_slice::<ApiError>(&response.body)
                .map(|e| e.error)
                .unwrap_or_else(|_| String::from_utf8_lossy(&response.body).trim().to_owned());
            return Err(ClientError::Api {
                status: response.status,
                message,
            });
        }
        serde_json::from_slice(&response.body).map_err(|e| ClientError::BadResponse {
            target: self.target(),
            message: format!("{method} {path}: not the JSON expected ({e})"),
        })
    }

    /// Send one request and read the whole answer.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        read_timeout: Option<Duration>,
    ) -> Result<Response, ClientError> {
        let target = self.target();
        let mut stream = self.connect()?;
        let io = |source| ClientError::Io {
            target: target.clone(),
            source,
        };
        stream.set_read_timeout(read_timeout).map_err(io)?;
        stream
            .set_write_timeout(Some(CONNECT_TIMEOUT))
            .map_err(io)?;
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {target}\r\nUser-Agent: khata-admin/{}\r\n\
             Accept: */*\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            env!("CARGO_PKG_VERSION")
        );
        stream.write_all(request.as_bytes()).map_err(io)?;
        let mut raw = Vec::new();
        stream
            .take(MAX_RESPONSE_BYTES + 1)
            .read_to_end(&mut raw)
            .map_err(io)?;
        if raw.len() as u64 > MAX_RESPONSE_BYTES {
            return Err(ClientError::BadResponse {
                target,
                message: format!("answer larger than {MAX_RESPONSE_BYTES} bytes"),
            });
        }
        parse_response(&raw).map_err(|message| ClientError::BadResponse { target, message })
    }

    fn connect(&self) -> Result<TcpStream, ClientError> {
        let unreachable = |reason: String| ClientError::Unreachable {
            target: self.target(),
            port: self.port,
            reason,
        };
        let addresses: Vec<SocketAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| unreachable(e.to_string()))?
            .collect();
        let mut last = "the host has no address".to_owned();
        for address in addresses {
            match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
                Ok(stream) => return Ok(stream),
                Err(e) => last = e.to_string(),
            }
        }
        Err(unreachable(last))
    }
}

/// Split an HTTP/1.x answer read to the end into status, headers and (de-chunked) body.
pub fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer ended inside its headers")?;
    let head = std::str::from_utf8(&raw[..head_end]).map_err(|_| "headers are not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not an HTTP/1 answer: {status_line:?}"));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("bad header line {line:?}"))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    let rest = &raw[head_end + 4..];
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    response.body = if chunked {
        dechunk(rest)?
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| format!("bad Content-Length {length:?}"))?;
        if rest.len() < length {
            return Err(format!(
                "the body ended after {} of {length} bytes",
                rest.len()
            ));
        }
        rest[..length].to_vec()
    } else {
        rest.to_vec()
    };
    Ok(response)
}

/// Decode a chunked body (trailers ignored).
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk size line is cut")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).map_err(|_| "bad chunk size")?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            return Err("a chunk is cut".into());
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_bodies() {
        let raw =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        let r = parse_response(raw).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.header("Content-Type"), Some("application/json"));
        assert_eq!(r.body, b"{}");
    }

    #[test]
    fn chunked_bodies() {
        let raw = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        let r = parse_response(raw).unwrap();
        assert_eq!(r.status, 404);
        assert_eq!(r.body, b"abcde");
    }

    #[test]
    fn cut_answers_are_errors() {
        assert!(parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\n").is_err());
        assert!(parse_response(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
    }

    #[test]
    fn nothing_listening_is_unreachable() {
        // Bind then drop: the port is closed (and nothing else takes it this quickly).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let err = AdminClient::new("127.0.0.1", port)
            .get_json::<serde_json::Value>("/status", Some(Duration::from_secs(1)))
            .unwrap_err();
        assert!(matches!(err, ClientError::Unreachable { .. }), "{err}");
        assert!(
            err.to_string().contains(&format!("127.0.0.1:{port}")),
            "{err}"
        );
    }
}
