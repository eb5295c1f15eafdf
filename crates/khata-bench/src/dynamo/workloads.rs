//! The benchmark's table, its data and the three workloads, as DynamoDB JSON requests.
//!
//! One table, `PK` (S, hash) and `SK` (S, range), PAY_PER_REQUEST, holds two data sets:
//!
//! - items `0..items` for `put` and `get`: item `i` is `PK = kv#<i / items_per_partition>`,
//!   `SK = <i>` (eight digits), so a partition holds a few items, as in a single-table design;
//! - `query_partitions` partitions `q#<p>` of `partition_items` items each, `SK = <j>` (eight
//!   digits, so the newest item has the greatest key).
//!
//! Every item has a `data` string attribute of random letters that brings its size, as
//! DynamoDB counts it (attribute names plus values), to about `item_size` bytes.
//!
//! - `put`: PutItem of a random item among `items` (a new version of it);
//! - `get`: GetItem of a random loaded item by its full key; it must come back;
//! - `query`: Query of a random partition's newest 20 items (`KeyConditionExpression` `PK =
//!   :p`, `ScanIndexForward` false, `Limit` 20); 20 items must come back, the first the newest;
//! - `batch-write`: BatchWriteItem of 25 random items of `items` (PutRequests, distinct keys);
//! - `batch-get`: BatchGetItem of 25 random loaded items (distinct keys); all must come back;
//! - `transact`: TransactWriteItems of two Updates of two random items of `items`
//!   (`SET n = if_not_exists(n, :z) + :one`), a transfer's shape.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::DynamoArgs;
use super::client::Client;
use crate::cql::load::{Operation, Rng};

/// Items a Query workload asks for.
pub const QUERY_LIMIT: usize = 20;
/// How long CreateTable may take to reach ACTIVE.
const TABLE_ACTIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of an item that are not its `data` filler: the names `PK`, `SK`, `data` and the two
/// key values (at most 11 and 8 characters here).
const ITEM_OVERHEAD_BYTES: usize = 2 + 11 + 2 + 8 + 4;

/// One of the workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// PutItem.
    Put,
    /// GetItem by full key.
    Get,
    /// Query of the newest 20 items of a partition.
    Query,
    /// BatchWriteItem of 25 items.
    BatchWrite,
    /// BatchGetItem of 25 items.
    BatchGet,
    /// TransactWriteItems of two Updates.
    Transact,
}

/// Items per BatchWriteItem / BatchGetItem of the batch workloads.
pub const BATCH_ITEMS: usize = 25;

impl Workload {
    /// Parses a workload's name.
    pub fn parse(name: &str) -> Option<Workload> {
        match name {
            "put" => Some(Workload::Put),
            "get" => Some(Workload::Get),
            "query" => Some(Workload::Query),
            "batch-write" => Some(Workload::BatchWrite),
            "batch-get" => Some(Workload::BatchGet),
            "transact" => Some(Workload::Transact),
            _ => None,
        }
    }

    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Put => "put",
            Workload::Get => "get",
            Workload::Query => "query",
            Workload::BatchWrite => "batch-write",
            Workload::BatchGet => "batch-get",
            Workload::Transact => "transact",
        }
    }
}

/// What the requests of one target share: its client and the data set's shape.
#[derive(Debug)]
pub struct Bench {
    client: Client,
    table: String,
    items: u64,
    items_per_partition: u64,
    query_partitions: u64,
    partition_items: u64,
    filler_bytes: usize,
}

impl Bench {
    /// The benchmark against one endpoint.
    pub fn new(client: Client, args: &DynamoArgs) -> Bench {
        Bench {
            client,
            table: args.table.clone(),
            items: args.items.max(1),
            items_per_partition: args.items_per_partition.max(1),
            query_partitions: args.query_partitions.max(1),
            partition_items: args.partition_items,
            filler_bytes: args.item_size.saturating_sub(ITEM_OVERHEAD_BYTES).max(1),
        }
    }

    /// The client, for its connection count.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Creates the table (an existing one of the same name is used as it is) and waits until
    /// it is ACTIVE.
    pub async fn create_table(&self) -> Result<(), String> {
        let body = format!(
            r#"{{"TableName":"{}","AttributeDefinitions":[{{"AttributeName":"PK","AttributeType":"S"}},{{"AttributeName":"SK","AttributeType":"S"}}],"KeySchema":[{{"AttributeName":"PK","KeyType":"HASH"}},{{"AttributeName":"SK","KeyType":"RANGE"}}],"BillingMode":"PAY_PER_REQUEST"}}"#,
            self.table
        );
        match self.client.call("CreateTable", body).await {
            Ok(_) => {}
            Err(e) if e.contains("ResourceInUseException") => {
                eprintln!("table {} exists; using it", self.table);
            }
            Err(e) => return Err(e),
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Describe {
            table: DescribedTable,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct DescribedTable {
            table_status: String,
        }
        let began = Instant::now();
        loop {
            let body = format!(r#"{{"TableName":"{}"}}"#, self.table);
            let answer = self.client.call("DescribeTable", body).await?;
            let described: Describe = serde_json::from_slice(&answer)
                .map_err(|e| format!("DescribeTable: unexpected answer: {e}"))?;
            if described.table.table_status == "ACTIVE" {
                return Ok(());
            }
            if began.elapsed() > TABLE_ACTIVE_TIMEOUT {
                return Err(format!(
                    "table {} still {} after {} s",
                    self.table,
                    described.table.table_status,
                    TABLE_ACTIVE_TIMEOUT.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Loads what `workloads` read (`get`: every item; `query`: every query partition) with
    /// PutItem, `concurrency` in flight; stops at the first failure.
    pub async fn load(
        self: &Arc<Self>,
        workloads: &[Workload],
        concurrency: usize,
    ) -> Result<(), String> {
        let mut writes: Vec<(String, String)> = Vec::new();
        if workloads.contains(&Workload::Get) || workloads.contains(&Workload::BatchGet) {
            writes.extend((0..self.items).map(|i| self.kv_key(i)));
        }
        if workloads.contains(&Workload::Query) {
            for p in 0..self.query_partitions {
                writes.extend((0..self.partition_items).map(|j| query_key(p, j)));
            }
        }
        if writes.is_empty() {
            return Ok(());
        }
        let total = writes.len();
        let began = Instant::now();
        let writes = Arc::new(writes);
        let next = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for worker in 0..concurrency.max(1) {
            let (bench, writes, next) = (Arc::clone(self), Arc::clone(&writes), Arc::clone(&next));
            tasks.push(tokio::spawn(async move {
                let mut rng = Rng::new(0x10AD ^ worker as u64);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some((pk, sk)) = writes.get(i) else {
                        return Ok(());
                    };
                    bench.put(pk, sk, &mut rng).await?;
                }
            }));
        }
        let mut result = Ok(());
        for task in tasks {
            let outcome = task
                .await
                .map_err(|e| format!("loading task: {e}"))
                .and_then(|r| r);
            if result.is_ok() {
                result = outcome;
            }
        }
        result?;
        let seconds = began.elapsed().as_secs_f64();
        eprintln!(
            "loaded {total} items in {seconds:.1} s ({:.0} items/s)",
            total as f64 / seconds
        );
        Ok(())
    }

    /// The key of put/get item `i`.
    fn kv_key(&self, i: u64) -> (String, String) {
        (
            format!("kv#{:08}", i / self.items_per_partition),
            format!("{i:08}"),
        )
    }

    /// `count` distinct random items of `items`.
    fn distinct(&self, count: usize, rng: &mut Rng) -> Vec<u64> {
        let count = count.min(self.items as usize);
        let mut picked: Vec<u64> = Vec::with_capacity(count);
        while picked.len() < count {
            let i = rng.below(self.items);
            if !picked.contains(&i) {
                picked.push(i);
            }
        }
        picked
    }

    /// A random `data` filler.
    fn filler(&self, rng: &mut Rng) -> String {
        let mut data = String::with_capacity(self.filler_bytes);
        for _ in 0..self.filler_bytes {
            data.push(char::from(b'a' + rng.below(26) as u8));
        }
        data
    }

    /// One BatchWriteItem of [`BATCH_ITEMS`] random items.
    async fn batch_write(&self, rng: &mut Rng) -> Result<(), String> {
        let requests: Vec<String> = self
            .distinct(BATCH_ITEMS, rng)
            .into_iter()
            .map(|i| {
                let (pk, sk) = self.kv_key(i);
                let data = self.filler(rng);
                format!(
                    r#"{{"PutRequest":{{"Item":{{"PK":{{"S":"{pk}"}},"SK":{{"S":"{sk}"}},"data":{{"S":"{data}"}}}}}}}}"#
                )
            })
            .collect();
        let body = format!(
            r#"{{"RequestItems":{{"{}":[{}]}}}}"#,
            self.table,
            requests.join(",")
        );
        let answer = self.client.call("BatchWriteItem", body).await?;
        let parsed: serde_json::Value = serde_json::from_slice(&answer)
            .map_err(|e| format!("BatchWriteItem: unexpected answer: {e}"))?;
        match parsed.get("UnprocessedItems").and_then(|u| u.as_object()) {
            Some(u) if u.is_empty() => Ok(()),
            _ => Err(format!("BatchWriteItem: unprocessed items in {parsed}")),
        }
    }

    /// One BatchGetItem of [`BATCH_ITEMS`] random loaded items, which must all come back.
    async fn batch_get(&self, rng: &mut Rng) -> Result<(), String> {
        let keys: Vec<String> = self
            .distinct(BATCH_ITEMS, rng)
            .into_iter()
            .map(|i| {
                let (pk, sk) = self.kv_key(i);
                format!(r#"{{"PK":{{"S":"{pk}"}},"SK":{{"S":"{sk}"}}}}"#)
            })
            .collect();
        let want = keys.len();
        let body = format!(
            r#"{{"RequestItems":{{"{}":{{"Keys":[{}]}}}}}}"#,
            self.table,
            keys.join(",")
        );
        let answer = self.client.call("BatchGetItem", body).await?;
        let parsed: serde_json::Value = serde_json::from_slice(&answer)
            .map_err(|e| format!("BatchGetItem: unexpected answer: {e}"))?;
        let got = parsed["Responses"][&self.table]
            .as_array()
            .map_or(0, Vec::len);
        if got == want {
            Ok(())
        } else {
            Err(format!("BatchGetItem: {got} of {want} items came back"))
        }
    }

    /// One TransactWriteItems of two Updates of random items.
    async fn transact(&self, rng: &mut Rng) -> Result<(), String> {
        let updates: Vec<String> = self
            .distinct(2, rng)
            .into_iter()
            .map(|i| {
                let (pk, sk) = self.kv_key(i);
                format!(
                    r#"{{"Update":{{"TableName":"{}","Key":{{"PK":{{"S":"{pk}"}},"SK":{{"S":"{sk}"}}}},"UpdateExpression":"SET n = if_not_exists(n, :z) + :one","ExpressionAttributeValues":{{":z":{{"N":"0"}},":one":{{"N":"1"}}}}}}}}"#,
                    self.table
                )
            })
            .collect();
        let body = format!(r#"{{"TransactItems":[{}]}}"#, updates.join(","));
        self.client.call("TransactWriteItems", body).await.map(drop)
    }

    /// One PutItem.
    async fn put(&self, pk: &str, sk: &str, rng: &mut Rng) -> Result<(), String> {
        let mut data = String::with_capacity(self.filler_bytes);
        for _ in 0..self.filler_bytes {
            data.push(char::from(b'a' + rng.below(26) as u8));
        }
        let body = format!(
            r#"{{"TableName":"{}","Item":{{"PK":{{"S":"{pk}"}},"SK":{{"S":"{sk}"}},"data":{{"S":"{data}"}}}}}}"#,
            self.table
        );
        self.client.call("PutItem", body).await.map(drop)
    }

    /// One GetItem of item `i`, which must exist.
    async fn get(&self, i: u64) -> Result<(), String> {
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Answer {
            item: Option<serde::de::IgnoredAny>,
        }
        let (pk, sk) = self.kv_key(i);
        let body = format!(
            r#"{{"TableName":"{}","Key":{{"PK":{{"S":"{pk}"}},"SK":{{"S":"{sk}"}}}}}}"#,
            self.table
        );
        let answer = self.client.call("GetItem", body).await?;
        let parsed: Answer = serde_json::from_slice(&answer)
            .map_err(|e| format!("GetItem: unexpected answer: {e}"))?;
        match parsed.item {
            Some(_) => Ok(()),
            None => Err(format!("GetItem: item {pk}/{sk} not found")),
        }
    }

    /// One Query of partition `p`'s newest [`QUERY_LIMIT`] items.
    async fn query(&self, p: u64) -> Result<(), String> {
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Answer {
            count: usize,
            items: Vec<Item>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Item {
            #[serde(rename = "SK")]
            sk: StringValue,
        }
        #[derive(Deserialize)]
        struct StringValue {
            #[serde(rename = "S")]
            s: String,
        }
        let (pk, _) = query_key(p, 0);
        let body = format!(
            r#"{{"TableName":"{}","KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{{":p":{{"S":"{pk}"}}}},"ScanIndexForward":false,"Limit":{QUERY_LIMIT}}}"#,
            self.table
        );
        let answer = self.client.call("Query", body).await?;
        let parsed: Answer = serde_json::from_slice(&answer)
            .map_err(|e| format!("Query: unexpected answer: {e}"))?;
        let want = QUERY_LIMIT.min(self.partition_items as usize);
        let (_, newest) = query_key(p, self.partition_items.saturating_sub(1));
        if parsed.count != want || parsed.items.len() != want {
            return Err(format!(
                "Query: {pk} gave {} items (Count {}), not {want}",
                parsed.items.len(),
                parsed.count
            ));
        }
        match parsed.items.first() {
            Some(first) if first.sk.s != newest => Err(format!(
                "Query: {pk}'s first item is {}, not the newest {newest}",
                first.sk.s
            )),
            _ => Ok(()),
        }
    }
}

/// The key of query partition `p`'s item `j`.
fn query_key(p: u64, j: u64) -> (String, String) {
    (format!("q#{p:06}"), format!("{j:08}"))
}

/// One workload's request, for the load loops.
#[derive(Debug)]
pub struct Request {
    bench: Arc<Bench>,
    workload: Workload,
}

impl Request {
    /// `workload`'s request against `bench`.
    pub fn new(bench: Arc<Bench>, workload: Workload) -> Arc<Request> {
        Arc::new(Request { bench, workload })
    }
}

impl Operation for Request {
    async fn run(&self, rng: &mut Rng) -> Result<(), String> {
        let bench = &self.bench;
        match self.workload {
            Workload::Put => {
                let (pk, sk) = bench.kv_key(rng.below(bench.items));
                bench.put(&pk, &sk, rng).await
            }
            Workload::Get => bench.get(rng.below(bench.items)).await,
            Workload::Query => bench.query(rng.below(bench.query_partitions)).await,
            Workload::BatchWrite => bench.batch_write(rng).await,
            Workload::BatchGet => bench.batch_get(rng).await,
            Workload::Transact => bench.transact(rng).await,
        }
    }
}
