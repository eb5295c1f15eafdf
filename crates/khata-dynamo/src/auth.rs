//! AWS Signature Version 4 verification of DynamoDB requests.
//!
//! Off unless access keys are configured (`dynamo_access_keys`: access key id -> secret).
//! When on, every request must carry `Authorization: AWS4-HMAC-SHA256 Credential=<key id>/
//! <date>/<region>/<service>/aws4_request, SignedHeaders=<h1;h2;...>, Signature=<hex>`, and
//! we recompute the signature as the AWS General Reference's "Signature Version 4 signing
//! process" describes it:
//!
//! 1. the *canonical request*: method, canonical URI (dot segments removed, each byte outside
//!    `A-Za-z0-9-_.~/` percent-encoded again, as for every service but S3), canonical query
//!    (each name and value decoded, then encoded, sorted), the signed headers as
//!    `name:value` lines (names lower-cased, values trimmed with inner runs of spaces
//!    collapsed, repeated headers joined by `,`), the signed header list, and the hex SHA-256
//!    of the body;
//! 2. the *string to sign*: `AWS4-HMAC-SHA256`, the request time (`X-Amz-Date`, else `Date`),
//!    the credential scope, and the hex SHA-256 of the canonical request;
//! 3. the *signing key*: HMAC-SHA256 chained over `"AWS4" + secret`, the scope's date, region,
//!    service and `aws4_request`; the signature is the hex HMAC of the string to sign.
//!
//! The region and service in the scope are taken as the client wrote them (a single node
//! answers for any region). The comparison of signatures does not stop at the first
//! differing byte. [`verify_at`] also refuses, as DynamoDB does, a request whose time is more
//! than 15 minutes from the node's clock (`Signature expired` / `Signature not yet current`)
//! and one that carries `X-Amz-Security-Token`: khata issues no temporary credentials, so no
//! session token is valid. Presigned query-string authentication, which DynamoDB's SDKs do
//! not use, is not accepted.
//!
//! Written on `hmac` + `sha2` rather than taken from `aws-sigv4`, which signs but does not
//! verify; the AWS test suite that ships inside `aws-sigv4` checks it
//! (`tests/auth_sigv4_suite.rs`).

use std::collections::BTreeMap;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::error::{DynamoError, ErrorKind};

/// The only algorithm SigV4 names.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// DynamoDB's words for a signature that does not match.
pub const SIGNATURE_MISMATCH: &str = "The request signature we calculated does not match the \
signature you provided. Check your AWS Secret Access Key and signing method. Consult the \
service documentation for details.";

/// DynamoDB's words for an unknown access key id.
pub const UNKNOWN_KEY: &str = "The security token included in the request is invalid.";

/// The configured access keys: key id -> secret access key.
#[derive(Clone, Default)]
pub struct AccessKeys {
    keys: BTreeMap<String, String>,
}

impl std::fmt::Debug for AccessKeys {
    /// Key ids only: secrets stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.keys.keys()).finish()
    }
}

impl AccessKeys {
    pub fn new(keys: BTreeMap<String, String>) -> Self {
        AccessKeys { keys }
    }

    /// Whether requests must be signed.
    pub fn enabled(&self) -> bool {
        !self.keys.is_empty()
    }

    fn secret(&self, key_id: &str) -> Option<&str> {
        self.keys.get(key_id).map(String::as_str)
    }
}

/// What verification reads of a request.
#[derive(Clone, Debug)]
pub struct SignedRequest<'a> {
    pub method: &'a str,
    /// The path as it came on the wire (still percent-encoded).
    pub path: &'a str,
    /// The query string as it came on the wire, without `?`.
    pub query: &'a str,
    /// Every header, names in any case, in the order received.
    pub headers: Vec<(&'a str, &'a str)>,
    pub body: &'a [u8],
}

/// The parts of an `Authorization` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authorization {
    pub key_id: String,
    pub date: String,
    pub region: String,
    pub service: String,
    pub terminator: String,
    pub signed_headers: Vec<String>,
    pub signature: String,
}

fn incomplete(message: String) -> DynamoError {
    DynamoError::new(ErrorKind::IncompleteSignature, message)
}

/// Parse `AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`.
pub fn parse_authorization(header: &str) -> Result<Authorization, DynamoError> {
    let header = header.trim();
    let (algorithm, rest) = header.split_once(' ').unwrap_or((header, ""));
    if algorithm != ALGORITHM {
        return Err(incomplete(format!(
            "Unsupported AWS 'algorithm': '{algorithm}' (only {ALGORITHM} for now). "
        )));
    }
    let mut params: BTreeMap<&str, &str> = BTreeMap::new();
    for part in rest.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            return Err(incomplete(format!(
                "'{part}' not a valid key=value pair (missing equal-sign) in Authorization header: '{header}'."
            )));
        };
        params.insert(k.trim(), v.trim());
    }
    let mut missing = String::new();
    for name in ["Credential", "Signature", "SignedHeaders"] {
        if !params.contains_key(name) {
            missing.push_str(&format!(
                "Authorization header requires '{name}' parameter. "
            ));
        }
    }
    if !missing.is_empty() {
        return Err(incomplete(format!("{missing}Authorization={header}")));
    }
    let credential = params["Credential"];
    let scope: Vec<&str> = credential.trim_end_matches('/').split('/').collect();
    if scope.len() != 5 {
        return Err(incomplete(format!(
            "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '{credential}'"
        )));
    }
    Ok(Authorization {
        key_id: scope[0].to_string(),
        date: scope[1].to_string(),
        region: scope[2].to_string(),
        service: scope[3].to_string(),
        terminator: scope[4].to_string(),
        signed_headers: params["SignedHeaders"]
            .split(';')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect(),
        signature: params["Signature"].to_ascii_lowercase(),
    })
}

/// How far a request's time may be from the node's clock, as in DynamoDB.
pub const MAX_CLOCK_SKEW_SECONDS: i64 = 15 * 60;

/// Check a request as DynamoDB does at `now` (seconds since the epoch): no session token, a
/// valid signature ([`verify`]), and a request time within [`MAX_CLOCK_SKEW_SECONDS`].
pub fn verify_at(
    keys: &AccessKeys,
    request: &SignedRequest<'_>,
    now: i64,
) -> Result<(), DynamoError> {
    if !header_values(request, "x-amz-security-token").is_empty() {
        return Err(DynamoError::new(ErrorKind::UnrecognizedClient, UNKNOWN_KEY));
    }
    verify(keys, request)?;
    let Some(time) = header_values(request, "x-amz-date").into_iter().next() else {
        // Only `Date` (an HTTP date, which no AWS SDK sends): its age is not checked.
        return Ok(());
    };
    let Some(at) = khata_types::calendar::parse_iso8601_basic(time) else {
        return Err(incomplete(format!(
            "Date must be in ISO-8601 'basic format'. Got '{time}'. See http://en.wikipedia.org/wiki/ISO_8601"
        )));
    };
    let basic = khata_types::calendar::iso8601_basic;
    if at < now - MAX_CLOCK_SKEW_SECONDS {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            format!(
                "Signature expired: {time} is now earlier than {} ({} - 15 min.)",
                basic(now - MAX_CLOCK_SKEW_SECONDS),
                basic(now)
            ),
        ));
    }
    if at > now + MAX_CLOCK_SKEW_SECONDS {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            format!(
                "Signature not yet current: {time} is still later than {} ({} + 15 min.)",
                basic(now + MAX_CLOCK_SKEW_SECONDS),
                basic(now)
            ),
        ));
    }
    Ok(())
}

/// Check a request's signature against `keys` (the time's age is [`verify_at`]'s).
pub fn verify(keys: &AccessKeys, request: &SignedRequest<'_>) -> Result<(), DynamoError> {
    let Some(header) = header_values(request, "authorization").into_iter().next() else {
        return Err(DynamoError::new(
            ErrorKind::MissingAuthenticationToken,
            "Request is missing Authentication Token",
        ));
    };
    let auth = parse_authorization(header)?;
    let Some(time) = header_values(request, "x-amz-date")
        .into_iter()
        .chain(header_values(request, "date"))
        .next()
    else {
        return Err(incomplete(format!(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization={header}"
        )));
    };
    if auth.terminator != "aws4_request" {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            format!(
                "Credential should be scoped with a valid terminator: 'aws4_request', not '{}'.",
                auth.terminator
            ),
        ));
    }
    if !time.starts_with(&auth.date) {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            format!(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}', from '{time}'.",
                auth.date,
                time.get(..8).unwrap_or(time)
            ),
        ));
    }
    let Some(secret) = keys.secret(&auth.key_id) else {
        return Err(DynamoError::new(ErrorKind::UnrecognizedClient, UNKNOWN_KEY));
    };
    let expected = signature(secret, time, &auth, request);
    if !constant_time_eq(expected.as_bytes(), auth.signature.as_bytes()) {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            SIGNATURE_MISMATCH,
        ));
    }
    Ok(())
}

/// The hex signature of `request` under `secret` (step 3).
pub fn signature(
    secret: &str,
    time: &str,
    auth: &Authorization,
    request: &SignedRequest<'_>,
) -> String {
    let to_sign = string_to_sign(
        time,
        auth,
        &canonical_request(request, &auth.signed_headers),
    );
    let key = signing_key(secret, &auth.date, &auth.region, &auth.service);
    hex(&hmac(&key, to_sign.as_bytes()))
}

/// Step 2.
pub fn string_to_sign(time: &str, auth: &Authorization, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{time}\n{}/{}/{}/{}\n{}",
        auth.date,
        auth.region,
        auth.service,
        auth.terminator,
        hex(&Sha256::digest(canonical_request.as_bytes()))
    )
}

/// The key derived from the secret for one day, region and service.
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

/// Step 1.
pub fn canonical_request(request: &SignedRequest<'_>, signed_headers: &[String]) -> String {
    let mut out = String::new();
    out.push_str(request.method);
    out.push('\n');
    out.push_str(&canonical_uri(request.path));
    out.push('\n');
    out.push_str(&canonical_query(request.query));
    out.push('\n');
    for name in signed_headers {
        let values: Vec<String> = header_values(request, name)
            .into_iter()
            .map(canonical_header_value)
            .collect();
        out.push_str(name);
        out.push(':');
        out.push_str(&values.join(","));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&signed_headers.join(";"));
    out.push('\n');
    out.push_str(&hex(&Sha256::digest(request.body)));
    out
}

fn header_values<'a>(request: &SignedRequest<'a>, name: &str) -> Vec<&'a str> {
    request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
        .collect()
}

/// Trimmed, with each run of whitespace inside one space.
fn canonical_header_value(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The path with dot segments and empty segments removed, each segment encoded (again).
fn canonical_uri(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = String::from("/");
    out.push_str(
        &segments
            .iter()
            .map(|s| uri_encode(s.as_bytes()))
            .collect::<Vec<_>>()
            .join("/"),
    );
    if segments.last().is_some() && path.ends_with('/') {
        out.push('/');
    }
    out
}

/// Each parameter decoded, then encoded, sorted by name then value.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                uri_encode(&percent_decode(k)),
                uri_encode(&percent_decode(v)),
            )
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// RFC 3986 encoding of everything but the unreserved characters, upper-case hex.
fn uri_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex_value(bytes[i + 1]), hex_value(bytes[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes keys of any length, so `new_from_slice` cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Equality that looks at every byte whatever the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_and_query_canonical_forms() {
        assert_eq!(canonical_uri("/"), "/");
        assert_eq!(canonical_uri(""), "/");
        assert_eq!(canonical_uri("/a/./b/../c//d/"), "/a/c/d/");
        assert_eq!(canonical_uri("/a%3D"), "/a%253D");
        assert_eq!(canonical_query("b=2&a=1&a=0"), "a=0&a=1&b=2");
        assert_eq!(canonical_query("k=%e1%88%b4"), "k=%E1%88%B4");
        assert_eq!(percent_decode("%zz%4"), b"%zz%4");
    }

    #[test]
    fn authorization_parts() {
        let a = parse_authorization(
            "AWS4-HMAC-SHA256 Credential=AK/20150830/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=ABCD",
        )
        .unwrap();
        assert_eq!(a.key_id, "AK");
        assert_eq!(a.signed_headers, vec!["host", "x-amz-date"]);
        assert_eq!(a.signature, "abcd");
        let e = parse_authorization("AWS4-HMAC-SHA1 Credential=a").unwrap_err();
        assert_eq!(e.kind, ErrorKind::IncompleteSignature);
        let e = parse_authorization("AWS4-HMAC-SHA256 Credential=a/b").unwrap_err();
        assert!(e.message.unwrap().contains("'Signature' parameter"));
    }
}
