//! Secondary indexes through the `scylla` driver: prepared index queries paged across
//! partitions, the index kept up to date by writes, and the index surviving a restart.

mod support;

use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use support::TestNode;

async fn connect(address: std::net::SocketAddr) -> Session {
    SessionBuilder::new()
        .known_node_addr(address)
        .build()
        .await
        .expect("connect")
}

async fn by_email(session: &Session, email: &str) -> Vec<(i32, i32)> {
    let mut select = session
        .prepare("SELECT team, id FROM ks.people WHERE email = ?")
        .await
        .unwrap();
    select.set_page_size(7);
    let mut rows: Vec<(i32, i32)> = session
        .execute_iter(select, (email,))
        .await
        .unwrap()
        .rows_stream::<(i32, i32)>()
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_serves_prepared_paged_queries_and_survives_a_restart() {
    let mut node = TestNode::start().await;
    let session = connect(node.cql_address()).await;
    for ddl in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.people (team int, id int, email text, PRIMARY KEY (team, id))",
        "CREATE INDEX people_by_email ON ks.people (email)",
    ] {
        session.query_unpaged(ddl, &[]).await.unwrap();
    }
    let insert = session
        .prepare("INSERT INTO ks.people (team, id, email) VALUES (?, ?, ?)")
        .await
        .unwrap();
    let mut expected = Vec::new();
    for team in 0..25 {
        for id in 0..4 {
            let email = if (team + id) % 5 == 0 {
                expected.push((team, id));
                "shared@x".to_string()
            } else {
                format!("{team}.{id}@x")
            };
            session
                .execute_unpaged(&insert, (team, id, email))
                .await
                .unwrap();
        }
    }
    assert_eq!(by_email(&session, "shared@x").await, expected);
    assert_eq!(by_email(&session, "3.1@x").await, vec![(3, 1)]);

    // A row moved to another value leaves the first one.
    session
        .execute_unpaged(&insert, (0, 0, "moved@x"))
        .await
        .unwrap();
    expected.retain(|r| *r != (0, 0));
    assert_eq!(by_email(&session, "shared@x").await, expected);
    assert_eq!(by_email(&session, "moved@x").await, vec![(0, 0)]);

    drop(session);
    let dir = node.dir.path().to_path_buf();
    node.stop().await;
    let restarted = khata_server::node::Node::start(&support::test_config(&dir))
        .await
        .unwrap();
    let session = connect(restarted.cql_address()).await;
    assert_eq!(by_email(&session, "shared@x").await, expected);
    assert_eq!(by_email(&session, "moved@x").await, vec![(0, 0)]);
    drop(session);
    restarted.shutdown().await;
}
