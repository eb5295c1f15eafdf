//! PartiQL through `aws-sdk-dynamodb` against a node started by the test: ExecuteStatement's
//! writes and paged reads, DuplicateItemException as the SDK types it, BatchExecuteStatement's
//! per-statement errors, and ExecuteTransaction's cancellation reasons.

mod dynamo_support;
mod support;

use aws_sdk_dynamodb::types::{
    BatchStatementErrorCodeEnum, BatchStatementRequest, BillingMode, KeyType,
    ParameterizedStatement, ScalarAttributeType,
};
use dynamo_support::{attr, key, n, s};
use support::TestNode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partiql_statements_batches_and_transactions() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    client
        .create_table()
        .table_name("pqt")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .key_schema(key("sk", KeyType::Range))
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .attribute_definitions(attr("sk", ScalarAttributeType::N))
        .send()
        .await
        .unwrap();

    for i in 0..5 {
        client
            .execute_statement()
            .statement("INSERT INTO \"pqt\" VALUE {'pk': ?, 'sk': ?, 'v': 'x'}")
            .parameters(s("a"))
            .parameters(n(&i.to_string()))
            .send()
            .await
            .unwrap();
    }
    let e = client
        .execute_statement()
        .statement("INSERT INTO \"pqt\" VALUE {'pk': 'a', 'sk': 0}")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_duplicate_item_exception(), "{e:?}");

    // Paged reads: Limit 2 over five items, NextToken until it is gone.
    let (mut seen, mut token) = (Vec::new(), None);
    loop {
        let page = client
            .execute_statement()
            .statement("SELECT sk FROM \"pqt\" WHERE pk = ? AND sk >= 1")
            .parameters(s("a"))
            .limit(2)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        for item in page.items() {
            seen.push(item["sk"].as_n().unwrap().clone());
        }
        token = page.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["1", "2", "3", "4"]);

    let statement = |text: &str| {
        BatchStatementRequest::builder()
            .statement(text)
            .build()
            .unwrap()
    };
    let batch = client
        .batch_execute_statement()
        .statements(statement(
            "UPDATE \"pqt\" SET v = 'y' WHERE pk = 'a' AND sk = 1",
        ))
        .statements(statement(
            "UPDATE \"pqt\" SET v = 'y' WHERE pk = 'a' AND sk = 9",
        ))
        .send()
        .await
        .unwrap();
    let responses = batch.responses();
    assert!(responses[0].error().is_none());
    assert_eq!(
        responses[1].error().unwrap().code(),
        Some(&BatchStatementErrorCodeEnum::ConditionalCheckFailed)
    );

    let e = client
        .execute_transaction()
        .transact_statements(
            ParameterizedStatement::builder()
                .statement("DELETE FROM \"pqt\" WHERE pk = 'a' AND sk = 2")
                .build()
                .unwrap(),
        )
        .transact_statements(
            ParameterizedStatement::builder()
                .statement("UPDATE \"pqt\" SET v = 'z' WHERE pk = 'a' AND sk = 3 AND v = 'nope'")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let aws_sdk_dynamodb::operation::execute_transaction::ExecuteTransactionError::TransactionCanceledException(c) = e else {
        panic!("{e:?}");
    };
    let codes: Vec<_> = c.cancellation_reasons().iter().map(|r| r.code()).collect();
    assert_eq!(codes, [Some("None"), Some("ConditionalCheckFailed")]);
    node.stop().await;
}
