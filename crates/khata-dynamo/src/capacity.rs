//! Capacity units, as DynamoDB counts them (developer guide, "Read/write capacity mode" and
//! "Managing throughput for transactions"), and the `ConsumedCapacity` an operation answers
//! when the request says `ReturnConsumedCapacity: TOTAL | INDEXES`.
//!
//! - A read unit is one strongly consistent read of up to 4 KB; an eventually consistent read
//!   costs half. GetItem, BatchGetItem and TransactGetItems round each item up to 4 KB on its
//!   own (an absent item costs what an empty one does); Query and Scan add up the sizes of every
//!   item they read (before the filter) and round the sum up once.
//! - A write unit is one write of up to 1 KB, counted on the larger of the item before and
//!   after the write (a delete on the item deleted; an absent item costs one unit).
//! - Transactions cost twice: two read units per 4 KB of a TransactGetItems Get, two write
//!   units per 1 KB of each TransactWriteItems action (a ConditionCheck is counted as a write
//!   of the item it checks, as DynamoDB does).
//!
//! - Secondary indexes consume their own units ("Provisioned throughput considerations for
//!   Global Secondary Indexes"): a write that puts an item into an index costs one write of
//!   its index entry, one that takes it out one write of the old entry, one that moves it to
//!   another index key both, one that changes only its projected attributes one write of the
//!   larger entry, and one that leaves the entry as it was nothing. An entry's size is the
//!   projected item (keys included) plus 100 bytes. A Query or Scan of an index reads its
//!   entries: the sum of their projected sizes, rounded up once, charged to the index.
//!
//! Sizes are [`Item::size_bytes`], DynamoDB's item size. khata does not throttle: the units
//! are reported, never enforced. `TOTAL` reports the sum over the table and its indexes;
//! `INDEXES` adds `Table` and `GlobalSecondaryIndexes`/`LocalSecondaryIndexes` (the indexes
//! that consumed units).

use std::collections::BTreeMap;

use serde_json::{Map as JsonMap, Value};

use crate::indexes::{IndexStatus, Indexes};
use crate::value::Item;

/// The overhead DynamoDB counts for each index entry.
pub const INDEX_ENTRY_OVERHEAD_BYTES: usize = 100;

/// Bytes per read unit.
pub const READ_UNIT_BYTES: usize = 4 * 1024;
/// Bytes per write unit.
pub const WRITE_UNIT_BYTES: usize = 1024;

/// What `ReturnConsumedCapacity` asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReturnCapacity {
    #[default]
    None,
    Total,
    Indexes,
}

impl ReturnCapacity {
    /// The request's `ReturnConsumedCapacity` (absent is `NONE`), or the message of the
    /// `ValidationException` DynamoDB answers for another value.
    pub fn of(req: &JsonMap<String, Value>) -> Result<ReturnCapacity, CapacityError> {
        match req.get("ReturnConsumedCapacity") {
            None | Some(Value::Null) => Ok(ReturnCapacity::None),
            Some(Value::String(s)) => match s.as_str() {
                "NONE" => Ok(ReturnCapacity::None),
                "TOTAL" => Ok(ReturnCapacity::Total),
                "INDEXES" => Ok(ReturnCapacity::Indexes),
                other => Err(CapacityError::Validation(format!(
                    "1 validation error detected: Value '{other}' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"
                ))),
            },
            Some(_) => Err(CapacityError::Serialization(
                "Unexpected value type in payload for ReturnConsumedCapacity".into(),
            )),
        }
    }

    /// Whether the answer carries `ConsumedCapacity`.
    pub fn wanted(self) -> bool {
        self != ReturnCapacity::None
    }
}

/// A bad `ReturnConsumedCapacity`.
#[derive(Debug)]
pub enum CapacityError {
    Validation(String),
    Serialization(String),
}

impl From<CapacityError> for crate::item_ops::OpError {
    fn from(e: CapacityError) -> Self {
        match e {
            CapacityError::Validation(m) => crate::item_ops::OpError::Validation(m),
            CapacityError::Serialization(m) => crate::item_ops::OpError::Serialization(m),
        }
    }
}

fn units(bytes: usize, unit: usize) -> u64 {
    bytes.div_ceil(unit).max(1) as u64
}

/// Read units of reading `bytes` (one item, or the sum a Query or Scan read).
pub fn read_units(bytes: usize, consistent: bool) -> f64 {
    let whole = units(bytes, READ_UNIT_BYTES) as f64;
    if consistent { whole } else { whole / 2.0 }
}

/// Read units of reading one item (absent: `None`, costing what an empty item does).
pub fn item_read_units(item: Option<&Item>, consistent: bool) -> f64 {
    read_units(item.map_or(0, Item::size_bytes), consistent)
}

/// Write units of a write that turns `old` into `new` (either may be absent).
pub fn write_units(old: Option<&Item>, new: Option<&Item>) -> f64 {
    let size = old
        .map_or(0, Item::size_bytes)
        .max(new.map_or(0, Item::size_bytes));
    units(size, WRITE_UNIT_BYTES) as f64
}

/// Read and write units of one table or index.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Units {
    pub read: f64,
    pub write: f64,
}

impl Units {
    fn add(&mut self, other: &Units) {
        self.read += other.read;
        self.write += other.write;
    }

    fn doubled(&self) -> Units {
        Units {
            read: self.read * 2.0,
            write: self.write * 2.0,
        }
    }

    fn to_json(self) -> JsonMap<String, Value> {
        let mut out = JsonMap::new();
        out.insert("CapacityUnits".into(), number(self.read + self.write));
        if self.read > 0.0 {
            out.insert("ReadCapacityUnits".into(), number(self.read));
        }
        if self.write > 0.0 {
            out.insert("WriteCapacityUnits".into(), number(self.write));
        }
        out
    }
}

/// Units consumed on one table and its secondary indexes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Consumed {
    pub read: f64,
    pub write: f64,
    /// By index name: whether it is global, and its units.
    pub indexes: BTreeMap<String, (bool, Units)>,
}

impl Consumed {
    pub fn read(units: f64) -> Consumed {
        Consumed {
            read: units,
            ..Consumed::default()
        }
    }

    pub fn write(units: f64) -> Consumed {
        Consumed {
            write: units,
            ..Consumed::default()
        }
    }

    /// Read units charged to index `name` (a Query or Scan of it), none to the table.
    pub fn index_read(name: &str, global: bool, units: f64) -> Consumed {
        let mut c = Consumed::default();
        c.indexes.insert(
            name.to_string(),
            (
                global,
                Units {
                    read: units,
                    write: 0.0,
                },
            ),
        );
        c
    }

    /// These units with the index writes of a write that turns `old` into `new`.
    pub fn with_index_writes(
        mut self,
        indexes: &Indexes,
        old: Option<&Item>,
        new: Option<&Item>,
    ) -> Consumed {
        for index in indexes.iter() {
            if index.status == IndexStatus::Deleting {
                continue;
            }
            let entry = |item: Option<&Item>| {
                let item = item?;
                let key = index.entry_key(item)?;
                Some((key, index.project(item)))
            };
            let size = |projected: &Item| projected.size_bytes() + INDEX_ENTRY_OVERHEAD_BYTES;
            let units = match (entry(old), entry(new)) {
                (None, None) => continue,
                (None, Some((_, p))) | (Some((_, p)), None) => units(size(&p), WRITE_UNIT_BYTES),
                (Some((ka, a)), Some((kb, b))) if ka != kb => {
                    units(size(&a), WRITE_UNIT_BYTES) + units(size(&b), WRITE_UNIT_BYTES)
                }
                (Some((_, a)), Some((_, b))) if a == b => continue,
                (Some((_, a)), Some((_, b))) => units(size(&a).max(size(&b)), WRITE_UNIT_BYTES),
            };
            let slot = self
                .indexes
                .entry(index.name.clone())
                .or_insert((index.global, Units::default()));
            slot.1.write += units as f64;
        }
        self
    }

    fn table_units(&self) -> Units {
        Units {
            read: self.read,
            write: self.write,
        }
    }

    /// The table's and the indexes' units together.
    pub fn total(&self) -> Units {
        let mut t = self.table_units();
        for (_, u) in self.indexes.values() {
            t.add(u);
        }
        t
    }

    pub fn add(&mut self, other: &Consumed) {
        self.read += other.read;
        self.write += other.write;
        for (name, (global, u)) in &other.indexes {
            self.indexes
                .entry(name.clone())
                .or_insert((*global, Units::default()))
                .1
                .add(u);
        }
    }

    /// Twice the units: what a transactional read or write costs.
    pub fn transactional(&self) -> Consumed {
        Consumed {
            read: self.read * 2.0,
            write: self.write * 2.0,
            indexes: self
                .indexes
                .iter()
                .map(|(n, (g, u))| (n.clone(), (*g, u.doubled())))
                .collect(),
        }
    }

    /// The `ConsumedCapacity` structure of `table`, in the shape `mode` asks for.
    pub fn to_json(&self, table: &str, mode: ReturnCapacity) -> Value {
        let mut out = JsonMap::new();
        out.insert("TableName".into(), Value::String(table.to_string()));
        out.extend(self.total().to_json());
        if mode == ReturnCapacity::Indexes {
            out.insert("Table".into(), Value::Object(self.table_units().to_json()));
            for (global, member) in [
                (true, "GlobalSecondaryIndexes"),
                (false, "LocalSecondaryIndexes"),
            ] {
                let of_kind: JsonMap<String, Value> = self
                    .indexes
                    .iter()
                    .filter(|(_, (g, _))| *g == global)
                    .map(|(n, (_, u))| (n.clone(), Value::Object(u.to_json())))
                    .collect();
                if !of_kind.is_empty() {
                    out.insert(member.into(), Value::Object(of_kind));
                }
            }
        }
        Value::Object(out)
    }
}

/// A JSON number for units: whole units as integers' floats (1.0), halves as 0.5.
fn number(units: f64) -> Value {
    serde_json::Number::from_f64(units).map_or(Value::Null, Value::Number)
}

/// Units per table, for the operations that touch several (batches, transactions): their
/// answer is a list of `ConsumedCapacity`, one per table, in table-name order.
#[derive(Debug, Default)]
pub struct PerTable(BTreeMap<String, Consumed>);

impl PerTable {
    pub fn add(&mut self, table: &str, consumed: &Consumed) {
        self.0.entry(table.to_string()).or_default().add(consumed);
    }

    /// The `ConsumedCapacity` list.
    pub fn to_json(&self, mode: ReturnCapacity) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|(table, c)| c.to_json(table, mode))
                .collect(),
        )
    }
}

/// Put `ConsumedCapacity` (one table) into an answer being printed, when the request asked
/// for it.
pub fn attach_body(
    answer: &mut crate::reply::Body,
    table: &str,
    consumed: &Consumed,
    mode: ReturnCapacity,
) {
    if mode.wanted() {
        answer.value("ConsumedCapacity", &consumed.to_json(table, mode));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item_of_size(bytes: usize) -> Item {
        // "p" (1 byte of name) and a string of the rest.
        Item::from_json(&json!({"p": {"S": "x".repeat(bytes - 1)}})).unwrap()
    }

    #[test]
    fn reads_round_each_item_up_to_4kb_and_halve_when_eventual() {
        assert_eq!(item_read_units(None, true), 1.0);
        assert_eq!(item_read_units(None, false), 0.5);
        assert_eq!(item_read_units(Some(&item_of_size(4096)), true), 1.0);
        assert_eq!(item_read_units(Some(&item_of_size(4097)), true), 2.0);
        assert_eq!(item_read_units(Some(&item_of_size(4097)), false), 1.0);
        // A Query sums first: three 2 KB items are 6 KB, two units, not three.
        assert_eq!(read_units(3 * 2048, true), 2.0);
    }

    #[test]
    fn writes_count_the_larger_of_old_and_new_per_kb() {
        assert_eq!(write_units(None, None), 1.0);
        assert_eq!(write_units(None, Some(&item_of_size(1024))), 1.0);
        assert_eq!(write_units(None, Some(&item_of_size(1025))), 2.0);
        assert_eq!(
            write_units(Some(&item_of_size(2049)), Some(&item_of_size(10))),
            3.0
        );
        assert_eq!(Consumed::write(3.0).transactional().write, 6.0);
    }

    #[test]
    fn the_shapes_of_total_and_indexes() {
        let c = Consumed::read(0.5);
        assert_eq!(
            c.to_json("T", ReturnCapacity::Total),
            json!({"TableName": "T", "CapacityUnits": 0.5, "ReadCapacityUnits": 0.5})
        );
        assert_eq!(
            Consumed::write(2.0).to_json("T", ReturnCapacity::Indexes),
            json!({"TableName": "T", "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0,
                   "Table": {"CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}})
        );
        let req: JsonMap<String, Value> =
            serde_json::from_value(json!({"ReturnConsumedCapacity": "SOME"})).unwrap();
        match ReturnCapacity::of(&req) {
            Err(CapacityError::Validation(m)) => assert!(m.contains("[INDEXES, TOTAL, NONE]")),
            other => panic!("{other:?}"),
        }
    }
}
