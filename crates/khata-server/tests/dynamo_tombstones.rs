//! DynamoDB reads and CQL's tombstone thresholds, on a node whose
//! `tombstone_failure_threshold` is 20: an item written by PutItem, BatchWriteItem or a
//! transaction's Put (each a row written over its own deletion) is no tombstone, so a Query
//! over 30 such items reads them all; and Query, Query of an index and Scan over 40 deleted
//! items never fail (DynamoDB never fails a read on deleted items), where a CQL read of the
//! same partition does.

mod dynamo_support;
mod support;

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, GlobalSecondaryIndex, KeyType, Projection, ProjectionType, Put,
    ScalarAttributeType, TransactWriteItem,
};
use dynamo_support::{attr, delete_request, key, n, put_request, s};
use support::TestNode;

const FAIL: u32 = 20;

async fn create(client: &Client, table: &str) {
    client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("PK", KeyType::Hash))
        .key_schema(key("SK", KeyType::Range))
        .attribute_definitions(attr("PK", ScalarAttributeType::S))
        .attribute_definitions(attr("SK", ScalarAttributeType::N))
        .attribute_definitions(attr("state", ScalarAttributeType::S))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by_state")
                .key_schema(key("state", KeyType::Hash))
                .key_schema(key("SK", KeyType::Range))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

fn item(i: usize) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("PK".to_string(), s("p")),
        ("SK".to_string(), n(&i.to_string())),
        ("state".to_string(), s("ready")),
        ("body".to_string(), s("job")),
    ])
}

fn item_key(i: usize) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("PK".to_string(), s("p")),
        ("SK".to_string(), n(&i.to_string())),
    ])
}

/// The SK of every item a Query of partition `p` returns, over all its pages.
async fn query_all(client: &Client, table: &str, index: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = None;
    loop {
        let (name, value) = match index {
            Some(_) => ("state", "ready"),
            None => ("PK", "p"),
        };
        let page = client
            .query()
            .table_name(table)
            .set_index_name(index.map(str::to_string))
            .key_condition_expression("#k = :v")
            .expression_attribute_names("#k", name)
            .expression_attribute_values(":v", s(value))
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        out.extend(page.items().iter().map(|i| i["SK"].as_n().unwrap().clone()));
        match page.last_evaluated_key() {
            Some(k) => start = Some(k.clone()),
            None => return out,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_items_never_fail_a_read_and_written_items_are_no_tombstones() {
    let node = TestNode::start_with(|c| c.tombstone_failure_threshold = FAIL).await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "queue").await;

    // 30 items: 10 by PutItem, 10 by BatchWriteItem, 10 by TransactWriteItems.
    for i in 0..10 {
        client
            .put_item()
            .table_name("queue")
            .set_item(Some(item(i)))
            .send()
            .await
            .unwrap();
    }
    client
        .batch_write_item()
        .request_items("queue", (10..20).map(|i| put_request(item(i))).collect())
        .send()
        .await
        .unwrap();
    for i in 20..30 {
        let put = Put::builder()
            .table_name("queue")
            .set_item(Some(item(i)))
            .build()
            .unwrap();
        client
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build())
            .send()
            .await
            .unwrap();
    }
    let all: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    assert_eq!(query_all(&client, "queue", None).await, all);

    // 40 more, then 60 of the 70 deleted (more than the threshold): reads go on.
    for chunk in (30..70).collect::<Vec<_>>().chunks(20) {
        let puts = chunk.iter().map(|&i| put_request(item(i))).collect();
        client
            .batch_write_item()
            .request_items("queue", puts)
            .send()
            .await
            .unwrap();
    }
    for chunk in (0..60).collect::<Vec<_>>().chunks(20) {
        let deletes = chunk.iter().map(|&i| delete_request(item_key(i))).collect();
        client
            .batch_write_item()
            .request_items("queue", deletes)
            .send()
            .await
            .unwrap();
    }
    let live: Vec<String> = (60..70).map(|i| i.to_string()).collect();
    assert_eq!(query_all(&client, "queue", None).await, live);
    assert_eq!(query_all(&client, "queue", Some("by_state")).await, live);
    let scanned = client.scan().table_name("queue").send().await.unwrap();
    assert_eq!(scanned.count(), 10);

    // The same partition read through CQL still meets the threshold, as Cassandra's reads do.
    let session = node.cql_session().await;
    let failed = session
        .query_unpaged(
            "SELECT * FROM alternator_queue.queue WHERE \"PK\" = 'p'",
            (),
        )
        .await;
    let message = format!(
        "{:?}",
        failed.expect_err("a CQL read fails past the threshold")
    );
    assert!(
        message.contains("tombstone_failure_threshold is 20"),
        "{message}"
    );
}
