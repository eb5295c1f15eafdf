//! DynamoDB transactions through `aws-sdk-dynamodb` against a node started by the test:
//! TransactWriteItems all or nothing with the cancellation reasons the SDK parses,
//! DynamoDB's validation, ClientRequestToken idempotency, TransactGetItems snapshots, and many
//! concurrent transfers that keep the total and lose nothing.

mod dynamo_support;
mod support;

use dynamo_support::{n, s};

use std::collections::HashMap;
use std::sync::Arc;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, Delete, Get,
    KeySchemaElement, KeyType, Put, ReturnConsumedCapacity, ReturnValuesOnConditionCheckFailure,
    ScalarAttributeType, TransactGetItem, TransactWriteItem, Update,
};
use support::TestNode;

type Attrs = HashMap<String, AttributeValue>;

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
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("PK")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

fn key(pk: &str) -> Attrs {
    HashMap::from([("PK".to_string(), s(pk))])
}

fn item(pk: &str, attrs: &[(&str, AttributeValue)]) -> Attrs {
    let mut i = key(pk);
    for (k, v) in attrs {
        i.insert(k.to_string(), v.clone());
    }
    i
}

fn put(table: &str, item: Attrs, condition: Option<&str>) -> TransactWriteItem {
    TransactWriteItem::builder()
        .put(
            Put::builder()
                .table_name(table)
                .set_item(Some(item))
                .set_condition_expression(condition.map(String::from))
                .build()
                .unwrap(),
        )
        .build()
}

fn check(table: &str, pk: &str, condition: &str) -> TransactWriteItem {
    TransactWriteItem::builder()
        .condition_check(
            ConditionCheck::builder()
                .table_name(table)
                .set_key(Some(key(pk)))
                .condition_expression(condition)
                .build()
                .unwrap(),
        )
        .build()
}

fn delete(table: &str, pk: &str) -> TransactWriteItem {
    TransactWriteItem::builder()
        .delete(
            Delete::builder()
                .table_name(table)
                .set_key(Some(key(pk)))
                .build()
                .unwrap(),
        )
        .build()
}

/// `SET balance = balance + :d` (with `:d` possibly negative), under `condition`.
fn add(table: &str, pk: &str, delta: i64, condition: Option<&str>) -> TransactWriteItem {
    let mut u = Update::builder()
        .table_name(table)
        .set_key(Some(key(pk)))
        .update_expression("SET balance = balance + :d")
        .expression_attribute_values(":d", n(&delta.to_string()))
        .set_condition_expression(condition.map(String::from));
    if condition.is_some_and(|c| c.contains(":min")) {
        u = u.expression_attribute_values(":min", n(&(-delta).to_string()));
    }
    TransactWriteItem::builder()
        .update(u.build().unwrap())
        .build()
}

async fn get(client: &Client, table: &str, pk: &str) -> Option<Attrs> {
    client
        .get_item()
        .table_name(table)
        .set_key(Some(key(pk)))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item()
        .cloned()
}

fn codes(e: &aws_sdk_dynamodb::types::error::TransactionCanceledException) -> Vec<String> {
    e.cancellation_reasons()
        .iter()
        .map(|r| r.code().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_apply_whole_or_cancel_whole() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "bank").await;
    create(&client, "ledger").await;
    client
        .put_item()
        .table_name("bank")
        .set_item(Some(item("alice", &[("balance", n("100"))])))
        .send()
        .await
        .unwrap();
    client
        .put_item()
        .table_name("bank")
        .set_item(Some(item("old", &[("x", s("gone soon"))])))
        .send()
        .await
        .unwrap();

    // Put, Update, Delete and ConditionCheck over two tables: all applied.
    let out = client
        .transact_write_items()
        .transact_items(add("bank", "alice", -30, Some("balance >= :min")))
        .transact_items(put(
            "ledger",
            item("tx1", &[("amount", n("30"))]),
            Some("attribute_not_exists(PK)"),
        ))
        .transact_items(delete("bank", "old"))
        .transact_items(check("bank", "nobody", "attribute_not_exists(PK)"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let consumed = out.consumed_capacity();
    assert_eq!(consumed.len(), 2, "one entry per table: {consumed:?}");
    let bank = consumed
        .iter()
        .find(|c| c.table_name() == Some("bank"))
        .unwrap();
    // Three transactional writes of small items: 2 units each.
    assert_eq!(bank.capacity_units(), Some(6.0));
    assert_eq!(bank.write_capacity_units(), Some(6.0));
    assert_eq!(
        get(&client, "bank", "alice").await.unwrap()["balance"],
        n("70")
    );
    assert!(get(&client, "ledger", "tx1").await.is_some());
    assert!(get(&client, "bank", "old").await.is_none());
    assert!(get(&client, "bank", "nobody").await.is_none());

    // One false condition cancels everything; every action gets its reason, in order.
    let err = client
        .transact_write_items()
        .transact_items(put("ledger", item("tx2", &[]), None))
        .transact_items(add("bank", "alice", -1000, Some("balance >= :min")))
        .transact_items(
            TransactWriteItem::builder()
                .condition_check(
                    ConditionCheck::builder()
                        .table_name("ledger")
                        .set_key(Some(key("tx1")))
                        .condition_expression("attribute_not_exists(PK)")
                        .return_values_on_condition_check_failure(
                            ReturnValuesOnConditionCheckFailure::AllOld,
                        )
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let TransactWriteItemsError::TransactionCanceledException(cancel) = &err else {
        panic!("expected TransactionCanceledException, got {err:?}");
    };
    assert_eq!(
        codes(cancel),
        ["None", "ConditionalCheckFailed", "ConditionalCheckFailed"]
    );
    assert_eq!(
        cancel.message(),
        Some(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, ConditionalCheckFailed]"
        )
    );
    let reasons = cancel.cancellation_reasons();
    assert_eq!(reasons[0].message(), None);
    assert_eq!(reasons[1].message(), Some("The conditional request failed"));
    assert!(reasons[1].item().is_none(), "ALL_OLD not asked for");
    assert_eq!(reasons[2].item().unwrap()["amount"], n("30"));
    assert!(
        get(&client, "ledger", "tx2").await.is_none(),
        "nothing written"
    );
    assert_eq!(
        get(&client, "bank", "alice").await.unwrap()["balance"],
        n("70")
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_are_validated_as_dynamodb_validates_them() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "strict").await;
    let error = |e: &TransactWriteItemsError| {
        (
            e.code().unwrap_or("").to_string(),
            e.message().unwrap_or("").to_string(),
        )
    };

    // The same item twice.
    let e = client
        .transact_write_items()
        .transact_items(put("strict", item("a", &[]), None))
        .transact_items(check("strict", "a", "attribute_exists(PK)"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        error(&e),
        (
            "ValidationException".into(),
            "Transaction request cannot include multiple operations on one item".into()
        )
    );

    // 101 actions.
    let mut many = client.transact_write_items();
    for i in 0..101 {
        many = many.transact_items(put("strict", item(&format!("k{i}"), &[]), None));
    }
    let e = many.send().await.unwrap_err().into_service_error();
    let (code, message) = error(&e);
    assert_eq!(code, "ValidationException");
    assert!(
        message.contains("'transactItems'")
            && message.contains("Member must have length less than or equal to 100"),
        "{message}"
    );

    // 100 actions are fine.
    let mut hundred = client.transact_write_items();
    for i in 0..100 {
        hundred = hundred.transact_items(put("strict", item(&format!("k{i}"), &[]), None));
    }
    hundred.send().await.unwrap();

    // More than 4 MB of items.
    let blob = s(&"x".repeat(390 * 1024));
    let mut big = client.transact_write_items();
    for i in 0..11 {
        big = big.transact_items(put(
            "strict",
            item(&format!("big{i}"), &[("b", blob.clone())]),
            None,
        ));
    }
    let e = big.send().await.unwrap_err().into_service_error();
    let (code, message) = error(&e);
    assert_eq!(code, "ValidationException");
    assert!(message.contains("size cannot exceed 4 MB"), "{message}");
    assert!(get(&client, "strict", "big0").await.is_none());

    // A key of the wrong type: a ValidationError reason for the first bad action only.
    let e = client
        .transact_write_items()
        .transact_items(put("strict", HashMap::from([("PK".into(), n("7"))]), None))
        .transact_items(put("strict", HashMap::from([("PK".into(), n("8"))]), None))
        .transact_items(put("strict", item("c", &[]), Some("attribute_exists(PK)")))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let TransactWriteItemsError::TransactionCanceledException(cancel) = &e else {
        panic!("expected a cancellation, got {e:?}");
    };
    assert_eq!(codes(cancel), ["ValidationError", "None", "None"]);
    assert!(
        cancel.cancellation_reasons()[0]
            .message()
            .unwrap()
            .contains("Type mismatch for key PK")
    );

    // Expression problems refuse the whole request.
    let e = client
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name("strict")
                        .set_item(Some(item("d", &[])))
                        .condition_expression("attribute_exists(PK)")
                        .expression_attribute_values(":unused", n("1"))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let (code, message) = error(&e);
    assert_eq!(code, "ValidationException");
    assert!(
        message.contains("unused") && message.contains(":unused"),
        "{message}"
    );

    // A table that does not exist.
    let e = client
        .transact_write_items()
        .transact_items(put("missing", item("a", &[]), None))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(error(&e).0, "ResourceNotFoundException");

    // A token of 37 characters.
    let e = client
        .transact_write_items()
        .client_request_token("x".repeat(37))
        .transact_items(put("strict", item("e", &[]), None))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let (code, message) = error(&e);
    assert_eq!(code, "ValidationException");
    assert!(message.contains("clientRequestToken"), "{message}");
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_request_token_makes_a_transaction_idempotent() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "tokens").await;
    client
        .put_item()
        .table_name("tokens")
        .set_item(Some(item("counter", &[("balance", n("0"))])))
        .send()
        .await
        .unwrap();
    let increment = |token: Option<&str>| {
        client
            .transact_write_items()
            .set_client_request_token(token.map(String::from))
            .transact_items(add("tokens", "counter", 1, None))
    };
    increment(None).send().await.unwrap();
    increment(None).send().await.unwrap();
    assert_eq!(
        get(&client, "tokens", "counter").await.unwrap()["balance"],
        n("2")
    );
    increment(Some("token-1")).send().await.unwrap();
    increment(Some("token-1")).send().await.unwrap();
    assert_eq!(
        get(&client, "tokens", "counter").await.unwrap()["balance"],
        n("3"),
        "the retry with the same token did not apply again"
    );
    let e = client
        .transact_write_items()
        .client_request_token("token-1")
        .transact_items(add("tokens", "counter", 5, None))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(
        matches!(
            e,
            TransactWriteItemsError::IdempotentParameterMismatchException(_)
        ),
        "{e:?}"
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transact_get_items_answers_in_order() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "reads").await;
    for (pk, v) in [("a", "1"), ("b", "2")] {
        client
            .put_item()
            .table_name("reads")
            .set_item(Some(item(pk, &[("v", n(v)), ("w", s("x"))])))
            .send()
            .await
            .unwrap();
    }
    let get_of = |pk: &str, projection: Option<&str>| {
        TransactGetItem::builder()
            .get(
                Get::builder()
                    .table_name("reads")
                    .set_key(Some(key(pk)))
                    .set_projection_expression(projection.map(String::from))
                    .build()
                    .unwrap(),
            )
            .build()
    };
    let out = client
        .transact_get_items()
        .transact_items(get_of("b", Some("v")))
        .transact_items(get_of("missing", None))
        .transact_items(get_of("a", None))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let r = out.responses();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].item().unwrap(), &HashMap::from([("v".into(), n("2"))]));
    assert!(r[1].item().is_none());
    assert_eq!(r[2].item().unwrap()["w"], s("x"));
    // Three transactional reads: 2 units each (a missing item costs what an empty one does).
    assert_eq!(out.consumed_capacity()[0].capacity_units(), Some(6.0));

    let e = client
        .transact_get_items()
        .transact_items(get_of("a", None))
        .transact_items(get_of("a", Some("v")))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("ValidationException"));
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_transfers_keep_the_total_and_lose_nothing() {
    const ACCOUNTS: usize = 6;
    const WORKERS: usize = 8;
    const TRANSFERS: usize = 30;
    const INITIAL: i64 = 100;
    let mut node = TestNode::start().await;
    let client = Arc::new(dynamo_support::client(node.dynamo_address()));
    create(&client, "accounts").await;
    for a in 0..ACCOUNTS {
        client
            .put_item()
            .table_name("accounts")
            .set_item(Some(item(
                &format!("acct{a}"),
                &[("balance", n(&INITIAL.to_string()))],
            )))
            .send()
            .await
            .unwrap();
    }

    // Each worker moves amounts between accounts; a transfer that would overdraw is cancelled
    // by its condition, one that meets another transaction is retried.
    let mut tasks = Vec::new();
    for w in 0..WORKERS {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut applied: Vec<(usize, usize, i64)> = Vec::new();
            let mut conflicts = 0;
            for i in 0..TRANSFERS {
                let from = (w * 3 + i * 5) % ACCOUNTS;
                let to = (w + i * 7 + 1) % ACCOUNTS;
                if from == to {
                    continue;
                }
                let amount = ((w + i) % 40 + 1) as i64;
                loop {
                    let result = client
                        .transact_write_items()
                        .transact_items(add(
                            "accounts",
                            &format!("acct{from}"),
                            -amount,
                            Some("balance >= :min"),
                        ))
                        .transact_items(add("accounts", &format!("acct{to}"), amount, None))
                        .send()
                        .await;
                    match result {
                        Ok(_) => {
                            applied.push((from, to, amount));
                            break;
                        }
                        Err(e) => match e.into_service_error() {
                            TransactWriteItemsError::TransactionCanceledException(c) => {
                                let codes = codes(&c);
                                if codes.iter().any(|c| c == "TransactionConflict") {
                                    conflicts += 1;
                                    continue;
                                }
                                assert_eq!(codes, ["ConditionalCheckFailed", "None"]);
                                break;
                            }
                            other => panic!("transfer failed: {other:?}"),
                        },
                    }
                }
            }
            (applied, conflicts)
        }));
    }
    // Meanwhile, snapshots of every account always add up.
    let reader = {
        let client = client.clone();
        tokio::spawn(async move {
            let mut snapshots = 0;
            for _ in 0..20 {
                let mut req = client.transact_get_items();
                for a in 0..ACCOUNTS {
                    req = req.transact_items(
                        TransactGetItem::builder()
                            .get(
                                Get::builder()
                                    .table_name("accounts")
                                    .set_key(Some(key(&format!("acct{a}"))))
                                    .build()
                                    .unwrap(),
                            )
                            .build(),
                    );
                }
                match req.send().await {
                    Ok(out) => {
                        let total: i64 = out
                            .responses()
                            .iter()
                            .map(|r| match &r.item().unwrap()["balance"] {
                                AttributeValue::N(v) => v.parse::<i64>().unwrap(),
                                other => panic!("{other:?}"),
                            })
                            .sum();
                        assert_eq!(total, INITIAL * ACCOUNTS as i64, "a torn snapshot");
                        snapshots += 1;
                    }
                    Err(e) => {
                        let e = e.into_service_error();
                        assert_eq!(e.code(), Some("TransactionCanceledException"), "{e:?}");
                    }
                }
            }
            snapshots
        })
    };
    let mut expected = [INITIAL; ACCOUNTS];
    let mut transfers = 0;
    for t in tasks {
        let (applied, _conflicts) = t.await.unwrap();
        for (from, to, amount) in applied {
            expected[from] -= amount;
            expected[to] += amount;
            transfers += 1;
        }
    }
    assert!(reader.await.unwrap() > 0, "some snapshot was taken");
    assert!(
        transfers > WORKERS * TRANSFERS / 2,
        "{transfers} transfers applied"
    );
    for (a, want) in expected.iter().enumerate() {
        let got = get(&client, "accounts", &format!("acct{a}")).await.unwrap();
        assert_eq!(got["balance"], n(&want.to_string()), "account {a}");
        assert!(*want >= 0, "no account overdrawn");
    }
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_meeting_a_busy_item_is_cancelled_with_transaction_conflict() {
    use bytes::Bytes;
    use khata_replica::replica::cas_stripe;
    use khata_types::clustering::full_range;
    use khata_types::token::DecoratedKey;

    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "busy").await;
    let replica = node.node.as_ref().unwrap().replica().clone();
    let table = replica.schema().keyspace("alternator_busy").unwrap().tables["busy"]
        .def
        .id;
    // An S hash key is stored as its UTF-8 bytes: the partition the item lives in.
    let partition = |pk: &str| DecoratedKey::new(Bytes::copy_from_slice(pk.as_bytes()));
    let held = "held";
    let free = (0..)
        .map(|i| format!("free{i}"))
        .find(|k| cas_stripe(table, &partition(k)) != cas_stripe(table, &partition(held)))
        .unwrap();
    for pk in [held, free.as_str()] {
        client
            .put_item()
            .table_name("busy")
            .set_item(Some(item(pk, &[("balance", n("10"))])))
            .send()
            .await
            .unwrap();
    }

    // Another writer holds the item's lock (a conditional write in the middle of its work).
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let holder = {
        let replica = replica.clone();
        let key = partition(held);
        std::thread::spawn(move || {
            replica
                .cas(table, &key, &[full_range()], 0, move |_| {
                    entered_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    None
                })
                .unwrap();
        })
    };
    tokio::task::spawn_blocking(move || entered_rx.recv().unwrap())
        .await
        .unwrap();

    let transfer = || {
        client
            .transact_write_items()
            .transact_items(add("busy", &free, -5, None))
            .transact_items(add("busy", held, 5, None))
    };
    let e = transfer().send().await.unwrap_err().into_service_error();
    let TransactWriteItemsError::TransactionCanceledException(cancel) = &e else {
        panic!("expected a cancellation, got {e:?}");
    };
    assert_eq!(codes(cancel), ["None", "TransactionConflict"]);
    assert_eq!(
        cancel.message(),
        Some(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]"
        )
    );
    let read = client
        .transact_get_items()
        .transact_items(
            TransactGetItem::builder()
                .get(
                    Get::builder()
                        .table_name("busy")
                        .set_key(Some(key(held)))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(read.code(), Some("TransactionCanceledException"));
    assert_eq!(
        get(&client, "busy", &free).await.unwrap()["balance"],
        n("10"),
        "nothing written"
    );

    // Once the other writer is done, the same transaction goes through.
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    transfer().send().await.unwrap();
    assert_eq!(
        get(&client, "busy", held).await.unwrap()["balance"],
        n("15")
    );
    assert_eq!(
        get(&client, "busy", &free).await.unwrap()["balance"],
        n("5")
    );
    node.stop().await;
}
