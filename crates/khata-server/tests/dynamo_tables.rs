//! The DynamoDB control plane through `aws-sdk-dynamodb` against a node started by the test:
//! create, describe, list (paged), update, delete tables; tags; TTL settings; DynamoDB's
//! errors for what it refuses; metadata that survives a restart.

mod dynamo_support;
mod support;

use dynamo_support::{attr, key};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, KeyType, LocalSecondaryIndex, Projection, ProjectionType,
    ProvisionedThroughput, ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus,
    Tag, TimeToLiveSpecification, TimeToLiveStatus,
};
use khata_server::node::Node;
use support::TestNode;

/// A pay-per-request table with hash key `pk` (S) and range key `sk` (N).
async fn create(client: &Client, name: &str) {
    client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .key_schema(key("sk", KeyType::Range))
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .attribute_definitions(attr("sk", ScalarAttributeType::N))
        .send()
        .await
        .unwrap();
}

fn code<E: ProvideErrorMetadata>(e: &E) -> (String, String) {
    (
        e.code().unwrap_or("").to_string(),
        e.message().unwrap_or("").to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_are_created_described_listed_updated_and_deleted() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());

    let created = client
        .create_table()
        .table_name("Orders")
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(5)
                .write_capacity_units(7)
                .build()
                .unwrap(),
        )
        .key_schema(key("PK", KeyType::Hash))
        .key_schema(key("SK", KeyType::Range))
        .attribute_definitions(attr("PK", ScalarAttributeType::S))
        .attribute_definitions(attr("SK", ScalarAttributeType::S))
        .attribute_definitions(attr("GSI1PK", ScalarAttributeType::S))
        .attribute_definitions(attr("LSI1SK", ScalarAttributeType::N))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("GSI1")
                .key_schema(key("GSI1PK", KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::KeysOnly)
                        .build(),
                )
                .provisioned_throughput(
                    ProvisionedThroughput::builder()
                        .read_capacity_units(1)
                        .write_capacity_units(1)
                        .build()
                        .unwrap(),
                )
                .build()
                .unwrap(),
        )
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("LSI1")
                .key_schema(key("PK", KeyType::Hash))
                .key_schema(key("LSI1SK", KeyType::Range))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::Include)
                        .non_key_attributes("total")
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()
                .unwrap(),
        )
        .tags(Tag::builder().key("team").value("ledger").build().unwrap())
        .send()
        .await
        .unwrap();
    let d = created.table_description().unwrap();
    assert_eq!(d.table_status(), Some(&TableStatus::Active));
    assert_eq!(
        d.table_arn(),
        Some("arn:aws:dynamodb:us-east-1:000000000000:table/Orders")
    );

    let d = client
        .describe_table()
        .table_name("Orders")
        .send()
        .await
        .unwrap();
    let t = d.table().unwrap();
    assert_eq!(t.table_name(), Some("Orders"));
    assert_eq!(t.table_status(), Some(&TableStatus::Active));
    assert_eq!(t.key_schema().len(), 2);
    assert_eq!(t.key_schema()[0].attribute_name(), "PK");
    assert_eq!(t.attribute_definitions().len(), 4);
    assert_eq!(t.item_count(), Some(0));
    assert!(t.creation_date_time().is_some());
    assert_eq!(
        t.billing_mode_summary().unwrap().billing_mode(),
        Some(&BillingMode::Provisioned)
    );
    let pt = t.provisioned_throughput().unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (Some(5), Some(7))
    );
    let gsi = &t.global_secondary_indexes()[0];
    assert_eq!(gsi.index_name(), Some("GSI1"));
    assert_eq!(gsi.index_status().map(|s| s.as_str()), Some("ACTIVE"));
    let lsi = &t.local_secondary_indexes()[0];
    assert_eq!(
        lsi.projection().unwrap().non_key_attributes(),
        &["total".to_string()]
    );
    assert_eq!(
        t.stream_specification().unwrap().stream_view_type(),
        Some(&StreamViewType::NewAndOldImages)
    );
    assert!(
        t.latest_stream_arn()
            .unwrap()
            .starts_with("arn:aws:dynamodb:us-east-1:000000000000:table/Orders/stream/")
    );

    // Paged listing.
    for name in ["t-a", "t-b", "t-c", "t-d"] {
        create(&client, name).await;
    }
    let mut seen = Vec::new();
    let mut start: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = client
            .list_tables()
            .limit(2)
            .set_exclusive_start_table_name(start.clone())
            .send()
            .await
            .unwrap();
        pages += 1;
        assert!(page.table_names().len() <= 2);
        seen.extend(page.table_names().iter().cloned());
        match page.last_evaluated_table_name() {
            Some(last) => start = Some(last.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, vec!["Orders", "t-a", "t-b", "t-c", "t-d"]);
    assert_eq!(pages, 3);

    // UpdateTable: billing mode and streams.
    let updated = client
        .update_table()
        .table_name("t-a")
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(3)
                .write_capacity_units(4)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let pt = updated
        .table_description()
        .unwrap()
        .provisioned_throughput()
        .unwrap();
    assert_eq!(pt.read_capacity_units(), Some(3));

    // DeleteTable answers DELETING, then the table is gone.
    let deleted = client
        .delete_table()
        .table_name("t-b")
        .send()
        .await
        .unwrap();
    assert_eq!(
        deleted.table_description().unwrap().table_status(),
        Some(&TableStatus::Deleting)
    );
    let e = client
        .describe_table()
        .table_name("t-b")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        (
            "ResourceNotFoundException".into(),
            "Requested resource not found: Table: t-b not found".into()
        )
    );

    // The metadata survives a restart.
    node.stop().await;
    let restarted = Node::start(&support::test_config(node.dir.path()))
        .await
        .unwrap();
    let client = dynamo_support::client(restarted.dynamo_address());
    let t = client
        .describe_table()
        .table_name("Orders")
        .send()
        .await
        .unwrap();
    assert_eq!(t.table().unwrap().global_secondary_indexes().len(), 1);
    let names = client.list_tables().send().await.unwrap();
    assert_eq!(names.table_names(), &["Orders", "t-a", "t-c", "t-d"]);
    restarted.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_have_dynamodb_errors() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "dup").await;

    let e = client
        .create_table()
        .table_name("dup")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_in_use_exception());
    assert_eq!(e.message(), Some("Table already exists: dup"));

    // A range key first.
    let e = client
        .create_table()
        .table_name("bad")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Range))
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        code(&e),
        (
            "ValidationException".into(),
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type".into()
        )
    );

    // A key attribute not defined.
    let e = client
        .create_table()
        .table_name("bad")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .attribute_definitions(attr("other", ScalarAttributeType::S))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(code(&e).0, "ValidationException");
    assert!(
        code(&e)
            .1
            .contains("Some index key attributes are not defined")
    );

    // A bad name.
    let e = client
        .create_table()
        .table_name("a b")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        code(&e).1,
        "1 validation error detected: Value 'a b' at 'tableName' failed to satisfy \
         constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
    );

    let e = client
        .delete_table()
        .table_name("missing")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(e.is_resource_not_found_exception());

    let e = client
        .list_tables()
        .limit(101)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(code(&e).0, "ValidationException");

    // Operations not built yet: a clear ValidationException.
    let e = client
        .create_backup()
        .table_name("tables")
        .backup_name("backup")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        code(&e),
        (
            "ValidationException".into(),
            "operation CreateBackup is not supported by khata yet".into()
        )
    );
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_and_time_to_live_are_kept() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "tagged").await;
    let arn = "arn:aws:dynamodb:us-east-1:000000000000:table/tagged";

    client
        .tag_resource()
        .resource_arn(arn)
        .tags(Tag::builder().key("a").value("1").build().unwrap())
        .tags(Tag::builder().key("b").value("2").build().unwrap())
        .send()
        .await
        .unwrap();
    client
        .tag_resource()
        .resource_arn(arn)
        .tags(Tag::builder().key("a").value("3").build().unwrap())
        .send()
        .await
        .unwrap();
    client
        .untag_resource()
        .resource_arn(arn)
        .tag_keys("b")
        .send()
        .await
        .unwrap();
    let tags = client
        .list_tags_of_resource()
        .resource_arn(arn)
        .send()
        .await
        .unwrap();
    let tags: Vec<(&str, &str)> = tags.tags().iter().map(|t| (t.key(), t.value())).collect();
    assert_eq!(tags, vec![("a", "3")]);

    let e = client
        .list_tags_of_resource()
        .resource_arn("arn:aws:dynamodb:us-east-1:000000000000:table/nope")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(code(&e).0, "ResourceNotFoundException");

    let ttl = client
        .describe_time_to_live()
        .table_name("tagged")
        .send()
        .await
        .unwrap();
    assert_eq!(
        ttl.time_to_live_description()
            .unwrap()
            .time_to_live_status(),
        Some(&TimeToLiveStatus::Disabled)
    );
    let spec = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("expires")
        .build()
        .unwrap();
    client
        .update_time_to_live()
        .table_name("tagged")
        .time_to_live_specification(spec.clone())
        .send()
        .await
        .unwrap();
    let ttl = client
        .describe_time_to_live()
        .table_name("tagged")
        .send()
        .await
        .unwrap();
    let d = ttl.time_to_live_description().unwrap();
    assert_eq!(d.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
    assert_eq!(d.attribute_name(), Some("expires"));
    let e = client
        .update_time_to_live()
        .table_name("tagged")
        .time_to_live_specification(spec)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(
        code(&e),
        (
            "ValidationException".into(),
            "TimeToLive is already enabled".into()
        )
    );

    let limits = client.describe_limits().send().await.unwrap();
    assert_eq!(limits.table_max_read_capacity_units(), Some(40000));
    let endpoints = client.describe_endpoints().send().await.unwrap();
    assert_eq!(endpoints.endpoints().len(), 1);
    node.stop().await;
}
