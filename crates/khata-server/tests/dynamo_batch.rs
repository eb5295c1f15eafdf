//! DynamoDB batches through `aws-sdk-dynamodb` against a node started by the test:
//! BatchWriteItem and BatchGetItem over two tables, DynamoDB's limits and messages,
//! `UnprocessedKeys` past 16 MB, and `ReturnConsumedCapacity` on every item operation.

mod dynamo_support;
mod support;

use dynamo_support::{delete_request as delete, n, put_request as put, s};

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, KeysAndAttributes,
    ReturnConsumedCapacity, ScalarAttributeType, WriteRequest,
};
use support::TestNode;

type Attrs = HashMap<String, AttributeValue>;

/// A table keyed by `PK` (S) and, with `range`, `SK` (S).
async fn create(client: &Client, name: &str, range: bool) {
    let mut req = client
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
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("PK")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        );
    if range {
        req = req
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name("SK")
                    .key_type(KeyType::Range)
                    .build()
                    .unwrap(),
            )
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("SK")
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .unwrap(),
            );
    }
    req.send().await.unwrap();
}

fn key(pk: &str) -> Attrs {
    HashMap::from([("PK".to_string(), s(pk))])
}

fn key2(pk: &str, sk: &str) -> Attrs {
    HashMap::from([("PK".to_string(), s(pk)), ("SK".to_string(), s(sk))])
}

fn with(mut item: Attrs, name: &str, v: AttributeValue) -> Attrs {
    item.insert(name.into(), v);
    item
}

fn keys(list: Vec<Attrs>) -> KeysAndAttributes {
    KeysAndAttributes::builder()
        .set_keys(Some(list))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_write_and_read_items_of_two_tables() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "users", false).await;
    create(&client, "orders", true).await;

    // 25 requests over two tables: the most one batch takes.
    let users: Vec<WriteRequest> = (0..20)
        .map(|i| put(with(key(&format!("u{i}")), "name", s(&format!("user {i}")))))
        .collect();
    let orders: Vec<WriteRequest> = (0..5)
        .map(|i| {
            put(with(
                key2("u1", &format!("o{i}")),
                "total",
                n(&i.to_string()),
            ))
        })
        .collect();
    let out = client
        .batch_write_item()
        .request_items("users", users)
        .request_items("orders", orders)
        .send()
        .await
        .unwrap();
    assert!(out.unprocessed_items().unwrap().is_empty());

    // Read 22 keys (two absent), one table with a projection, the other consistent.
    let mut user_keys: Vec<Attrs> = (0..18).map(|i| key(&format!("u{i}"))).collect();
    user_keys.push(key("nobody"));
    let got = client
        .batch_get_item()
        .request_items(
            "users",
            KeysAndAttributes::builder()
                .set_keys(Some(user_keys))
                .projection_expression("#n")
                .expression_attribute_names("#n", "name")
                .build()
                .unwrap(),
        )
        .request_items(
            "orders",
            KeysAndAttributes::builder()
                .keys(key2("u1", "o0"))
                .keys(key2("u1", "o4"))
                .keys(key2("u1", "o9"))
                .consistent_read(true)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let responses = got.responses().unwrap();
    let users = &responses["users"];
    assert_eq!(users.len(), 18);
    assert!(users.iter().all(|u| u.len() == 1 && u.contains_key("name")));
    let mut totals: Vec<String> = responses["orders"]
        .iter()
        .map(|o| match &o["total"] {
            AttributeValue::N(v) => v.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    totals.sort();
    assert_eq!(totals, ["0", "4"]);
    assert!(got.unprocessed_keys().unwrap().is_empty());

    // Deletes and puts mixed.
    client
        .batch_write_item()
        .request_items(
            "users",
            vec![delete(key("u0")), delete(key("u1")), put(key("u99"))],
        )
        .send()
        .await
        .unwrap();
    let got = client
        .batch_get_item()
        .request_items(
            "users",
            keys(vec![key("u0"), key("u1"), key("u2"), key("u99")]),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(got.responses().unwrap()["users"].len(), 2);

    // A table with a stream: the batch reads the old items under their locks (for the
    // stream's records), and writes as before.
    client
        .create_table()
        .table_name("streamed")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("PK")
                .key_type(KeyType::Hash)
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
        .stream_specification(
            aws_sdk_dynamodb::types::StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(aws_sdk_dynamodb::types::StreamViewType::NewAndOldImages)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let out = client
        .batch_write_item()
        .request_items("streamed", vec![put(key("s1")), put(key("s2"))])
        .send()
        .await
        .unwrap();
    assert!(out.unprocessed_items().unwrap().is_empty());
    assert!(out.consumed_capacity().is_empty(), "not asked for");
    client
        .batch_write_item()
        .request_items("streamed", vec![delete(key("s1"))])
        .send()
        .await
        .unwrap();
    let got = client
        .batch_get_item()
        .request_items("streamed", keys(vec![key("s1"), key("s2")]))
        .send()
        .await
        .unwrap();
    assert_eq!(got.responses().unwrap()["streamed"], vec![key("s2")]);
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_are_limited_and_checked_as_dynamodb_does() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "limits", false).await;
    create(&client, "other", false).await;

    let write_error = |e: aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemError,
    >| {
        let e = e.into_service_error();
        (
            e.code().unwrap_or("").to_string(),
            e.message().unwrap_or("").to_string(),
        )
    };
    let get_error = |e: aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemError,
    >| {
        let e = e.into_service_error();
        (
            e.code().unwrap_or("").to_string(),
            e.message().unwrap_or("").to_string(),
        )
    };

    // 26 requests in one table; 13 + 13 over two.
    let many = |count: usize, prefix: &str| -> Vec<WriteRequest> {
        (0..count)
            .map(|i| put(key(&format!("{prefix}{i}"))))
            .collect()
    };
    let (code, message) = write_error(
        client
            .batch_write_item()
            .request_items("limits", many(26, "a"))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "ValidationException");
    assert!(
        message.contains("Member must have length less than or equal to 25"),
        "{message}"
    );
    let (code, message) = write_error(
        client
            .batch_write_item()
            .request_items("limits", many(13, "a"))
            .request_items("other", many(13, "b"))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "ValidationException",
            "Too many items requested for the BatchWriteItem call"
        )
    );

    // The same item twice in a batch, put or delete.
    let (code, message) = write_error(
        client
            .batch_write_item()
            .request_items("limits", vec![put(key("x")), delete(key("x"))])
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "ValidationException",
            "Provided list of item keys contains duplicates"
        )
    );
    // ...but the same key in two tables is two items.
    client
        .batch_write_item()
        .request_items("limits", vec![put(key("x"))])
        .request_items("other", vec![put(key("x"))])
        .send()
        .await
        .unwrap();

    // A key of the wrong type, a table that does not exist.
    let (code, message) = write_error(
        client
            .batch_write_item()
            .request_items(
                "limits",
                vec![put(HashMap::from([("PK".to_string(), n("1"))]))],
            )
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "ValidationException");
    assert!(message.contains("Type mismatch for key PK"), "{message}");
    let (code, _) = write_error(
        client
            .batch_write_item()
            .request_items("nope-missing", vec![put(key("x"))])
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(code, "ResourceNotFoundException");

    // BatchGetItem: 101 keys over two tables, duplicates, a wrong key.
    let key_list =
        |count: usize| -> Vec<Attrs> { (0..count).map(|i| key(&format!("k{i}"))).collect() };
    let (code, message) = get_error(
        client
            .batch_get_item()
            .request_items("limits", keys(key_list(51)))
            .request_items("other", keys(key_list(50)))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "ValidationException",
            "Too many items requested for the BatchGetItem call"
        )
    );
    let (code, message) = get_error(
        client
            .batch_get_item()
            .request_items("limits", keys(vec![key("a"), key("a")]))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "ValidationException",
            "Provided list of item keys contains duplicates"
        )
    );
    let (code, message) = get_error(
        client
            .batch_get_item()
            .request_items("limits", keys(vec![key2("a", "b")]))
            .send()
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "ValidationException",
            "The provided key element does not match the schema"
        )
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_get_past_16_mb_answers_the_rest_as_unprocessed_keys() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "big", false).await;
    // 45 items of about 390 KB: 17.5 MB in all.
    let blob = "x".repeat(390 * 1024);
    for chunk in 0..3 {
        let requests: Vec<WriteRequest> = (0..15)
            .map(|i| put(with(key(&format!("b{}", chunk * 15 + i)), "blob", s(&blob))))
            .collect();
        client
            .batch_write_item()
            .request_items("big", requests)
            .send()
            .await
            .unwrap();
    }
    let all: Vec<Attrs> = (0..45).map(|i| key(&format!("b{i}"))).collect();
    let first = client
        .batch_get_item()
        .request_items("big", keys(all))
        .send()
        .await
        .unwrap();
    let answered = first.responses().unwrap()["big"].len();
    let left = first.unprocessed_keys().unwrap()["big"].keys().to_vec();
    assert!(answered < 45 && !left.is_empty(), "{answered} answered");
    assert_eq!(answered + left.len(), 45);
    // The unprocessed keys are a request of their own.
    let rest = client
        .batch_get_item()
        .request_items("big", keys(left))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.responses().unwrap()["big"].len() + answered, 45);
    assert!(rest.unprocessed_keys().unwrap().is_empty());
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_item_operation_reports_consumed_capacity() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "units", true).await;
    let total = ReturnConsumedCapacity::Total;
    // An item of `bytes` bytes: "PK" + "p" + "SK" + sk + "v", then a string of the rest.
    let sized =
        |sk: &str, bytes: usize| with(key2("p", sk), "v", s(&"x".repeat(bytes - 6 - sk.len())));

    // PutItem: 1 KB is one unit, a byte more is two.
    let out = client
        .put_item()
        .table_name("units")
        .set_item(Some(sized("s", 1024)))
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!(c.table_name(), Some("units"));
    assert_eq!(c.capacity_units(), Some(1.0));
    assert_eq!(c.write_capacity_units(), Some(1.0));
    let out = client
        .put_item()
        .table_name("units")
        .set_item(Some(sized("s", 1025)))
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(2.0));
    // A small item over a 3 KB one counts the old one.
    client
        .put_item()
        .table_name("units")
        .set_item(Some(sized("s", 3000)))
        .send()
        .await
        .unwrap();
    let out = client
        .put_item()
        .table_name("units")
        .set_item(Some(sized("s", 10)))
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(3.0));

    // GetItem: a strongly consistent read of up to 4 KB is one unit, eventual half; INDEXES
    // adds the table's own figure.
    client
        .put_item()
        .table_name("units")
        .set_item(Some(sized("s", 4097)))
        .send()
        .await
        .unwrap();
    let get = |consistent: bool, mode: ReturnConsumedCapacity| {
        client
            .get_item()
            .table_name("units")
            .set_key(Some(key2("p", "s")))
            .consistent_read(consistent)
            .return_consumed_capacity(mode)
            .send()
    };
    let out = get(true, total.clone()).await.unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(2.0));
    assert_eq!(
        out.consumed_capacity().unwrap().read_capacity_units(),
        Some(2.0)
    );
    let out = get(false, ReturnConsumedCapacity::Indexes).await.unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!(c.capacity_units(), Some(1.0));
    assert_eq!(c.table().unwrap().capacity_units(), Some(1.0));
    let out = get(false, ReturnConsumedCapacity::None).await.unwrap();
    assert!(out.consumed_capacity().is_none());

    // UpdateItem counts the larger of old and new; DeleteItem the item deleted.
    let out = client
        .update_item()
        .table_name("units")
        .set_key(Some(key2("p", "s")))
        .update_expression("SET v = :v")
        .expression_attribute_values(":v", s("short"))
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(5.0));
    let out = client
        .delete_item()
        .table_name("units")
        .set_key(Some(key2("p", "absent")))
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(1.0));

    // Query and Scan add the sizes up and round once: three 2 KB items are 6 KB, two units
    // strongly consistent, one eventually.
    for sk in ["q1", "q2", "q3"] {
        client
            .put_item()
            .table_name("units")
            .set_item(Some(with(sized(sk, 2048), "PK", s("q"))))
            .send()
            .await
            .unwrap();
    }
    let out = client
        .query()
        .table_name("units")
        .key_condition_expression("PK = :q")
        .expression_attribute_values(":q", s("q"))
        .consistent_read(true)
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(out.count(), 3);
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(2.0));
    let out = client
        .scan()
        .table_name("units")
        .filter_expression("PK = :q")
        .expression_attribute_values(":q", s("q"))
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    // The Scan reads the other item too (before its filter).
    assert!(out.consumed_capacity().unwrap().capacity_units().unwrap() >= 1.0);

    // Batches: one entry per table.
    let out = client
        .batch_get_item()
        .request_items(
            "units",
            KeysAndAttributes::builder()
                .keys(key2("q", "q1"))
                .keys(key2("q", "q2"))
                .consistent_read(true)
                .build()
                .unwrap(),
        )
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    let c = out.consumed_capacity();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].table_name(), Some("units"));
    assert_eq!(c[0].capacity_units(), Some(2.0));
    let out = client
        .batch_write_item()
        .request_items(
            "units",
            vec![put(sized("w1", 100)), delete(key2("q", "q1"))],
        )
        .return_consumed_capacity(total.clone())
        .send()
        .await
        .unwrap();
    // The put is one unit; the delete counts the 2 KB item it deleted.
    assert_eq!(out.consumed_capacity()[0].capacity_units(), Some(3.0));

    // A value DynamoDB does not know.
    let e = client
        .get_item()
        .table_name("units")
        .set_key(Some(key2("p", "s")))
        .return_consumed_capacity(ReturnConsumedCapacity::from("SOME"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("ValidationException"));
    node.stop().await;
}
