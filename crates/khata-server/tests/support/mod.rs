//! A node started inside the test, on a free loopback port, in a temporary directory.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use khata_server::config::Config;
use khata_server::node::Node;

/// A running node and its data directory (removed on drop).
pub struct TestNode {
    pub node: Option<Node>,
    pub dir: tempfile::TempDir,
}

/// A configuration for a test node: loopback, OS-chosen ports, data in `dir`.
pub fn test_config(dir: &Path) -> Config {
    Config {
        data_dir: PathBuf::from(dir),
        native_transport_port: 0,
        admin_port: 0,
        dynamo_port: 0,
        storage_port: 0,
        ..Config::default()
    }
}

impl TestNode {
    pub async fn start() -> TestNode {
        TestNode::start_with(|_| {}).await
    }

    /// A node with its test configuration changed by `change`.
    pub async fn start_with(change: impl FnOnce(&mut Config)) -> TestNode {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = test_config(dir.path());
        change(&mut config);
        let node = Node::start(&config).await.expect("node starts");
        TestNode {
            node: Some(node),
            dir,
        }
    }

    pub fn cql_address(&self) -> SocketAddr {
        self.node.as_ref().expect("running").cql_address()
    }

    /// A `scylla` driver session connected to the node.
    pub async fn cql_session(&self) -> scylla::client::session::Session {
        scylla::client::session_builder::SessionBuilder::new()
            .known_node_addr(self.cql_address())
            .build()
            .await
            .expect("the driver connects")
    }

    pub fn dynamo_address(&self) -> SocketAddr {
        self.node.as_ref().expect("running").dynamo_address()
    }

    pub fn admin_address(&self) -> SocketAddr {
        self.node.as_ref().expect("running").admin_address()
    }

    /// The running node.
    #[allow(dead_code)] // not every test binary that includes this module uses it
    pub fn node(&self) -> &khata_server::node::Node {
        self.node.as_ref().expect("running")
    }

    pub async fn stop(&mut self) {
        if let Some(node) = self.node.take() {
            node.shutdown().await;
        }
    }
}
