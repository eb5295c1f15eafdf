//! DynamoDB Streams through `aws-sdk-dynamodb` and `aws-sdk-dynamodbstreams` against a node
//! started by the test: INSERT/MODIFY/REMOVE records with each view type's images, iterator
//! types, paging with Limit, per-item order under concurrent writers with a reader polling
//! all along (no record lost or seen twice), errors (unknown streams and shards, expired
//! iterators, trimmed positions), TTL expiry with the service's identity, and records kept
//! across a restart.

mod dynamo_support;
mod support;

use dynamo_support::{n, put_request, s};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::time::Duration;

use aws_credential_types::Credentials;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};
use aws_sdk_dynamodbstreams::Client as StreamsClient;
use aws_sdk_dynamodbstreams::config::{BehaviorVersion, Region};
use aws_sdk_dynamodbstreams::error::ProvideErrorMetadata;
use aws_sdk_dynamodbstreams::types::{
    AttributeValue as StreamValue, OperationType, Record, ShardIteratorType,
};
use support::TestNode;

fn streams_client(address: SocketAddr) -> StreamsClient {
    let http = aws_smithy_http_client::Builder::new().build_http();
    let config = aws_sdk_dynamodbstreams::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(format!("http://{address}"))
        .credentials_provider(Credentials::new(
            dynamo_support::DUMMY_KEY,
            dynamo_support::DUMMY_SECRET,
            None,
            None,
            "khata-test",
        ))
        .http_client(http)
        .build();
    StreamsClient::from_conf(config)
}

/// A table `pk` (S) with a stream of `view`.
async fn create(client: &Client, name: &str, view: Option<StreamViewType>) {
    let mut req = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        );
    if let Some(view) = view {
        req = req.stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(view)
                .build()
                .unwrap(),
        );
    }
    req.send().await.unwrap();
}

async fn latest_arn(client: &Client, table: &str) -> String {
    client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap()
        .table()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_string()
}

async fn shard_ids(streams: &StreamsClient, arn: &str) -> Vec<String> {
    streams
        .describe_stream()
        .stream_arn(arn)
        .send()
        .await
        .unwrap()
        .stream_description()
        .unwrap()
        .shards()
        .iter()
        .map(|s| s.shard_id().unwrap().to_string())
        .collect()
}

async fn iterator(
    streams: &StreamsClient,
    arn: &str,
    shard: &str,
    kind: ShardIteratorType,
) -> String {
    streams
        .get_shard_iterator()
        .stream_arn(arn)
        .shard_id(shard)
        .shard_iterator_type(kind)
        .send()
        .await
        .unwrap()
        .shard_iterator()
        .unwrap()
        .to_string()
}

/// Every record of the stream now, from the trim horizon, `limit` per page.
async fn read_all(streams: &StreamsClient, arn: &str, limit: Option<i32>) -> Vec<Record> {
    let mut out = Vec::new();
    for shard in shard_ids(streams, arn).await {
        let mut it = Some(iterator(streams, arn, &shard, ShardIteratorType::TrimHorizon).await);
        while let Some(current) = it {
            let page = streams
                .get_records()
                .shard_iterator(current)
                .set_limit(limit)
                .send()
                .await
                .unwrap();
            if page.records().is_empty() {
                break;
            }
            out.extend(page.records().iter().cloned());
            it = page.next_shard_iterator().map(str::to_string);
        }
    }
    out
}

fn key_of(r: &Record) -> String {
    match r.dynamodb().unwrap().keys().unwrap().get("pk") {
        Some(StreamValue::S(v)) => v.clone(),
        other => panic!("key {other:?}"),
    }
}

fn number(image: Option<&HashMap<String, StreamValue>>, name: &str) -> Option<i64> {
    match image?.get(name)? {
        StreamValue::N(v) => v.parse().ok(),
        _ => None,
    }
}

#[tokio::test]
async fn records_show_each_change_with_the_view_types_images() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    for (table, view) in [
        ("keys", StreamViewType::KeysOnly),
        ("new", StreamViewType::NewImage),
        ("old", StreamViewType::OldImage),
        ("both", StreamViewType::NewAndOldImages),
    ] {
        create(&client, table, Some(view.clone())).await;
        let put = |v: &str| {
            client
                .put_item()
                .table_name(table)
                .item("pk", s("a"))
                .item("v", n(v))
                .send()
        };
        put("1").await.unwrap();
        put("2").await.unwrap();
        // Unchanged: no record.
        put("2").await.unwrap();
        client
            .update_item()
            .table_name(table)
            .key("pk", s("a"))
            .update_expression("SET v = v + :one")
            .expression_attribute_values(":one", n("1"))
            .send()
            .await
            .unwrap();
        client
            .delete_item()
            .table_name(table)
            .key("pk", s("a"))
            .send()
            .await
            .unwrap();
        // Absent: no record.
        client
            .delete_item()
            .table_name(table)
            .key("pk", s("a"))
            .send()
            .await
            .unwrap();
        let records = read_all(&streams, &latest_arn(&client, table).await, None).await;
        let names: Vec<&OperationType> = records.iter().map(|r| r.event_name().unwrap()).collect();
        assert_eq!(
            names,
            [
                &OperationType::Insert,
                &OperationType::Modify,
                &OperationType::Modify,
                &OperationType::Remove
            ],
            "{table}"
        );
        let (with_new, with_old) = match view {
            StreamViewType::KeysOnly => (false, false),
            StreamViewType::NewImage => (true, false),
            StreamViewType::OldImage => (false, true),
            _ => (true, true),
        };
        let news: Vec<Option<i64>> = records
            .iter()
            .map(|r| number(r.dynamodb().unwrap().new_image(), "v"))
            .collect();
        let olds: Vec<Option<i64>> = records
            .iter()
            .map(|r| number(r.dynamodb().unwrap().old_image(), "v"))
            .collect();
        if with_new {
            assert_eq!(news, [Some(1), Some(2), Some(3), None], "{table}");
        } else {
            assert!(news.iter().all(Option::is_none), "{table}");
        }
        if with_old {
            assert_eq!(olds, [None, Some(1), Some(2), Some(3)], "{table}");
        } else {
            assert!(olds.iter().all(Option::is_none), "{table}");
        }
        for r in &records {
            assert_eq!(key_of(r), "a");
            assert_eq!(r.event_source(), Some("aws:dynamodb"));
            assert_eq!(r.aws_region(), Some("us-east-1"));
            let d = r.dynamodb().unwrap();
            assert_eq!(d.stream_view_type(), Some(&view_of(&view)));
            assert!(d.size_bytes().unwrap() > 0);
            assert!(d.approximate_creation_date_time().is_some());
            assert!(r.user_identity().is_none());
        }
    }
    node.stop().await;
}

fn view_of(v: &StreamViewType) -> aws_sdk_dynamodbstreams::types::StreamViewType {
    aws_sdk_dynamodbstreams::types::StreamViewType::from(v.as_str())
}

#[tokio::test]
async fn iterator_types_and_paging() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    create(&client, "paged", Some(StreamViewType::KeysOnly)).await;
    let arn = latest_arn(&client, "paged").await;
    for i in 0..25 {
        client
            .put_item()
            .table_name("paged")
            .item("pk", s(&format!("k{i:02}")))
            .send()
            .await
            .unwrap();
    }
    let all = read_all(&streams, &arn, Some(4)).await;
    let keys: Vec<String> = all.iter().map(key_of).collect();
    let expected: Vec<String> = (0..25).map(|i| format!("k{i:02}")).collect();
    assert_eq!(keys, expected);
    let seqs: Vec<String> = all
        .iter()
        .map(|r| r.dynamodb().unwrap().sequence_number().unwrap().to_string())
        .collect();
    assert!(
        seqs.windows(2)
            .all(|w| w[0] < w[1] && w[0].len() == w[1].len())
    );
    assert!(seqs[0].len() >= 21);

    let shard = &shard_ids(&streams, &arn).await[0];
    let at = |kind: ShardIteratorType, seq: &str| {
        streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard)
            .shard_iterator_type(kind)
            .sequence_number(seq)
            .send()
    };
    let it = at(ShardIteratorType::AtSequenceNumber, &seqs[10])
        .await
        .unwrap();
    let page = streams
        .get_records()
        .shard_iterator(it.shard_iterator().unwrap())
        .limit(2)
        .send()
        .await
        .unwrap();
    assert_eq!(
        page.records().iter().map(key_of).collect::<Vec<_>>(),
        ["k10", "k11"]
    );
    let it = at(ShardIteratorType::AfterSequenceNumber, &seqs[10])
        .await
        .unwrap();
    let page = streams
        .get_records()
        .shard_iterator(it.shard_iterator().unwrap())
        .limit(1)
        .send()
        .await
        .unwrap();
    assert_eq!(key_of(&page.records()[0]), "k11");

    // LATEST: nothing written before it; what comes after, in the next call.
    let latest = iterator(&streams, &arn, shard, ShardIteratorType::Latest).await;
    let page = streams
        .get_records()
        .shard_iterator(latest)
        .send()
        .await
        .unwrap();
    assert!(page.records().is_empty());
    let next = page.next_shard_iterator().unwrap().to_string();
    client
        .put_item()
        .table_name("paged")
        .item("pk", s("late"))
        .send()
        .await
        .unwrap();
    let page = streams
        .get_records()
        .shard_iterator(next)
        .send()
        .await
        .unwrap();
    assert_eq!(
        page.records().iter().map(key_of).collect::<Vec<_>>(),
        ["late"]
    );

    // ListStreams pages.
    create(&client, "paged2", Some(StreamViewType::NewImage)).await;
    let first = streams.list_streams().limit(1).send().await.unwrap();
    assert_eq!(first.streams().len(), 1);
    let rest = streams
        .list_streams()
        .exclusive_start_stream_arn(first.last_evaluated_stream_arn().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.streams().len(), 1);
    assert!(rest.last_evaluated_stream_arn().is_none());
    node.stop().await;
}

#[tokio::test]
async fn concurrent_writers_a_polling_reader_sees_every_record_once_in_item_order() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    create(&client, "counters", Some(StreamViewType::NewAndOldImages)).await;
    let arn = latest_arn(&client, "counters").await;
    let shard = shard_ids(&streams, &arn).await.remove(0);
    let start = iterator(&streams, &arn, &shard, ShardIteratorType::TrimHorizon).await;

    const WRITERS: usize = 8;
    const WRITES: usize = 40;
    const ITEMS: usize = 3;
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..WRITES {
                client
                    .update_item()
                    .table_name("counters")
                    .key("pk", s(&format!("c{}", (w + i) % ITEMS)))
                    .update_expression("ADD v :one")
                    .expression_attribute_values(":one", n("1"))
                    .send()
                    .await
                    .unwrap();
            }
        }));
    }
    // Poll while the writers run, then until the end is reached.
    let mut seen: Vec<Record> = Vec::new();
    let mut it = start;
    let total = WRITERS * WRITES;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while seen.len() < total && tokio::time::Instant::now() < deadline {
        let page = streams
            .get_records()
            .shard_iterator(&it)
            .limit(7)
            .send()
            .await
            .unwrap();
        seen.extend(page.records().iter().cloned());
        it = page.next_shard_iterator().unwrap().to_string();
    }
    for t in tasks {
        t.await.unwrap();
    }
    // No update was lost: the counters add up to the writes.
    let mut sum = 0;
    for i in 0..ITEMS {
        let got = client
            .get_item()
            .table_name("counters")
            .key("pk", s(&format!("c{i}")))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        match got.item().unwrap().get("v") {
            Some(AttributeValue::N(v)) => sum += v.parse::<usize>().unwrap(),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(sum, WRITERS * WRITES);
    let page = streams
        .get_records()
        .shard_iterator(&it)
        .send()
        .await
        .unwrap();
    assert!(page.records().is_empty(), "no record beyond the writes");
    assert_eq!(seen.len(), total);
    let unique: HashSet<&str> = seen
        .iter()
        .map(|r| r.dynamodb().unwrap().sequence_number().unwrap())
        .collect();
    assert_eq!(unique.len(), total, "no record twice");
    // Per item: old -> new goes 0->1, 1->2, ... in sequence order.
    // Per item, (old value, new value) of each record.
    type Changes = Vec<(Option<i64>, Option<i64>)>;
    let mut per_item: BTreeMap<String, Changes> = BTreeMap::new();
    for r in &seen {
        let d = r.dynamodb().unwrap();
        per_item
            .entry(key_of(r))
            .or_default()
            .push((number(d.old_image(), "v"), number(d.new_image(), "v")));
    }
    for (item, changes) in per_item {
        for (i, (old, new)) in changes.iter().enumerate() {
            let i = i as i64;
            assert_eq!(*old, (i > 0).then_some(i), "{item} #{i}");
            assert_eq!(*new, Some(i + 1), "{item} #{i}");
        }
    }
    node.stop().await;
}

#[tokio::test]
async fn errors_for_unknown_streams_expired_iterators_and_trimmed_positions() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    create(&client, "errs", Some(StreamViewType::KeysOnly)).await;
    let arn = latest_arn(&client, "errs").await;
    let code = |e: &dyn ProvideErrorMetadata| e.code().unwrap_or_default().to_string();

    let missing = arn.replace("table/errs", "table/nothere");
    let e = streams
        .describe_stream()
        .stream_arn(&missing)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    // A stream ARN that is not one is a bad parameter, not a missing stream.
    let junk = "sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf";
    let e = streams
        .describe_stream()
        .stream_arn(junk)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ValidationException");
    let e = streams
        .list_streams()
        .table_name("errs")
        .exclusive_start_stream_arn(junk)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ValidationException");
    let shard = shard_ids(&streams, &arn).await.remove(0);
    let e = streams
        .get_shard_iterator()
        .stream_arn(junk)
        .shard_id(&shard)
        .shard_iterator_type(ShardIteratorType::Latest)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ValidationException");
    let e = streams
        .get_shard_iterator()
        .stream_arn(&arn)
        .shard_id(format!("shardId-{}", "9".repeat(28)))
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    let e = streams
        .get_shard_iterator()
        .stream_arn(&arn)
        .shard_id(&shard)
        .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
        .sequence_number(format!("{:021}", 5))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "TrimmedDataAccessException");
    let it = iterator(&streams, &arn, &shard, ShardIteratorType::TrimHorizon).await;
    let (head, issued) = it.rsplit_once('|').unwrap();
    let stale = format!(
        "{head}|{}",
        issued.parse::<i64>().unwrap() - 16 * 60 * 1_000_000
    );
    let e = streams
        .get_records()
        .shard_iterator(stale)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ExpiredIteratorException");
    let e = streams
        .get_records()
        .shard_iterator("not an iterator")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ValidationException");
    let e = streams
        .get_records()
        .shard_iterator(&it)
        .limit(1001)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ValidationException");
    let e = streams
        .list_streams()
        .table_name("nothere")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    node.stop().await;
}

#[tokio::test]
async fn ttl_expiry_removes_items_with_the_services_identity() {
    let mut node = TestNode::start_with(|c| c.ttl_scan_period_seconds = 1).await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    create(&client, "sessions", Some(StreamViewType::OldImage)).await;
    client
        .update_time_to_live()
        .table_name("sessions")
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name("expires")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let put = |key: &str, expires: AttributeValue| {
        client
            .put_item()
            .table_name("sessions")
            .item("pk", s(key))
            .item("expires", expires)
            .send()
    };
    put("gone", n(&(now - 1).to_string())).await.unwrap();
    put("kept", n(&(now + 3600).to_string())).await.unwrap();
    put("text", s(&(now - 1).to_string())).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let got = client
            .get_item()
            .table_name("sessions")
            .key("pk", s("gone"))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        if got.item().is_none() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not expired in time"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let records = read_all(&streams, &latest_arn(&client, "sessions").await, None).await;
    let removes: Vec<&Record> = records
        .iter()
        .filter(|r| r.event_name() == Some(&OperationType::Remove))
        .collect();
    assert_eq!(removes.len(), 1);
    assert_eq!(key_of(removes[0]), "gone");
    let who = removes[0].user_identity().unwrap();
    assert_eq!(who.r#type(), Some("Service"));
    assert_eq!(who.principal_id(), Some("dynamodb.amazonaws.com"));
    assert!(removes[0].dynamodb().unwrap().old_image().is_some());
    for key in ["kept", "text"] {
        let got = client
            .get_item()
            .table_name("sessions")
            .key("pk", s(key))
            .send()
            .await
            .unwrap();
        assert!(got.item().is_some(), "{key}");
    }
    node.stop().await;
}

/// The streams of a deleted table, as `(label, status)` through ListStreams and DescribeStream.
async fn listed(streams: &StreamsClient, table: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let listed = streams
        .list_streams()
        .table_name(table)
        .send()
        .await
        .unwrap();
    for s in listed.streams() {
        assert_eq!(s.table_name(), Some(table));
        let d = streams
            .describe_stream()
            .stream_arn(s.stream_arn().unwrap())
            .send()
            .await
            .unwrap();
        let d = d.stream_description().unwrap();
        assert_eq!(d.table_name(), Some(table));
        assert_eq!(d.key_schema()[0].attribute_name(), "pk");
        out.push((
            s.stream_arn().unwrap().to_string(),
            d.stream_status().unwrap().as_str().to_string(),
        ));
    }
    out
}

#[tokio::test]
async fn a_deleted_tables_streams_stay_readable_and_disabled_until_they_expire() {
    let mut node = TestNode::start_with(|c| c.ttl_scan_period_seconds = 1).await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    let code = |e: &dyn ProvideErrorMetadata| e.code().unwrap_or_default().to_string();
    create(&client, "gone", Some(StreamViewType::NewImage)).await;
    for i in 0..3 {
        client
            .put_item()
            .table_name("gone")
            .item("pk", s(&format!("k{i}")))
            .send()
            .await
            .unwrap();
    }
    let first = latest_arn(&client, "gone").await;
    client
        .delete_table()
        .table_name("gone")
        .send()
        .await
        .unwrap();
    let e = client
        .describe_table()
        .table_name("gone")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    let e = client
        .put_item()
        .table_name("gone")
        .item("pk", s("late"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    // DynamoDB: "the corresponding stream on that table goes into the DISABLED state, and the
    // stream is automatically deleted after 24 hours."
    assert_eq!(
        listed(&streams, "gone").await,
        vec![(first.clone(), "DISABLED".to_string())]
    );
    let all = streams.list_streams().send().await.unwrap();
    assert!(
        all.streams()
            .iter()
            .any(|s| s.stream_arn() == Some(first.as_str()))
    );
    let records = read_all(&streams, &first, None).await;
    assert_eq!(records.len(), 3);
    assert!(
        records
            .iter()
            .all(|r| r.event_name() == Some(&OperationType::Insert))
    );
    let shard = shard_ids(&streams, &first).await.remove(0);
    let it = iterator(&streams, &first, &shard, ShardIteratorType::Latest).await;
    let page = streams
        .get_records()
        .shard_iterator(it)
        .send()
        .await
        .unwrap();
    assert!(page.records().is_empty());
    assert!(page.next_shard_iterator().is_none(), "the shard is closed");

    // A table created again under the name has a stream of its own; the old one stays.
    create(&client, "gone", Some(StreamViewType::KeysOnly)).await;
    client
        .put_item()
        .table_name("gone")
        .item("pk", s("new"))
        .send()
        .await
        .unwrap();
    let second = latest_arn(&client, "gone").await;
    assert_ne!(first, second);
    let mut expected = vec![
        (first.clone(), "DISABLED".to_string()),
        (second.clone(), "ENABLED".to_string()),
    ];
    expected.sort();
    assert_eq!(listed(&streams, "gone").await, expected);
    assert_eq!(read_all(&streams, &first, None).await.len(), 3);
    let fresh = read_all(&streams, &second, None).await;
    assert_eq!(fresh.iter().map(key_of).collect::<Vec<_>>(), ["new"]);
    let scanned = client.scan().table_name("gone").send().await.unwrap();
    assert_eq!(scanned.count(), 1, "the old table's items went with it");

    // Deleted again: both kept, both disabled.
    client
        .delete_table()
        .table_name("gone")
        .send()
        .await
        .unwrap();
    let statuses: Vec<String> = listed(&streams, "gone")
        .await
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    assert_eq!(statuses, ["DISABLED", "DISABLED"]);

    // Once every stream has expired (their entries removed here, as 24 hours would), the
    // kept log goes with its keyspace.
    let cql = node.cql_session().await;
    cql.query_unpaged(
        "DELETE FROM \"alternator_gone\".\"gone:streams\" WHERE p = 'streams'",
        (),
    )
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let rows = cql
            .query_unpaged(
                "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = 'alternator_gone'",
                (),
            )
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows_num();
        if rows == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the expired log was not dropped"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let e = streams
        .list_streams()
        .table_name("gone")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    let e = streams
        .describe_stream()
        .stream_arn(&first)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");

    // A table without a stream leaves nothing behind, and the name can be used again.
    create(&client, "plain", None).await;
    client
        .delete_table()
        .table_name("plain")
        .send()
        .await
        .unwrap();
    create(&client, "plain", None).await;
    node.stop().await;
}

#[tokio::test]
async fn records_and_numbering_survive_a_restart() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create(&client, "durable", Some(StreamViewType::NewImage)).await;
    for i in 0..3 {
        client
            .put_item()
            .table_name("durable")
            .item("pk", s(&format!("before{i}")))
            .send()
            .await
            .unwrap();
    }
    let arn = latest_arn(&client, "durable").await;
    let dir = node.dir.path().to_path_buf();
    node.stop().await;

    let restarted = khata_server::node::Node::start(&support::test_config(&dir))
        .await
        .unwrap();
    let client = dynamo_support::client(restarted.dynamo_address());
    let streams = streams_client(restarted.dynamo_address());
    assert_eq!(latest_arn(&client, "durable").await, arn);
    client
        .put_item()
        .table_name("durable")
        .item("pk", s("after"))
        .send()
        .await
        .unwrap();
    let records = read_all(&streams, &arn, None).await;
    assert_eq!(
        records.iter().map(key_of).collect::<Vec<_>>(),
        ["before0", "before1", "before2", "after"]
    );
    let seqs: Vec<&str> = records
        .iter()
        .map(|r| r.dynamodb().unwrap().sequence_number().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    restarted.shutdown().await;
}

/// Writes by TransactWriteItems and BatchWriteItem are recorded like single-item writes; a
/// transaction that cancels records nothing, and does not hold readers back.
#[tokio::test]
async fn transactions_and_batch_writes_are_recorded() {
    use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem};
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    let streams = streams_client(node.dynamo_address());
    create(&client, "txs", Some(StreamViewType::NewAndOldImages)).await;
    let arn = latest_arn(&client, "txs").await;
    let item =
        |pk: &str, v: &str| HashMap::from([("pk".to_string(), s(pk)), ("v".to_string(), n(v))]);
    let put = |pk: &str, v: &str| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name("txs")
                    .set_item(Some(item(pk, v)))
                    .build()
                    .unwrap(),
            )
            .build()
    };
    client
        .transact_write_items()
        .transact_items(put("a", "1"))
        .transact_items(put("b", "1"))
        .send()
        .await
        .unwrap();
    // Cancelled whole: its first action would have written `c`.
    let cancelled = client
        .transact_write_items()
        .transact_items(put("c", "1"))
        .transact_items(
            TransactWriteItem::builder()
                .delete(
                    Delete::builder()
                        .table_name("txs")
                        .key("pk", s("a"))
                        .condition_expression("attribute_not_exists(pk)")
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await;
    assert!(cancelled.is_err());
    client
        .batch_write_item()
        .request_items(
            "txs",
            vec![put_request(item("a", "2")), put_request(item("d", "1"))],
        )
        .send()
        .await
        .unwrap();
    // A single-item write after them is read too: nothing holds readers back.
    client
        .put_item()
        .table_name("txs")
        .set_item(Some(item("e", "1")))
        .send()
        .await
        .unwrap();
    let mut records = Vec::new();
    for _ in 0..200 {
        records = read_all(&streams, &arn, None).await;
        if records.len() >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen: Vec<(String, OperationType, Option<i64>, Option<i64>)> = records
        .iter()
        .map(|r| {
            let d = r.dynamodb().unwrap();
            (
                key_of(r),
                r.event_name().unwrap().clone(),
                number(d.old_image(), "v"),
                number(d.new_image(), "v"),
            )
        })
        .collect();
    let mut sorted = seen.clone();
    sorted.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        sorted,
        vec![
            ("a".to_string(), OperationType::Insert, None, Some(1)),
            ("a".to_string(), OperationType::Modify, Some(1), Some(2)),
            ("b".to_string(), OperationType::Insert, None, Some(1)),
            ("d".to_string(), OperationType::Insert, None, Some(1)),
            ("e".to_string(), OperationType::Insert, None, Some(1)),
        ],
        "{seen:?}"
    );
    node.stop().await;
}
