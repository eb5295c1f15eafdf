//! An `aws-sdk-dynamodb` client for a test node's DynamoDB endpoint: plain HTTP, region
//! us-east-1, the given (or dummy) keys.

#![allow(dead_code)]

use std::net::SocketAddr;

use aws_credential_types::Credentials;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{BehaviorVersion, Region};

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

/// A client with dummy keys.
pub fn client(address: SocketAddr) -> Client {
    client_with(address, DUMMY_KEY, DUMMY_SECRET)
}
