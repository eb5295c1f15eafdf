//! DynamoDB global and local secondary indexes through `aws-sdk-dynamodb` against a node the
//! test starts: every projection, sparse indexes, writes moving items between index keys,
//! DynamoDB's refusals, paging and parallel scans through an index, a GSI added by UpdateTable
//! over existing data and deleted again, and indexes across a restart.

mod dynamo_support;
mod support;

use dynamo_support::{attr, key, n, put_request, s};

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, CreateGlobalSecondaryIndexAction,
    DeleteGlobalSecondaryIndexAction, GlobalSecondaryIndex, GlobalSecondaryIndexUpdate,
    IndexStatus, KeyType, LocalSecondaryIndex, Projection, ProjectionType, ScalarAttributeType,
    Select, TableStatus,
};
use khata_server::node::Node;
use support::TestNode;

type Item = HashMap<String, AttributeValue>;

fn projection(kind: ProjectionType, include: &[&str]) -> Projection {
    let mut p = Projection::builder().projection_type(kind);
    for a in include {
        p = p.non_key_attributes(*a);
    }
    p.build()
}

fn gsi(name: &str, hash: &str, range: Option<&str>, p: Projection) -> GlobalSecondaryIndex {
    let mut g = GlobalSecondaryIndex::builder()
        .index_name(name)
        .key_schema(key(hash, KeyType::Hash))
        .projection(p);
    if let Some(r) = range {
        g = g.key_schema(key(r, KeyType::Range));
    }
    g.build().unwrap()
}

fn item(pairs: &[(&str, AttributeValue)]) -> Item {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn code<E: ProvideErrorMetadata>(e: &E) -> (String, String) {
    (
        e.code().unwrap_or_default().to_string(),
        e.message().unwrap_or_default().to_string(),
    )
}

/// Table `orders` (PK, SK): GSI1 (GSI1PK, GSI1SK, ALL), `status-total` (status, total N,
/// KEYS_ONLY), `customer` (customer, INCLUDE note) and LSI `by-date` (PK, date, KEYS_ONLY).
async fn create_orders(client: &Client) {
    client
        .create_table()
        .table_name("orders")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("PK", KeyType::Hash))
        .key_schema(key("SK", KeyType::Range))
        .attribute_definitions(attr("PK", ScalarAttributeType::S))
        .attribute_definitions(attr("SK", ScalarAttributeType::S))
        .attribute_definitions(attr("GSI1PK", ScalarAttributeType::S))
        .attribute_definitions(attr("GSI1SK", ScalarAttributeType::S))
        .attribute_definitions(attr("status", ScalarAttributeType::S))
        .attribute_definitions(attr("total", ScalarAttributeType::N))
        .attribute_definitions(attr("customer", ScalarAttributeType::S))
        .attribute_definitions(attr("date", ScalarAttributeType::S))
        .global_secondary_indexes(gsi(
            "GSI1",
            "GSI1PK",
            Some("GSI1SK"),
            projection(ProjectionType::All, &[]),
        ))
        .global_secondary_indexes(gsi(
            "status-total",
            "status",
            Some("total"),
            projection(ProjectionType::KeysOnly, &[]),
        ))
        .global_secondary_indexes(gsi(
            "customer",
            "customer",
            None,
            projection(ProjectionType::Include, &["note"]),
        ))
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("by-date")
                .key_schema(key("PK", KeyType::Hash))
                .key_schema(key("date", KeyType::Range))
                .projection(projection(ProjectionType::KeysOnly, &[]))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

async fn put(client: &Client, table: &str, it: Item) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(it))
        .send()
        .await
        .unwrap();
}

/// Every item of one index hash value (all pages), in index order.
async fn query_all(client: &Client, index: &str, hash: &str, value: AttributeValue) -> Vec<Item> {
    let mut out = Vec::new();
    let mut start = None;
    loop {
        let page = client
            .query()
            .table_name("orders")
            .index_name(index)
            .key_condition_expression("#h = :h")
            .expression_attribute_names("#h", hash)
            .expression_attribute_values(":h", value.clone())
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        out.extend(page.items().iter().cloned());
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            return out;
        }
    }
}

fn sks(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match &i["SK"] {
            AttributeValue::S(v) => v.clone(),
            other => panic!("SK {other:?}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_follow_every_write_with_their_projections() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create_orders(&client).await;
    let t = client
        .describe_table()
        .table_name("orders")
        .send()
        .await
        .unwrap();
    let t = t.table().unwrap();
    assert_eq!(t.table_status(), Some(&TableStatus::Active));
    for g in t.global_secondary_indexes() {
        assert_eq!(g.index_status(), Some(&IndexStatus::Active));
        assert!(
            g.index_arn()
                .unwrap()
                .ends_with(&format!("table/orders/index/{}", g.index_name().unwrap()))
        );
    }
    // Index tables are not DynamoDB tables.
    let names = client.list_tables().send().await.unwrap();
    assert_eq!(names.table_names(), &["orders"]);

    for (sk, status, total, date) in [
        ("o1", "OPEN", "30", "2026-01-03"),
        ("o2", "OPEN", "5", "2026-01-01"),
        ("o3", "SHIPPED", "12.5", "2026-01-02"),
    ] {
        put(
            &client,
            "orders",
            item(&[
                ("PK", s("C#1")),
                ("SK", s(sk)),
                ("GSI1PK", s("ALL")),
                ("GSI1SK", s(&format!("{date}#{sk}"))),
                ("status", s(status)),
                ("total", n(total)),
                ("customer", s("ann")),
                ("date", s(date)),
                ("note", s(&format!("note {sk}"))),
                ("secret", s("not projected")),
            ]),
        )
        .await;
    }
    // Sparse: no status, no customer, no GSI1 keys.
    put(
        &client,
        "orders",
        item(&[
            ("PK", s("C#1")),
            ("SK", s("draft")),
            ("date", s("2026-01-09")),
        ]),
    )
    .await;

    // KEYS_ONLY GSI on a number range key, in numeric order, both ways.
    let open = query_all(&client, "status-total", "status", s("OPEN")).await;
    assert_eq!(sks(&open), ["o2", "o1"]);
    let keys: BTreeSet<&str> = open[0].keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["PK", "SK", "status", "total"]));
    let desc = client
        .query()
        .table_name("orders")
        .index_name("status-total")
        .key_condition_expression("#s = :s AND #t > :t")
        .expression_attribute_names("#s", "status")
        .expression_attribute_names("#t", "total")
        .expression_attribute_values(":s", s("OPEN"))
        .expression_attribute_values(":t", n("1"))
        .scan_index_forward(false)
        .send()
        .await
        .unwrap();
    assert_eq!(sks(desc.items()), ["o1", "o2"]);

    // INCLUDE: the keys and `note`.
    let ann = query_all(&client, "customer", "customer", s("ann")).await;
    assert_eq!(ann.len(), 3);
    let keys: BTreeSet<&str> = ann[0].keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["PK", "SK", "customer", "note"]));

    // ALL, with begins_with and a filter.
    let all = client
        .query()
        .table_name("orders")
        .index_name("GSI1")
        .key_condition_expression("GSI1PK = :p AND begins_with(GSI1SK, :d)")
        .filter_expression("#t >= :min")
        .expression_attribute_names("#t", "total")
        .expression_attribute_values(":p", s("ALL"))
        .expression_attribute_values(":d", s("2026-01"))
        .expression_attribute_values(":min", n("10"))
        .send()
        .await
        .unwrap();
    assert_eq!(sks(all.items()), ["o3", "o1"]);
    assert_eq!(all.scanned_count(), 3);
    assert_eq!(all.items()[0]["secret"], s("not projected"));

    // LSI: strongly consistent reads, and what it does not project comes from the item.
    let lsi = client
        .query()
        .table_name("orders")
        .index_name("by-date")
        .key_condition_expression("PK = :p")
        .expression_attribute_values(":p", s("C#1"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(sks(lsi.items()), ["o2", "o3", "o1", "draft"]);
    assert!(!lsi.items()[0].contains_key("secret"));
    let lsi = client
        .query()
        .table_name("orders")
        .index_name("by-date")
        .key_condition_expression("PK = :p AND #d < :d")
        .expression_attribute_names("#d", "date")
        .expression_attribute_values(":p", s("C#1"))
        .expression_attribute_values(":d", s("2026-01-02"))
        .select(Select::AllAttributes)
        .send()
        .await
        .unwrap();
    assert_eq!(lsi.items().len(), 1);
    assert_eq!(lsi.items()[0]["secret"], s("not projected"));

    // An unconditional overwrite moves the item to another index key.
    put(
        &client,
        "orders",
        item(&[
            ("PK", s("C#1")),
            ("SK", s("o2")),
            ("status", s("SHIPPED")),
            ("total", n("5")),
            ("customer", s("bob")),
        ]),
    )
    .await;
    assert_eq!(
        sks(&query_all(&client, "status-total", "status", s("OPEN")).await),
        ["o1"]
    );
    assert_eq!(
        sks(&query_all(&client, "status-total", "status", s("SHIPPED")).await),
        ["o2", "o3"]
    );
    assert_eq!(
        query_all(&client, "customer", "customer", s("ann"))
            .await
            .len(),
        2
    );
    // o2 left GSI1 (no GSI1 keys any more).
    assert_eq!(
        query_all(&client, "GSI1", "GSI1PK", s("ALL")).await.len(),
        2
    );

    // UpdateItem moves it back; REMOVE takes it out of a sparse index.
    client
        .update_item()
        .table_name("orders")
        .set_key(Some(item(&[("PK", s("C#1")), ("SK", s("o2"))])))
        .update_expression("SET #s = :o REMOVE customer")
        .expression_attribute_names("#s", "status")
        .expression_attribute_values(":o", s("OPEN"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        sks(&query_all(&client, "status-total", "status", s("OPEN")).await),
        ["o2", "o1"]
    );
    assert!(
        query_all(&client, "customer", "customer", s("bob"))
            .await
            .is_empty()
    );

    // DeleteItem, unconditional and conditional.
    client
        .delete_item()
        .table_name("orders")
        .set_key(Some(item(&[("PK", s("C#1")), ("SK", s("o1"))])))
        .send()
        .await
        .unwrap();
    client
        .delete_item()
        .table_name("orders")
        .set_key(Some(item(&[("PK", s("C#1")), ("SK", s("o3"))])))
        .condition_expression("attribute_exists(PK)")
        .send()
        .await
        .unwrap();
    assert_eq!(
        sks(&query_all(&client, "status-total", "status", s("OPEN")).await),
        ["o2"]
    );
    assert!(
        query_all(&client, "status-total", "status", s("SHIPPED"))
            .await
            .is_empty()
    );
    // A re-put after a delete is indexed again.
    put(
        &client,
        "orders",
        item(&[
            ("PK", s("C#1")),
            ("SK", s("o1")),
            ("status", s("OPEN")),
            ("total", n("1")),
        ]),
    )
    .await;
    assert_eq!(
        sks(&query_all(&client, "status-total", "status", s("OPEN")).await),
        ["o1", "o2"]
    );

    // Refusals, in DynamoDB's words.
    let e = client
        .put_item()
        .table_name("orders")
        .set_item(Some(item(&[
            ("PK", s("C#1")),
            ("SK", s("x")),
            ("status", n("1")),
        ])))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        (
            "ValidationException".into(),
            "One or more parameter values were invalid: Type mismatch for Index Key status Expected: S Actual: N IndexName: status-total".into()
        )
    );
    let e = client
        .put_item()
        .table_name("orders")
        .set_item(Some(item(&[
            ("PK", s("C#1")),
            ("SK", s("x")),
            ("customer", s("")),
        ])))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()).1,
        "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: customer, IndexKey: customer"
    );
    let e = client
        .update_item()
        .table_name("orders")
        .set_key(Some(item(&[("PK", s("C#1")), ("SK", s("o1"))])))
        .update_expression("SET #t = :t")
        .expression_attribute_names("#t", "total")
        .expression_attribute_values(":t", s("many"))
        .send()
        .await
        .unwrap_err();
    assert!(code(&e.into_service_error()).1.contains(
        "Type mismatch for Index Key total Expected: N Actual: S IndexName: status-total"
    ));
    let q = |index: &str| {
        client
            .query()
            .table_name("orders")
            .index_name(index)
            .key_condition_expression("#s = :s")
            .expression_attribute_names("#s", "status")
            .expression_attribute_values(":s", s("OPEN"))
    };
    let e = q("status-total")
        .consistent_read(true)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()).1,
        "Consistent reads are not supported on global secondary indexes"
    );
    let e = q("status-total")
        .select(Select::AllAttributes)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()).1,
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index status-total because its projection type is not ALL"
    );
    let e = q("nope").send().await.unwrap_err();
    assert_eq!(
        code(&e.into_service_error()).1,
        "The table does not have the specified index: nope"
    );
    let count = q("status-total")
        .select(Select::Count)
        .send()
        .await
        .unwrap();
    assert_eq!(count.count(), 2);
    assert!(count.items().is_empty());

    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_pages_and_parallel_scans_cover_every_entry_once() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create_orders(&client).await;
    for i in 0..120 {
        let mut it = item(&[
            ("PK", s(&format!("C#{}", i % 7))),
            ("SK", s(&format!("o{i:03}"))),
            ("total", n(&(i % 10).to_string())),
        ]);
        if i % 4 != 0 {
            it.insert("status".into(), s(if i % 2 == 0 { "OPEN" } else { "DONE" }));
        }
        put(&client, "orders", it).await;
    }
    // Query pages of 7 through the index: index keys and table keys in LastEvaluatedKey.
    let mut seen = Vec::new();
    let mut start = None;
    loop {
        let page = client
            .query()
            .table_name("orders")
            .index_name("status-total")
            .key_condition_expression("#s = :s")
            .expression_attribute_names("#s", "status")
            .expression_attribute_values(":s", s("DONE"))
            .limit(7)
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        assert!(page.items().len() <= 7);
        for it in page.items() {
            let AttributeValue::N(t) = &it["total"] else {
                panic!()
            };
            seen.push((
                t.parse::<u32>().unwrap(),
                sks(std::slice::from_ref(it))[0].clone(),
            ));
        }
        start = page.last_evaluated_key().cloned();
        if let Some(k) = &start {
            let names: BTreeSet<&str> = k.keys().map(String::as_str).collect();
            assert_eq!(names, BTreeSet::from(["PK", "SK", "status", "total"]));
        } else {
            break;
        }
    }
    assert_eq!(seen.len(), 60);
    let totals: Vec<u32> = seen.iter().map(|(t, _)| *t).collect();
    let mut sorted = totals.clone();
    sorted.sort();
    assert_eq!(totals, sorted);

    // A parallel scan of the index: the 90 entries, each once, in pages.
    let mut keys = BTreeSet::new();
    let mut total = 0;
    for segment in 0..4 {
        let mut start = None;
        loop {
            let page = client
                .scan()
                .table_name("orders")
                .index_name("status-total")
                .segment(segment)
                .total_segments(4)
                .limit(11)
                .set_exclusive_start_key(start)
                .send()
                .await
                .unwrap();
            for it in page.items() {
                total += 1;
                keys.insert(sks(std::slice::from_ref(it))[0].clone());
            }
            start = page.last_evaluated_key().cloned();
            if start.is_none() {
                break;
            }
        }
    }
    assert_eq!(total, 90);
    assert_eq!(keys.len(), 90);
    node.stop().await;
}

async fn index_status(client: &Client, table: &str, index: &str) -> Option<IndexStatus> {
    let t = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    t.table()
        .unwrap()
        .global_secondary_indexes()
        .iter()
        .find(|g| g.index_name() == Some(index))
        .and_then(|g| g.index_status().cloned())
}

async fn wait_for(client: &Client, table: &str, index: &str, want: Option<IndexStatus>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = index_status(client, table, index).await;
        if now == want {
            return;
        }
        assert!(Instant::now() < deadline, "index {index} stuck at {now:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn count(client: &Client, index: &str, hash: &str, value: AttributeValue) -> i32 {
    let mut total = 0;
    let mut start = None;
    loop {
        let page = client
            .query()
            .table_name("events")
            .index_name(index)
            .key_condition_expression("#h = :h")
            .expression_attribute_names("#h", hash)
            .expression_attribute_values(":h", value.clone())
            .select(Select::Count)
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        total += page.count();
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            return total;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gsi_added_by_update_table_is_backfilled_survives_restart_and_is_deleted() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    client
        .create_table()
        .table_name("events")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("id", KeyType::Hash))
        .attribute_definitions(attr("id", ScalarAttributeType::N))
        .send()
        .await
        .unwrap();
    // Enough items for several backfill chunks.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let client = client.clone();
            tokio::spawn(async move {
                for i in (w..2400).step_by(4) {
                    let mut it = item(&[("id", n(&i.to_string()))]);
                    if i % 3 != 0 {
                        it.insert("kind".into(), s(if i % 2 == 0 { "even" } else { "odd" }));
                        it.insert("at".into(), n(&i.to_string()));
                    }
                    put(&client, "events", it).await;
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let create = || {
        client
            .update_table()
            .table_name("events")
            .attribute_definitions(attr("kind", ScalarAttributeType::S))
            .attribute_definitions(attr("at", ScalarAttributeType::N))
            .global_secondary_index_updates(
                GlobalSecondaryIndexUpdate::builder()
                    .create(
                        CreateGlobalSecondaryIndexAction::builder()
                            .index_name("by-kind")
                            .key_schema(key("kind", KeyType::Hash))
                            .key_schema(key("at", KeyType::Range))
                            .projection(projection(ProjectionType::KeysOnly, &[]))
                            .build()
                            .unwrap(),
                    )
                    .build(),
            )
    };
    let answer = create().send().await.unwrap();
    let d = answer.table_description().unwrap();
    assert_eq!(d.table_status(), Some(&TableStatus::Updating));
    let g = &d.global_secondary_indexes()[0];
    assert_eq!(g.index_status(), Some(&IndexStatus::Creating));
    assert_eq!(g.backfilling(), Some(true));
    // Writes during the backfill are indexed too.
    put(
        &client,
        "events",
        item(&[("id", n("5000")), ("kind", s("odd")), ("at", n("5000"))]),
    )
    .await;
    // One index creation at a time, and no second index of one name.
    let e = create().send().await.unwrap_err();
    let (c, _) = code(&e.into_service_error());
    assert!(
        c == "LimitExceededException" || c == "ValidationException",
        "{c}"
    );
    wait_for(&client, "events", "by-kind", Some(IndexStatus::Active)).await;
    let t = client
        .describe_table()
        .table_name("events")
        .send()
        .await
        .unwrap();
    assert_eq!(
        t.table().unwrap().table_status(),
        Some(&TableStatus::Active)
    );
    assert_eq!(count(&client, "by-kind", "kind", s("even")).await, 800);
    assert_eq!(count(&client, "by-kind", "kind", s("odd")).await, 801);
    let e = create().send().await.unwrap_err();
    assert_eq!(
        code(&e.into_service_error()).1,
        "Attempting to create an index which already exists"
    );

    // A restart keeps the index and its entries.
    node.stop().await;
    let restarted = Node::start(&support::test_config(node.dir.path()))
        .await
        .unwrap();
    let client = dynamo_support::client(restarted.dynamo_address());
    assert_eq!(
        index_status(&client, "events", "by-kind").await,
        Some(IndexStatus::Active)
    );
    assert_eq!(count(&client, "by-kind", "kind", s("odd")).await, 801);

    // Delete: DELETING, then gone.
    let answer = client
        .update_table()
        .table_name("events")
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .delete(
                    DeleteGlobalSecondaryIndexAction::builder()
                        .index_name("by-kind")
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let g = &answer
        .table_description()
        .unwrap()
        .global_secondary_indexes()[0];
    assert_eq!(g.index_status(), Some(&IndexStatus::Deleting));
    wait_for(&client, "events", "by-kind", None).await;
    let e = client
        .query()
        .table_name("events")
        .index_name("by-kind")
        .key_condition_expression("kind = :k")
        .expression_attribute_values(":k", s("odd"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()).1,
        "The table does not have the specified index: by-kind"
    );
    // Writes go on without it, and the table can be dropped.
    put(
        &client,
        "events",
        item(&[("id", n("1")), ("kind", s("x")), ("at", n("1"))]),
    )
    .await;
    client
        .delete_table()
        .table_name("events")
        .customize()
        .config_override(
            aws_sdk_dynamodb::config::Config::builder()
                .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled()),
        )
        .send()
        .await
        .unwrap();
    restarted.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_cut_by_a_restart_finishes_after_it() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    client
        .create_table()
        .table_name("events")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("id", KeyType::Hash))
        .attribute_definitions(attr("id", ScalarAttributeType::S))
        .send()
        .await
        .unwrap();
    for i in 0..1500 {
        put(
            &client,
            "events",
            item(&[("id", s(&format!("e{i}"))), ("kind", s("k"))]),
        )
        .await;
    }
    client
        .update_table()
        .table_name("events")
        .attribute_definitions(attr("kind", ScalarAttributeType::S))
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .create(
                    CreateGlobalSecondaryIndexAction::builder()
                        .index_name("kind-index")
                        .key_schema(key("kind", KeyType::Hash))
                        .projection(projection(ProjectionType::All, &[]))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    // Stop at once: the backfill is cut short (or just done); either way it ends ACTIVE with
    // every item after the restart.
    node.stop().await;
    let restarted = Node::start(&support::test_config(node.dir.path()))
        .await
        .unwrap();
    let client = dynamo_support::client(restarted.dynamo_address());
    wait_for(&client, "events", "kind-index", Some(IndexStatus::Active)).await;
    assert_eq!(count(&client, "kind-index", "kind", s("k")).await, 1500);
    restarted.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_leave_the_index_equal_to_the_table() {
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create_orders(&client).await;
    let statuses = ["A", "B", "C"];
    // Four clients race puts, conditional puts, updates and deletes on the same 12 items.
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut x = w.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..150 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let sk = format!("o{}", x % 12);
                    let status = statuses[(x >> 8) as usize % 3];
                    let key = item(&[("PK", s("C#1")), ("SK", s(&sk))]);
                    let result = match (x >> 16) % 5 {
                        0 => client
                            .put_item()
                            .table_name("orders")
                            .set_item(Some(item(&[
                                ("PK", s("C#1")),
                                ("SK", s(&sk)),
                                ("status", s(status)),
                                ("total", n("1")),
                            ])))
                            .send()
                            .await
                            .map(|_| ())
                            .map_err(|e| format!("{e:?}")),
                        1 => client
                            .put_item()
                            .table_name("orders")
                            .set_item(Some(item(&[
                                ("PK", s("C#1")),
                                ("SK", s(&sk)),
                                ("status", s(status)),
                                ("total", n("2")),
                            ])))
                            .condition_expression(
                                "attribute_exists(PK) OR attribute_not_exists(PK)",
                            )
                            .send()
                            .await
                            .map(|_| ())
                            .map_err(|e| format!("{e:?}")),
                        2 => client
                            .update_item()
                            .table_name("orders")
                            .set_key(Some(key))
                            .update_expression("SET #s = :s, #t = :t")
                            .expression_attribute_names("#s", "status")
                            .expression_attribute_names("#t", "total")
                            .expression_attribute_values(":s", s(status))
                            .expression_attribute_values(":t", n("3"))
                            .send()
                            .await
                            .map(|_| ())
                            .map_err(|e| format!("{e:?}")),
                        3 => client
                            .update_item()
                            .table_name("orders")
                            .set_key(Some(key))
                            .update_expression("REMOVE #s")
                            .expression_attribute_names("#s", "status")
                            .send()
                            .await
                            .map(|_| ())
                            .map_err(|e| format!("{e:?}")),
                        _ => client
                            .delete_item()
                            .table_name("orders")
                            .set_key(Some(key))
                            .send()
                            .await
                            .map(|_| ())
                            .map_err(|e| format!("{e:?}")),
                    };
                    result.unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    // What the table says each status holds, against what the index answers.
    let scan = client.scan().table_name("orders").send().await.unwrap();
    for status in statuses {
        let mut want: Vec<String> = scan
            .items()
            .iter()
            .filter(|i| i.get("status") == Some(&s(status)) && i.contains_key("total"))
            .map(|i| sks(std::slice::from_ref(i))[0].clone())
            .collect();
        want.sort();
        let mut got = sks(&query_all(&client, "status-total", "status", s(status)).await);
        got.sort();
        assert_eq!(got, want, "status {status}");
    }
    node.stop().await;
}

/// TransactWriteItems and BatchWriteItem keep the indexes as single-item writes do: entries
/// for what they write, an update moving an item to another index key leaves the old one, and
/// an index key of the wrong type cancels the transaction with a ValidationError reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_and_batches_keep_the_indexes() {
    use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create_orders(&client).await;
    let order = |sk: &str, customer: &str| {
        item(&[
            ("PK", s("USER#1")),
            ("SK", s(sk)),
            ("customer", s(customer)),
        ])
    };
    let tx_put = |it: Item| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name("orders")
                    .set_item(Some(it))
                    .build()
                    .unwrap(),
            )
            .build()
    };
    client
        .transact_write_items()
        .transact_items(tx_put(order("ORDER#1", "kim")))
        .transact_items(tx_put(order("ORDER#2", "kim")))
        .send()
        .await
        .unwrap();
    client
        .batch_write_item()
        .request_items("orders", vec![put_request(order("ORDER#3", "lee"))])
        .send()
        .await
        .unwrap();
    assert_eq!(
        sks(&query_all(&client, "customer", "customer", s("kim")).await),
        vec!["ORDER#1", "ORDER#2"]
    );
    assert_eq!(
        sks(&query_all(&client, "customer", "customer", s("lee")).await),
        vec!["ORDER#3"]
    );
    // DescribeTable estimates each index's entries: the sparse ones have none.
    let described = client
        .describe_table()
        .table_name("orders")
        .send()
        .await
        .unwrap();
    let t = described.table().unwrap();
    assert_eq!(t.item_count(), Some(3));
    let count = |name: &str| {
        t.global_secondary_indexes()
            .iter()
            .find(|i| i.index_name() == Some(name))
            .and_then(|i| i.item_count())
    };
    assert_eq!(count("customer"), Some(3));
    assert_eq!(count("status-total"), Some(0));
    assert!(
        t.global_secondary_indexes()
            .iter()
            .find(|i| i.index_name() == Some("customer"))
            .and_then(|i| i.index_size_bytes())
            .unwrap()
            > 0
    );
    assert_eq!(t.local_secondary_indexes()[0].item_count(), Some(0));
    // An update in a transaction moves ORDER#2 from kim to lee.
    client
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .update(
                    Update::builder()
                        .table_name("orders")
                        .key("PK", s("USER#1"))
                        .key("SK", s("ORDER#2"))
                        .update_expression("SET customer = :c")
                        .expression_attribute_values(":c", s("lee"))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        sks(&query_all(&client, "customer", "customer", s("kim")).await),
        vec!["ORDER#1"]
    );
    assert_eq!(
        sks(&query_all(&client, "customer", "customer", s("lee")).await),
        vec!["ORDER#2", "ORDER#3"]
    );
    // An index key of the wrong type: the whole transaction cancels.
    let e = client
        .transact_write_items()
        .transact_items(tx_put(order("ORDER#4", "kim")))
        .transact_items(tx_put(item(&[
            ("PK", s("USER#1")),
            ("SK", s("ORDER#5")),
            ("customer", n("7")),
        ])))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(code(&e).0, "TransactionCanceledException", "{e:?}");
    assert_eq!(
        sks(&query_all(&client, "customer", "customer", s("kim")).await),
        vec!["ORDER#1"]
    );
    node.stop().await;
}

/// The units a `ConsumedCapacity` (INDEXES shape) gives index `name` in `member`.
fn index_units(
    c: &aws_sdk_dynamodb::types::ConsumedCapacity,
    global: bool,
    name: &str,
) -> Option<f64> {
    let map = if global {
        c.global_secondary_indexes()
    } else {
        c.local_secondary_indexes()
    };
    map.and_then(|m| m.get(name))
        .and_then(|u| u.capacity_units())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn return_consumed_capacity_indexes_counts_each_index() {
    use aws_sdk_dynamodb::types::ReturnConsumedCapacity;
    let mut node = TestNode::start().await;
    let client = dynamo_support::client(node.dynamo_address());
    create_orders(&client).await;

    // A new item in GSI1 (ALL) and by-date (KEYS_ONLY): one write each, plus the table's.
    let out = client
        .put_item()
        .table_name("orders")
        .set_item(Some(item(&[
            ("PK", s("c#1")),
            ("SK", s("o#1")),
            ("GSI1PK", s("g")),
            ("GSI1SK", s("1")),
            ("date", s("2026-11-30")),
        ])))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!(c.table().and_then(|t| t.capacity_units()), Some(1.0));
    assert_eq!(index_units(c, true, "GSI1"), Some(1.0));
    assert_eq!(index_units(c, false, "by-date"), Some(1.0));
    assert_eq!(index_units(c, true, "status-total"), None, "not in it");
    assert_eq!(c.capacity_units(), Some(3.0));

    // Moving the item to another GSI1 key deletes one entry and writes another: two units;
    // an attribute no index projects costs the indexes nothing... except GSI1, which
    // projects everything (one write of its entry).
    let out = client
        .update_item()
        .table_name("orders")
        .key("PK", s("c#1"))
        .key("SK", s("o#1"))
        .update_expression("SET GSI1SK = :k")
        .expression_attribute_values(":k", s("2"))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!(index_units(c, true, "GSI1"), Some(2.0));
    assert_eq!(index_units(c, false, "by-date"), None);
    let out = client
        .update_item()
        .table_name("orders")
        .key("PK", s("c#1"))
        .key("SK", s("o#1"))
        .update_expression("SET extra = :v")
        .expression_attribute_values(":v", s("x"))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!(index_units(c, true, "GSI1"), Some(1.0));
    assert_eq!(
        index_units(c, false, "by-date"),
        None,
        "KEYS_ONLY: unchanged"
    );
    // TOTAL is the sum without the breakdown.
    let out = client
        .delete_item()
        .table_name("orders")
        .key("PK", s("c#1"))
        .key("SK", s("o#1"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!(c.capacity_units(), Some(3.0));
    assert!(c.global_secondary_indexes().is_none() && c.table().is_none());

    // A Query of an index is charged to the index: half a unit for an eventual read.
    put(
        &client,
        "orders",
        item(&[
            ("PK", s("c#2")),
            ("SK", s("o#1")),
            ("GSI1PK", s("g")),
            ("GSI1SK", s("3")),
        ]),
    )
    .await;
    let out = client
        .query()
        .table_name("orders")
        .index_name("GSI1")
        .key_condition_expression("GSI1PK = :g")
        .expression_attribute_values(":g", s("g"))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    assert_eq!(out.count(), 1);
    let c = out.consumed_capacity().unwrap();
    assert_eq!(index_units(c, true, "GSI1"), Some(0.5));
    assert_eq!(c.table().and_then(|t| t.capacity_units()), Some(0.0));
    assert_eq!(c.capacity_units(), Some(0.5));
    node.stop().await;
}
