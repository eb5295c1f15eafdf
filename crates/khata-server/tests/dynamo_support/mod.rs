//! An `aws-sdk-dynamodb` client for a test node's DynamoDB endpoint: plain HTTP, region
//! us-east-1, the given (or dummy) keys.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;

use aws_credential_types::Credentials;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, DeleteRequest, KeySchemaElement, KeyType, PutRequest,
    ScalarAttributeType, WriteRequest,
};

pub const DUMMY_KEY: &str = "AKIDKHATATEST";
pub const DUMMY_SECRET: &str = "khata/test/secret";

/// A client signing with `key`/`secret`.
pub fn client_with(address: SocketAddr, key: &str, secret: &str) -> Client {
    let http = aws_smithy_http_client::Builder::new().build_http();
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(format!("http://{address}"))
        .credentials_provider(Credentials::new(key, secret, None, None, "khata-test"))
        .http_client(http)
        .build();
    Client::from_conf(config)
}

/// A client signing with `key`/`secret` (and a session token if given) at a clock `skew`
/// away from the real one. It does not retry: the SDK would correct its clock from the
/// answer's `Date` header and succeed on the second attempt, as it does against DynamoDB.
pub fn client_skewed(
    address: SocketAddr,
    key: &str,
    secret: &str,
    session_token: Option<&str>,
    skew: std::time::Duration,
    ahead: bool,
) -> Client {
    #[derive(Debug)]
    struct Skewed(std::time::Duration, bool);
    impl aws_smithy_async::time::TimeSource for Skewed {
        fn now(&self) -> std::time::SystemTime {
            let now = std::time::SystemTime::now();
            if self.1 { now + self.0 } else { now - self.0 }
        }
    }
    let http = aws_smithy_http_client::Builder::new().build_http();
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(format!("http://{address}"))
        .credentials_provider(Credentials::new(
            key,
            secret,
            session_token.map(str::to_string),
            None,
            "khata-test",
        ))
        .time_source(Skewed(skew, ahead))
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
        .http_client(http)
        .build();
    Client::from_conf(config)
}

/// A client with dummy keys.
pub fn client(address: SocketAddr) -> Client {
    client_with(address, DUMMY_KEY, DUMMY_SECRET)
}

/// A string attribute value.
pub fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.into())
}

/// A number attribute value.
pub fn n(v: &str) -> AttributeValue {
    AttributeValue::N(v.into())
}

/// One element of a key schema.
pub fn key(name: &str, kind: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .unwrap()
}

/// One attribute definition.
pub fn attr(name: &str, kind: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()
        .unwrap()
}

/// A BatchWriteItem put of `item`.
pub fn put_request(item: HashMap<String, AttributeValue>) -> WriteRequest {
    WriteRequest::builder()
        .put_request(PutRequest::builder().set_item(Some(item)).build().unwrap())
        .build()
}

/// A BatchWriteItem delete of `key`.
pub fn delete_request(key: HashMap<String, AttributeValue>) -> WriteRequest {
    WriteRequest::builder()
        .delete_request(DeleteRequest::builder().set_key(Some(key)).build().unwrap())
        .build()
}
