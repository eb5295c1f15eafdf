//! AWS Signature Version 4 for the benchmark's requests, on `hmac` + `sha2`.
//!
//! Every DynamoDB request carries a real signature, made with dummy credentials, so that the
//! server under test does the work a real client makes it do: dynalite only checks that the
//! `Authorization` header is well formed; khata verifies it when access keys are configured.
//! The algorithm is the one AWS documents ("Create a signed AWS API request"):
//!
//! 1. the canonical request: method, path, query (empty here), the signed headers as
//!    `name:value` lines with lower-case names in order, their names joined by `;`, and the
//!    hex SHA-256 of the body;
//! 2. the string to sign: `AWS4-HMAC-SHA256`, the request time, the scope
//!    (`date/region/service/aws4_request`) and the hex SHA-256 of the canonical request;
//! 3. the signing key: HMAC-SHA256 chained over `"AWS4" + secret`, the date, the region, the
//!    service and `aws4_request`; the signature is the hex HMAC of the string to sign.
//!
//! Why not the `aws-sigv4` crate: it brings the AWS SDK's runtime types (`aws-smithy-*`) for
//! three HMACs over strings we build ourselves; here the headers are fixed and already
//! canonical (lower-case names, no repeated or folded values), so path normalisation, query
//! encoding and header canonicalisation, most of what that crate does, are not needed. The
//! test checks the result on a case of the AWS signing test suite.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Credentials and scope of the signatures.
#[derive(Debug)]
pub struct Signer {
    access_key_id: String,
    secret_access_key: String,
    region: String,
    service: String,
    /// The signing key of the last date signed for (it changes once a day).
    cached_key: Mutex<Option<(String, [u8; 32])>>,
}

/// A request time in SigV4's two forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningTime {
    /// `YYYYMMDDTHHMMSSZ`, the `X-Amz-Date` header.
    pub amz_date: String,
    /// `YYYYMMDD`, the scope's date.
    pub date: String,
}

impl SigningTime {
    /// The current time (UTC), formatted once per second on each thread.
    pub fn now() -> SigningTime {
        thread_local! {
            static LAST: std::cell::RefCell<Option<(u64, SigningTime)>> = const { std::cell::RefCell::new(None) };
        }
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        LAST.with_borrow_mut(|last| match last {
            Some((s, time)) if *s == seconds => time.clone(),
            _ => {
                let time = SigningTime::from_unix_seconds(seconds);
                *last = Some((seconds, time.clone()));
                time
            }
        })
    }

    /// The time `seconds` after the Unix epoch.
    pub fn from_unix_seconds(seconds: u64) -> SigningTime {
        let amz_date = khata_types::calendar::iso8601_basic(seconds as i64);
        let date = amz_date[..8].to_string();
        SigningTime { amz_date, date }
    }
}

impl Signer {
    /// A signer for `service` in `region` with these credentials.
    pub fn new(access_key_id: &str, secret_access_key: &str, region: &str, service: &str) -> Self {
        Signer {
            access_key_id: access_key_id.to_string(),
            secret_access_key: secret_access_key.to_string(),
            region: region.to_string(),
            service: service.to_string(),
            cached_key: Default::default(),
        }
    }

    /// The `Authorization` header of a request. `headers` are the signed headers as
    /// `(lower-case name, trimmed value)`, sorted by name; `x-amz-date` must be among them with
    /// `time.amz_date`.
    pub fn authorization(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
        time: &SigningTime,
    ) -> String {
        debug_assert!(headers.windows(2).all(|w| w[0].0 < w[1].0));
        let mut canonical = String::with_capacity(512);
        canonical.push_str(method);
        canonical.push('\n');
        canonical.push_str(path);
        canonical.push_str("\n\n");
        for (name, value) in headers {
            canonical.push_str(name);
            canonical.push(':');
            canonical.push_str(value);
            canonical.push('\n');
        }
        canonical.push('\n');
        let signed_headers = headers
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(";");
        canonical.push_str(&signed_headers);
        canonical.push('\n');
        canonical.push_str(&hex(&Sha256::digest(body)));

        let scope = format!(
            "{}/{}/{}/aws4_request",
            time.date, self.region, self.service
        );
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
            time.amz_date,
            hex(&Sha256::digest(canonical.as_bytes()))
        );
        let key = self.signing_key(&time.date);
        let signature = hex(&hmac(&key, string_to_sign.as_bytes()));
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, \
             Signature={signature}",
            self.access_key_id
        )
    }

    /// The signing key for `date`, derived once per date.
    fn signing_key(&self, date: &str) -> [u8; 32] {
        let mut cached = self.cached_key.lock().expect("signing key lock");
        if let Some((d, key)) = cached.as_ref()
            && d == date
        {
            return *key;
        }
        let secret = format!("AWS4{}", self.secret_access_key);
        let k_date = hmac(secret.as_bytes(), date.as_bytes());
        let k_region = hmac(&k_date, self.region.as_bytes());
        let k_service = hmac(&k_region, self.service.as_bytes());
        let key = hmac(&k_service, b"aws4_request");
        *cached = Some((date.to_string(), key));
        key
    }
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `v4/post-x-www-form-urlencoded` of the AWS signing test suite (as shipped in the
    /// `aws-sigv4` crate): the header form's signature.
    #[test]
    fn signs_the_test_suite_post_case() {
        let signer = Signer::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "us-east-1",
            "service",
        );
        let time = SigningTime::from_unix_seconds(1_440_938_160); // 2015-08-30T12:36:00Z
        assert_eq!(time.amz_date, "20150830T123600Z");
        let body = b"Param1=value1";
        let body_hash = hex(&Sha256::digest(body));
        let headers = [
            ("content-length", "13"),
            ("content-type", "application/x-www-form-urlencoded"),
            ("host", "example.amazonaws.com"),
            ("x-amz-content-sha256", body_hash.as_str()),
            ("x-amz-date", "20150830T123600Z"),
        ];
        let authorization = signer.authorization("POST", "/", &headers, body, &time);
        assert_eq!(
            authorization,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, \
             Signature=d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"
        );
    }

    #[test]
    fn dates_cross_leap_days_and_centuries() {
        let at = |s| SigningTime::from_unix_seconds(s).amz_date;
        assert_eq!(at(0), "19700101T000000Z");
        assert_eq!(at(951_782_400), "20000229T000000Z");
        assert_eq!(at(951_868_799), "20000229T235959Z");
        assert_eq!(at(4_107_542_400), "21000301T000000Z");
    }
}
