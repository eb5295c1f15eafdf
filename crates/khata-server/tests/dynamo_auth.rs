//! SigV4 on the DynamoDB endpoint: with `dynamo_access_keys` configured, a request the SDK
//! signs with a configured key is served; a wrong secret is `InvalidSignatureException`, an
//! unknown key `UnrecognizedClientException`, an unsigned request
//! `MissingAuthenticationTokenException`, a request signed 20 minutes in the past or future
//! `InvalidSignatureException` (Signature expired / not yet current), a session token
//! `UnrecognizedClientException`. Without keys, anything goes.

mod dynamo_support;
mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use support::TestNode;

const KEY: &str = "AKIDKHATA";
const SECRET: &str = "khata-secret-key/0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signatures_are_verified_when_keys_are_configured() {
    let mut node = TestNode::start_with(|c| {
        c.dynamo_access_keys = BTreeMap::from([(KEY.to_string(), SECRET.to_string())]);
    })
    .await;
    let address = node.dynamo_address();

    let good = dynamo_support::client_with(address, KEY, SECRET);
    let tables = good.list_tables().send().await.unwrap();
    assert!(tables.table_names().is_empty());

    let wrong_secret = dynamo_support::client_with(address, KEY, "not-the-secret");
    let e = wrong_secret
        .list_tables()
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidSignatureException"));
    assert!(
        e.message()
            .unwrap()
            .starts_with("The request signature we calculated does not match")
    );

    let unknown = dynamo_support::client_with(address, "AKIDUNKNOWN", SECRET);
    let e = unknown
        .list_tables()
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("UnrecognizedClientException"));
    assert_eq!(
        e.message(),
        Some("The security token included in the request is invalid.")
    );

    // A clock 20 minutes off either way: DynamoDB allows 15.
    let twenty_minutes = std::time::Duration::from_secs(20 * 60);
    for (ahead, words) in [
        (false, "Signature expired: "),
        (true, "Signature not yet current: "),
    ] {
        let skewed =
            dynamo_support::client_skewed(address, KEY, SECRET, None, twenty_minutes, ahead);
        let e = skewed
            .list_tables()
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidSignatureException"), "{e:?}");
        assert!(e.message().unwrap().starts_with(words), "{e:?}");
    }
    // Ten minutes off is within the allowance.
    let close = dynamo_support::client_skewed(
        address,
        KEY,
        SECRET,
        None,
        std::time::Duration::from_secs(600),
        false,
    );
    close.list_tables().send().await.unwrap();

    // Temporary credentials: khata issues none, so no session token is valid.
    let session = dynamo_support::client_skewed(
        address,
        KEY,
        SECRET,
        Some("FQoGZXIvYXdzEXAMPLETOKEN"),
        std::time::Duration::ZERO,
        false,
    );
    let e = session
        .list_tables()
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("UnrecognizedClientException"));

    // No Authorization header at all.
    let body = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(address).unwrap();
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\
             Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    })
    .await
    .unwrap();
    assert!(body.starts_with("HTTP/1.1 400"), "{body}");
    assert!(
        body.contains("MissingAuthenticationTokenException"),
        "{body}"
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_keys_any_signature_is_accepted() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client_with(node.dynamo_address(), "anything", "whatever");
    client.list_tables().send().await.unwrap();
    node.stop().await;
}
