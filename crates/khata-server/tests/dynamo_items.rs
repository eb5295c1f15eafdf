//! DynamoDB item operations through `aws-sdk-dynamodb` against a node started by the test:
//! PutItem, GetItem (with a projection), UpdateItem (conditions, ReturnValues), DeleteItem,
//! Query (begins_with, newest first, pages) and Scan (parallel segments); items survive a
//! restart; concurrent conditional increments of one item lose no update.

mod dynamo_support;
mod support;

use dynamo_support::{n, s};

use std::collections::{BTreeSet, HashMap};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, ReturnValue,
    ScalarAttributeType,
};
use khata_server::config::CommitLogSync;
use support::TestNode;

async fn create(client: &Client, name: &str) {
    client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("PK")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("SK")
                .key_type(KeyType::Range)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("PK")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("SK")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

fn key(pk: &str, sk: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([("PK".to_string(), s(pk)), ("SK".to_string(), s(sk))])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_are_put_read_updated_queried_scanned_and_deleted() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "shop").await;

    // PutItem and GetItem, with a projection.
    client
        .put_item()
        .table_name("shop")
        .set_item(Some(key("USER#42", "PROFILE")))
        .item("name", s("Kim"))
        .item("age", n("41.50"))
        .send()
        .await
        .unwrap();
    let got = client
        .get_item()
        .table_name("shop")
        .set_key(Some(key("USER#42", "PROFILE")))
        .send()
        .await
        .unwrap();
    let item = got.item().unwrap();
    assert_eq!(item.get("age"), Some(&n("41.5")));
    assert_eq!(item.get("name"), Some(&s("Kim")));
    let got = client
        .get_item()
        .table_name("shop")
        .set_key(Some(key("USER#42", "PROFILE")))
        .projection_expression("#n")
        .expression_attribute_names("#n", "name")
        .send()
        .await
        .unwrap();
    assert_eq!(got.item().unwrap().len(), 1);

    // A claim: the second PutItem's condition fails.
    let claim = || {
        client
            .put_item()
            .table_name("shop")
            .set_item(Some(key("USERNAME#kim", "CLAIM")))
            .condition_expression("attribute_not_exists(PK)")
    };
    claim().send().await.unwrap();
    let err = claim().send().await.unwrap_err();
    assert_eq!(
        err.into_service_error().code(),
        Some("ConditionalCheckFailedException")
    );

    // DescribeTable estimates the items and their bytes (two items, never overwritten).
    let described = client
        .describe_table()
        .table_name("shop")
        .send()
        .await
        .unwrap();
    let t = described.table().unwrap();
    assert_eq!(t.item_count(), Some(2));
    assert!(t.table_size_bytes().unwrap() > 0);

    // UpdateItem with a condition and ReturnValues.
    let update = client
        .update_item()
        .table_name("shop")
        .set_key(Some(key("USER#42", "PROFILE")))
        .update_expression("SET age = age + :one, visits = if_not_exists(visits, :zero) + :one")
        .condition_expression("attribute_exists(PK)")
        .expression_attribute_values(":one", n("1"))
        .expression_attribute_values(":zero", n("0"))
        .return_values(ReturnValue::UpdatedNew)
        .send()
        .await
        .unwrap();
    let updated = update.attributes().unwrap();
    assert_eq!(updated.get("age"), Some(&n("42.5")));
    assert_eq!(updated.get("visits"), Some(&n("1")));

    // Orders, newest first with begins_with, in pages.
    for day in 1..=25 {
        client
            .put_item()
            .table_name("shop")
            .set_item(Some(key(
                "USER#42",
                &format!("ORDER#2026-10-{day:02}#{day}"),
            )))
            .item("total", n(&day.to_string()))
            .send()
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut start = None;
    loop {
        let page = client
            .query()
            .table_name("shop")
            .key_condition_expression("PK = :pk AND begins_with(SK, :p)")
            .expression_attribute_values(":pk", s("USER#42"))
            .expression_attribute_values(":p", s("ORDER#"))
            .scan_index_forward(false)
            .limit(10)
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        for item in page.items() {
            let AttributeValue::S(sk) = &item["SK"] else {
                panic!("SK is a string")
            };
            seen.push(sk.clone());
        }
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 25);
    assert_eq!(seen[0], "ORDER#2026-10-25#25");
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(seen, sorted);

    // Scan in 3 segments: every item exactly once.
    let mut keys = BTreeSet::new();
    let mut total = 0;
    for segment in 0..3 {
        let page = client
            .scan()
            .table_name("shop")
            .segment(segment)
            .total_segments(3)
            .send()
            .await
            .unwrap();
        for item in page.items() {
            total += 1;
            keys.insert(format!("{:?}/{:?}", item["PK"], item["SK"]));
        }
    }
    assert_eq!(total, 27);
    assert_eq!(keys.len(), 27);

    // DeleteItem with ALL_OLD.
    let old = client
        .delete_item()
        .table_name("shop")
        .set_key(Some(key("USERNAME#kim", "CLAIM")))
        .return_values(ReturnValue::AllOld)
        .send()
        .await
        .unwrap();
    assert!(old.attributes().is_some());

    // Items survive a restart.
    let dir = node.dir.path().to_path_buf();
    node.stop().await;
    let restarted = khata_server::node::Node::start(&support::test_config(&dir))
        .await
        .unwrap();
    let client = dynamo_support::client(restarted.dynamo_address());
    let got = client
        .get_item()
        .table_name("shop")
        .set_key(Some(key("USER#42", "PROFILE")))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(got.item().unwrap().get("visits"), Some(&n("1")));
    let gone = client
        .get_item()
        .table_name("shop")
        .set_key(Some(key("USERNAME#kim", "CLAIM")))
        .send()
        .await
        .unwrap();
    assert!(gone.item().is_none());
    restarted.shutdown().await;
}

/// Many clients doing optimistic conditional increments of one item (read, then
/// `SET n = n + 1` if `n` is still what they read) lose no update, and `ADD` from as many
/// clients at once counts every one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_conditional_increments_lose_no_update() {
    conditional_increments_lose_no_update(CommitLogSync::Periodic).await;
}

/// In batch mode every write waits for its fsync, so the conditional writes' read-modify-write
/// spans a wait for the disk: it must still be atomic per item.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_conditional_increments_lose_no_update_when_writes_wait_for_fsync() {
    conditional_increments_lose_no_update(CommitLogSync::Batch).await;
}

async fn conditional_increments_lose_no_update(sync: CommitLogSync) {
    let mut node = TestNode::start_with(|c| c.commitlog_sync = sync).await;
    let address = node.dynamo_address();
    let client = dynamo_support::client(address);
    create(&client, "counters").await;
    let counter = key("COUNTER", "c");
    client
        .put_item()
        .table_name("counters")
        .set_item(Some(counter.clone()))
        .item("n", n("0"))
        .item("added", n("0"))
        .send()
        .await
        .unwrap();
    const CLIENTS: usize = 8;
    const EACH: usize = 25;
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let counter = counter.clone();
        // One client (one connection pool) per task, as separate processes would be.
        let client = dynamo_support::client(address);
        tasks.push(tokio::spawn(async move {
            let mut done = 0;
            let mut conflicts = 0;
            while done < EACH {
                let seen = client
                    .get_item()
                    .table_name("counters")
                    .set_key(Some(counter.clone()))
                    .consistent_read(true)
                    .send()
                    .await
                    .unwrap()
                    .item()
                    .unwrap()["n"]
                    .clone();
                let r = client
                    .update_item()
                    .table_name("counters")
                    .set_key(Some(counter.clone()))
                    .update_expression("SET n = n + :one ADD added :one")
                    .condition_expression("n = :seen")
                    .expression_attribute_values(":one", n("1"))
                    .expression_attribute_values(":seen", seen)
                    .send()
                    .await;
                match r {
                    Ok(_) => done += 1,
                    Err(e) => {
                        let e = e.into_service_error();
                        assert_eq!(e.code(), Some("ConditionalCheckFailedException"), "{e:?}");
                        conflicts += 1;
                    }
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for t in tasks {
        conflicts += t.await.unwrap();
    }
    let item = client
        .get_item()
        .table_name("counters")
        .set_key(Some(counter))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    let item = item.item().unwrap();
    let total = (CLIENTS * EACH).to_string();
    assert_eq!(item["n"], n(&total), "{conflicts} conflicts");
    assert_eq!(item["added"], n(&total));
    node.stop().await;
}

/// An update that only removes leaves an absent item absent (any other update creates it);
/// the Query and Scan parameters DynamoDB refuses before reading: filters on key attributes,
/// start keys outside the query or segment, empty placeholder maps, an empty key value,
/// legacy parameters beside expressions, a table's ALL_PROJECTED_ATTRIBUTES, bad segments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removals_of_absent_items_and_refused_reads() {
    use aws_sdk_dynamodb::types::{
        AttributeValueUpdate, ComparisonOperator, Condition, Select, TransactWriteItem, Update,
    };
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "refusals").await;
    let exists = async |pk: &str, sk: &str| {
        client
            .get_item()
            .table_name("refusals")
            .set_key(Some(key(pk, sk)))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item
            .is_some()
    };
    let answer = client
        .update_item()
        .table_name("refusals")
        .set_key(Some(key("ghost", "1")))
        .update_expression("REMOVE a")
        .return_values(ReturnValue::AllNew)
        .send()
        .await
        .unwrap();
    assert!(answer.attributes.is_none());
    client
        .update_item()
        .table_name("refusals")
        .set_key(Some(key("ghost", "2")))
        .attribute_updates(
            "a",
            AttributeValueUpdate::builder()
                .action(aws_sdk_dynamodb::types::AttributeAction::Delete)
                .build(),
        )
        .send()
        .await
        .unwrap();
    client
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .update(
                    Update::builder()
                        .table_name("refusals")
                        .set_key(Some(key("ghost", "3")))
                        .update_expression("REMOVE a")
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    for sk in ["1", "2", "3"] {
        assert!(!exists("ghost", sk).await, "ghost {sk}");
    }
    // An update with nothing to set still creates the item, as in DynamoDB.
    client
        .update_item()
        .table_name("refusals")
        .set_key(Some(key("made", "1")))
        .send()
        .await
        .unwrap();
    assert!(exists("made", "1").await);
    // A removal of a key attribute is refused whether the item exists or not.
    let err = client
        .update_item()
        .table_name("refusals")
        .set_key(Some(key("ghost", "4")))
        .update_expression("REMOVE SK")
        .send()
        .await
        .unwrap_err();
    assert!(
        err.message()
            .unwrap_or_default()
            .contains("This attribute is part of the key"),
        "{err:?}"
    );

    for i in 0..3 {
        client
            .put_item()
            .table_name("refusals")
            .set_item(Some(key("p", &format!("{i}"))))
            .send()
            .await
            .unwrap();
    }
    let query = || {
        client
            .query()
            .table_name("refusals")
            .key_condition_expression("PK = :p")
            .expression_attribute_values(":p", s("p"))
    };
    let refused = async |sent: Result<(), (Option<String>, Option<String>)>, message: &str| {
        let Err((code, got)) = sent else {
            panic!("{message}: accepted")
        };
        assert_eq!(got.as_deref(), Some(message));
        assert_eq!(code.as_deref(), Some("ValidationException"));
    };
    refused(
        query()
            .filter_expression("SK = :z")
            .expression_attribute_values(":z", s("0"))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: SK",
    )
    .await;
    refused(
        client
            .query()
            .table_name("refusals")
            .key_conditions(
                "PK",
                Condition::builder()
                    .comparison_operator(ComparisonOperator::Eq)
                    .attribute_value_list(s("p"))
                    .build()
                    .unwrap(),
            )
            .query_filter(
                "PK",
                Condition::builder()
                    .comparison_operator(ComparisonOperator::NotNull)
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "QueryFilter can only contain non-primary key attributes: Primary key attribute: PK",
    )
    .await;
    refused(
        query()
            .set_exclusive_start_key(Some(key("q", "1")))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "The provided starting key is outside query boundaries based on provided conditions",
    )
    .await;
    refused(
        client
            .query()
            .table_name("refusals")
            .key_condition_expression("PK = :p AND SK > :s")
            .expression_attribute_values(":p", s("p"))
            .expression_attribute_values(":s", s("1"))
            .set_exclusive_start_key(Some(key("p", "0")))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "The provided starting key does not match the range key predicate",
    )
    .await;
    refused(
        client
            .query()
            .table_name("refusals")
            .key_condition_expression("PK = :p")
            .expression_attribute_values(":p", s(""))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: PK",
    )
    .await;
    refused(
        query()
            .query_filter(
                "x",
                Condition::builder()
                    .comparison_operator(ComparisonOperator::Null)
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {QueryFilter} Expression parameters: {KeyConditionExpression}",
    )
    .await;
    refused(
        query()
            .select(Select::AllProjectedAttributes)
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "1 validation error detected: ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    )
    .await;
    refused(
        client
            .update_item()
            .table_name("refusals")
            .set_key(Some(key("p", "0")))
            .update_expression("REMOVE q")
            .set_expression_attribute_values(Some(HashMap::new()))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "1 validation error detected: ExpressionAttributeValues must not be empty",
    )
    .await;
    refused(
        client
            .update_item()
            .table_name("refusals")
            .set_key(Some(key("p", "0")))
            .update_expression("REMOVE q")
            .set_expression_attribute_names(Some(HashMap::new()))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "ExpressionAttributeNames must not be empty",
    )
    .await;
    refused(
        client
            .scan()
            .table_name("refusals")
            .segment(0)
            .total_segments(0)
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "1 validation error detected: Value '0' at 'totalSegments' failed to satisfy constraint: Member must have value greater than or equal to 1",
    )
    .await;
    refused(
        client
            .scan()
            .table_name("refusals")
            .segment(-1)
            .total_segments(2_000_000)
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "2 validation errors detected: Value '-1' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0; Value '2000000' at 'totalSegments' failed to satisfy constraint: Member must have value less than or equal to 1000000",
    )
    .await;
    // A document path inside a key attribute, in any expression.
    refused(
        client
            .put_item()
            .table_name("refusals")
            .set_item(Some(key("z", "1")))
            .condition_expression("attribute_not_exists(PK.x)")
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: PK",
    )
    .await;
    refused(
        query()
            .projection_expression("SK[0]")
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: SK",
    )
    .await;
    // A start key from one segment's pages, given to the other segment.
    let first = client
        .scan()
        .table_name("refusals")
        .segment(0)
        .total_segments(2)
        .limit(1)
        .send()
        .await
        .unwrap();
    let (start, other) = match first.last_evaluated_key {
        Some(k) => (k, 1),
        None => {
            let second = client
                .scan()
                .table_name("refusals")
                .segment(1)
                .total_segments(2)
                .limit(1)
                .send()
                .await
                .unwrap();
            (second.last_evaluated_key.expect("a page of one"), 0)
        }
    };
    refused(
        client
            .scan()
            .table_name("refusals")
            .segment(other)
            .total_segments(2)
            .set_exclusive_start_key(Some(start))
            .send()
            .await
            .map(|_| ())
            .map_err(meta),
        &format!(
            "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: 2 Segment: {other}"
        ),
    )
    .await;
    node.stop().await;
}

/// An error's code and message.
fn meta<E: ProvideErrorMetadata>(e: E) -> (Option<String>, Option<String>) {
    (
        e.code().map(str::to_string),
        e.message().map(str::to_string),
    )
}
