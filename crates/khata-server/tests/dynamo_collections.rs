//! Item collections of DynamoDB tables with local secondary indexes, through
//! `aws-sdk-dynamodb` against a node the test starts with a small collection limit
//! (`dynamo_item_collection_size_limit`, DynamoDB's 10 GB by default): the limit refuses the
//! PutItem, UpdateItem, BatchWriteItem and TransactWriteItems that would grow a collection
//! past it (counting each item and its LSI entries), lets every shrinking write through,
//! answers `ReturnItemCollectionMetrics: SIZE`, and keeps the sizes across a restart.

mod dynamo_support;
mod support;

use dynamo_support::{attr, key, put_request, s};

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::types::{
    BillingMode, KeyType, LocalSecondaryIndex, Projection, ProjectionType, Put,
    ReturnItemCollectionMetrics, ScalarAttributeType, TransactWriteItem,
};
use khata_server::node::Node;
use support::TestNode;

type Item = HashMap<String, AttributeValue>;

/// The collection limit of the test node.
const LIMIT: u64 = 2000;

/// Table `name` (PK, SK), with an LSI `by-n` on (PK, n) projecting everything when `lsi`.
async fn create(client: &Client, name: &str, lsi: bool) {
    let mut c = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("PK", KeyType::Hash))
        .key_schema(key("SK", KeyType::Range))
        .attribute_definitions(attr("PK", ScalarAttributeType::S))
        .attribute_definitions(attr("SK", ScalarAttributeType::S));
    if lsi {
        c = c
            .attribute_definitions(attr("n", ScalarAttributeType::N))
            .local_secondary_indexes(
                LocalSecondaryIndex::builder()
                    .index_name("by-n")
                    .key_schema(key("PK", KeyType::Hash))
                    .key_schema(key("n", KeyType::Range))
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::All)
                            .build(),
                    )
                    .build()
                    .unwrap(),
            );
    }
    c.send().await.unwrap();
}

/// An item of 309 bytes (names and values, as DynamoDB counts them); with `n` (3 more bytes)
/// it is in the LSI too: 724 bytes of its collection (the item, the same again projected into
/// the LSI, and 100 bytes of overhead).
fn item(pk: &str, sk: &str, indexed: bool) -> Item {
    let mut i = Item::new();
    i.insert("PK".into(), s(pk));
    i.insert("SK".into(), s(sk));
    i.insert("pad".into(), s(&"x".repeat(300)));
    if indexed {
        i.insert("n".into(), AttributeValue::N("5".into()));
    }
    i
}

async fn put(client: &Client, table: &str, item: Item) -> Result<(), PutItemError> {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| e.into_service_error())
}

fn is_limit(e: &PutItemError) -> bool {
    matches!(e, PutItemError::ItemCollectionSizeLimitExceededException(_))
        && e.message() == Some("Collection size exceeded.")
}

async fn exists(client: &Client, table: &str, pk: &str, sk: &str) -> bool {
    client
        .get_item()
        .table_name(table)
        .key("PK", s(pk))
        .key("SK", s(sk))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .is_some()
}

async fn start() -> TestNode {
    TestNode::start_with(|c| c.dynamo_item_collection_size_limit_bytes = LIMIT).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_that_grow_a_collection_past_the_limit_are_refused() {
    let mut node = start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "orders", true).await;

    // Two indexed items (1448 bytes) fit; a third would make 2172.
    put(&client, "orders", item("a", "1", true)).await.unwrap();
    put(&client, "orders", item("a", "2", true)).await.unwrap();
    let e = put(&client, "orders", item("a", "3", true))
        .await
        .unwrap_err();
    assert!(is_limit(&e), "{e:?}");
    assert!(!exists(&client, "orders", "a", "3").await);
    // An item outside the index counts only itself: one fits (1757), a second not (2066).
    put(&client, "orders", item("a", "4", false)).await.unwrap();
    let e = put(&client, "orders", item("a", "5", false))
        .await
        .unwrap_err();
    assert!(is_limit(&e), "{e:?}");
    // Another partition key is another collection.
    put(&client, "orders", item("b", "1", true)).await.unwrap();
    // Rewriting an item the same does not grow its collection.
    put(&client, "orders", item("a", "1", true)).await.unwrap();

    // UpdateItem: growing is refused, shrinking passes.
    let grow = client
        .update_item()
        .table_name("orders")
        .key("PK", s("a"))
        .key("SK", s("4"))
        .update_expression("SET extra = :v")
        .expression_attribute_values(":v", s(&"y".repeat(400)))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(
        matches!(
            grow,
            UpdateItemError::ItemCollectionSizeLimitExceededException(_)
        ),
        "{grow:?}"
    );
    client
        .update_item()
        .table_name("orders")
        .key("PK", s("a"))
        .key("SK", s("2"))
        .update_expression("REMOVE n")
        .send()
        .await
        .unwrap();
    // a/2 left the index (415 bytes freed, 1342 left): one more unindexed item fits (1651),
    // an indexed one would not (2375).
    put(&client, "orders", item("a", "5", false)).await.unwrap();

    // BatchWriteItem: the whole batch is refused, nothing of it is written.
    let batch = client
        .batch_write_item()
        .request_items(
            "orders",
            vec![
                put_request(item("b", "2", false)),
                put_request(item("a", "6", true)),
            ],
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(
        matches!(
            batch,
            BatchWriteItemError::ItemCollectionSizeLimitExceededException(_)
        ),
        "{batch:?}"
    );
    assert!(!exists(&client, "orders", "b", "2").await);
    assert!(!exists(&client, "orders", "a", "6").await);

    // TransactWriteItems: cancelled, with the reason on the action that would grow it.
    let transact_put = |i: Item| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name("orders")
                    .set_item(Some(i))
                    .build()
                    .unwrap(),
            )
            .build()
    };
    let cancelled = client
        .transact_write_items()
        .transact_items(transact_put(item("b", "3", false)))
        .transact_items(transact_put(item("a", "7", true)))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let TransactWriteItemsError::TransactionCanceledException(c) = &cancelled else {
        panic!("{cancelled:?}");
    };
    let codes: Vec<Option<&str>> = c.cancellation_reasons().iter().map(|r| r.code()).collect();
    assert_eq!(
        codes,
        [Some("None"), Some("ItemCollectionSizeLimitExceeded")]
    );
    assert!(!exists(&client, "orders", "b", "3").await);

    // DeleteItem always passes, and frees room.
    client
        .delete_item()
        .table_name("orders")
        .key("PK", s("a"))
        .key("SK", s("1"))
        .send()
        .await
        .unwrap();
    put(&client, "orders", item("a", "6", true)).await.unwrap();

    let e = put(&client, "orders", item("a", "8", true))
        .await
        .unwrap_err();
    assert!(is_limit(&e), "{e:?}");

    // The sizes are stored: after a restart the collection is as full as it was.
    node.stop().await;
    let mut config = support::test_config(node.dir.path());
    config.dynamo_item_collection_size_limit_bytes = LIMIT;
    let restarted = Node::start(&config).await.unwrap();
    let client = dynamo_support::client(restarted.dynamo_address());
    let e = put(&client, "orders", item("a", "8", true))
        .await
        .unwrap_err();
    assert!(is_limit(&e), "{e:?}");
    put(&client, "orders", item("b", "8", true)).await.unwrap();
    restarted.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn return_item_collection_metrics_answers_for_tables_with_lsis() {
    let mut node = start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "with_lsi", true).await;
    create(&client, "plain", false).await;

    let out = client
        .put_item()
        .table_name("with_lsi")
        .set_item(Some(item("u", "1", true)))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    let m = out.item_collection_metrics().expect("metrics");
    assert_eq!(m.item_collection_key().unwrap().get("PK"), Some(&s("u")));
    assert_eq!(m.size_estimate_range_gb(), [0.0, 1.0]);

    let out = client
        .update_item()
        .table_name("with_lsi")
        .key("PK", s("u"))
        .key("SK", s("1"))
        .update_expression("SET a = :a")
        .expression_attribute_values(":a", s("b"))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    assert!(out.item_collection_metrics().is_some());
    let out = client
        .delete_item()
        .table_name("with_lsi")
        .key("PK", s("u"))
        .key("SK", s("1"))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    assert!(out.item_collection_metrics().is_some());

    // Batches and transactions answer one entry per collection they touched, by table.
    let out = client
        .batch_write_item()
        .request_items(
            "with_lsi",
            ["1", "2"]
                .iter()
                .map(|sk| put_request(item("v", sk, false)))
                .collect(),
        )
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    let metrics = out.item_collection_metrics().expect("metrics");
    assert_eq!(metrics["with_lsi"].len(), 1);
    let out = client
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name("with_lsi")
                        .set_item(Some(item("w", "1", true)))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.item_collection_metrics().expect("metrics")["with_lsi"].len(),
        1
    );

    // A table without LSIs has no item collections to measure.
    let out = client
        .put_item()
        .table_name("plain")
        .set_item(Some(item("u", "1", true)))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    assert!(out.item_collection_metrics().is_none());

    // A bad value is DynamoDB's ValidationException.
    let e = client
        .put_item()
        .table_name("plain")
        .set_item(Some(item("u", "1", true)))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::from("ALL"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("ValidationException"));
    assert!(
        e.message()
            .unwrap()
            .contains("Member must satisfy enum value set: [SIZE, NONE]")
    );
    node.stop().await;
}
