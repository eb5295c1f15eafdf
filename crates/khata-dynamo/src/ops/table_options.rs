//! The table options khata keeps and reports but does not act on, as it keeps the CQL table
//! options Cassandra has and khata does not use: `TableClass` (DynamoDB's cheaper storage for
//! rarely read tables; khata stores every table alike), `WarmThroughput` (the throughput
//! DynamoDB prepares a table's partitions for; khata has no throughput caps to warm) and
//! `OnDemandThroughput` (an on-demand table's maximum request units, which khata does not
//! throttle to; reported as given, -1 for a unit not given, as DynamoDB reports no limit).
//!
//! Both are checked as DynamoDB checks them, kept in the table's metadata
//! ([`crate::tables::TableMeta`]) and reported by CreateTable, UpdateTable and DescribeTable:
//! `TableClassSummary` when a class was given (DynamoDB reports none for a table that never
//! had one), with `LastUpdateDateTime` once UpdateTable changed it; `WarmThroughput` always,
//! `ACTIVE` at once (nothing is warmed, so nothing is pending), with DynamoDB's baseline for a
//! table that never configured one: 12,000 read and 4,000 write units per second for an
//! on-demand table (Alternator's test_warm_throughput.py, checked against DynamoDB), the
//! provisioned units for a provisioned one. A warm throughput below the baseline is refused,
//! and so is lowering one that was configured; a request naming one unit keeps the other.

use serde_json::{Value, json};

use super::input::{self, Object};
use crate::error::{DynamoError, Result};
use crate::tables::{OnDemandThroughputMeta, TableClassMeta, TableMeta, WarmThroughputMeta};

/// DynamoDB's table classes.
pub const TABLE_CLASSES: &[&str] = &["STANDARD", "STANDARD_INFREQUENT_ACCESS"];

/// The warm throughput every on-demand table has, and the least one may be configured with.
pub const ON_DEMAND_WARM_READ_UNITS: i64 = 12_000;
/// See [`ON_DEMAND_WARM_READ_UNITS`].
pub const ON_DEMAND_WARM_WRITE_UNITS: i64 = 4_000;

/// What a CreateTable or UpdateTable asks of these options.
#[derive(Debug, Default, Clone, Copy)]
pub struct Requested<'a> {
    table_class: Option<&'a str>,
    /// Read and write units per second, either absent.
    warm: Option<(Option<i64>, Option<i64>)>,
    /// Maximum read and write request units, either absent.
    on_demand: Option<(Option<i64>, Option<i64>)>,
}

impl Requested<'_> {
    /// Whether the request asks for anything (an UpdateTable with only these is a change).
    pub fn any(&self) -> bool {
        self.table_class.is_some() || self.warm.is_some() || self.on_demand.is_some()
    }
}

/// The options of a request, their members' JSON types checked (DynamoDB refuses a table
/// class outside its set with a message of its own, not as a shape violation: [`apply`]).
pub fn requested(body: &Object) -> Result<Requested<'_>> {
    let table_class = input::string(body, "TableClass")?;
    let warm = match input::object(body, "WarmThroughput")? {
        None => None,
        Some(w) => Some((
            input::integer(w, "ReadUnitsPerSecond")?,
            input::integer(w, "WriteUnitsPerSecond")?,
        )),
    };
    let on_demand = match input::object(body, "OnDemandThroughput")? {
        None => None,
        Some(o) => Some((
            input::integer(o, "MaxReadRequestUnits")?,
            input::integer(o, "MaxWriteRequestUnits")?,
        )),
    };
    Ok(Requested {
        table_class,
        warm,
        on_demand,
    })
}

/// The warm throughput a table has without one configured.
fn baseline(meta: &TableMeta) -> WarmThroughputMeta {
    if meta.billing_mode == "PROVISIONED" {
        WarmThroughputMeta {
            read_units_per_second: meta.provisioned_throughput.read_capacity_units,
            write_units_per_second: meta.provisioned_throughput.write_capacity_units,
        }
    } else {
        WarmThroughputMeta {
            read_units_per_second: ON_DEMAND_WARM_READ_UNITS,
            write_units_per_second: ON_DEMAND_WARM_WRITE_UNITS,
        }
    }
}

fn invalid(message: String) -> DynamoError {
    DynamoError::validation(format!(
        "One or more parameter values were invalid: {message}"
    ))
}

/// Applies the request to `meta` (the table's metadata as it will be: billing mode and
/// throughput already changed) at `now_micros`; `created` when CreateTable asks.
pub fn apply(
    meta: &mut TableMeta,
    requested: &Requested<'_>,
    now_micros: i64,
    created: bool,
) -> Result<()> {
    if let Some((read, write)) = requested.warm {
        let floor = baseline(meta);
        let current = meta.warm_throughput.unwrap_or(floor);
        let units = [
            (
                "ReadUnitsPerSecond",
                read,
                floor.read_units_per_second,
                current.read_units_per_second,
            ),
            (
                "WriteUnitsPerSecond",
                write,
                floor.write_units_per_second,
                current.write_units_per_second,
            ),
        ];
        for (unit, wanted, least, now) in units {
            let Some(wanted) = wanted else { continue };
            if wanted < least {
                return Err(invalid(format!(
                    "{unit} for WarmThroughput is lower than the minimum of {least}"
                )));
            }
            if wanted < now {
                return Err(invalid(format!(
                    "Requested {unit} {wanted} is lower than current WarmThroughput {unit} {now}: a warm throughput cannot be decreased"
                )));
            }
        }
        meta.warm_throughput = Some(WarmThroughputMeta {
            read_units_per_second: read.unwrap_or(current.read_units_per_second),
            write_units_per_second: write.unwrap_or(current.write_units_per_second),
        });
    }
    if let Some((read, write)) = requested.on_demand {
        let current = meta.on_demand_throughput.unwrap_or(OnDemandThroughputMeta {
            max_read_request_units: -1,
            max_write_request_units: -1,
        });
        meta.on_demand_throughput = Some(OnDemandThroughputMeta {
            max_read_request_units: read.unwrap_or(current.max_read_request_units),
            max_write_request_units: write.unwrap_or(current.max_write_request_units),
        });
    }
    if let Some(class) = requested.table_class {
        if !TABLE_CLASSES.contains(&class) {
            return Err(DynamoError::validation(format!(
                "Invalid table-class parameter provided. Please try again with a valid table-class value: [{}].",
                TABLE_CLASSES.join(", ")
            )));
        }
        meta.table_class = Some(TableClassMeta {
            table_class: class.to_string(),
            last_update_micros: (!created).then_some(now_micros),
        });
    }
    Ok(())
}

/// Adds `TableClassSummary`, `WarmThroughput` and `OnDemandThroughput` to a table's
/// description.
pub fn describe(meta: &TableMeta, description: &mut Value) {
    if let Some(class) = &meta.table_class {
        let mut summary = json!({ "TableClass": class.table_class });
        if let Some(at) = class.last_update_micros {
            summary["LastUpdateDateTime"] = json!(super::describe::epoch_seconds(at));
        }
        description["TableClassSummary"] = summary;
    }
    let warm = meta.warm_throughput.unwrap_or_else(|| baseline(meta));
    description["WarmThroughput"] = json!({
        "ReadUnitsPerSecond": warm.read_units_per_second,
        "WriteUnitsPerSecond": warm.write_units_per_second,
        "Status": "ACTIVE",
    });
    if let Some(o) = meta.on_demand_throughput {
        description["OnDemandThroughput"] = json!({
            "MaxReadRequestUnits": o.max_read_request_units,
            "MaxWriteRequestUnits": o.max_write_request_units,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> TableMeta {
        serde_json::from_value(json!({
            "FormatVersion": 1, "TableName": "t", "KeySchema": [], "AttributeDefinitions": [],
            "BillingMode": "PAY_PER_REQUEST",
            "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
            "CreationMicros": 0
        }))
        .unwrap()
    }

    fn object(body: Value) -> Object {
        body.as_object().unwrap().clone()
    }

    fn request(body: &Object) -> std::result::Result<Requested<'_>, String> {
        requested(body).map_err(|e| e.message.unwrap_or_default())
    }

    fn described(m: &TableMeta) -> Value {
        let mut d = json!({});
        describe(m, &mut d);
        d
    }

    #[test]
    fn table_classes() {
        let mut m = meta();
        assert!(described(&m).get("TableClassSummary").is_none());
        let body = object(json!({"TableClass": "STANDARD_INFREQUENT_ACCESS"}));
        let r = request(&body).unwrap();
        apply(&mut m, &r, 5, true).unwrap();
        assert_eq!(
            described(&m)["TableClassSummary"],
            json!({"TableClass": "STANDARD_INFREQUENT_ACCESS"})
        );
        let body = object(json!({"TableClass": "STANDARD"}));
        apply(&mut m, &request(&body).unwrap(), 2_000_000, false).unwrap();
        assert_eq!(
            described(&m)["TableClassSummary"],
            json!({"TableClass": "STANDARD", "LastUpdateDateTime": 2.0})
        );
        let body = object(json!({"TableClass": "standard"}));
        assert_eq!(
            apply(&mut m, &request(&body).unwrap(), 0, false)
                .unwrap_err()
                .message
                .unwrap(),
            "Invalid table-class parameter provided. Please try again with a valid table-class value: [STANDARD, STANDARD_INFREQUENT_ACCESS]."
        );
    }

    #[test]
    fn warm_throughput() {
        let mut m = meta();
        assert_eq!(
            described(&m)["WarmThroughput"],
            json!({"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"})
        );
        let body = object(json!({"WarmThroughput": {"WriteUnitsPerSecond": 4080}}));
        let r = request(&body).unwrap();
        apply(&mut m, &r, 0, true).unwrap();
        assert_eq!(
            described(&m)["WarmThroughput"],
            json!({"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4080, "Status": "ACTIVE"})
        );
        let body = object(json!({"WarmThroughput": {"ReadUnitsPerSecond": 11999}}));
        let low = request(&body).unwrap();
        assert_eq!(
            apply(&mut m, &low, 0, false).unwrap_err().message.unwrap(),
            "One or more parameter values were invalid: ReadUnitsPerSecond for WarmThroughput is lower than the minimum of 12000"
        );
        let body = object(json!({"WarmThroughput": {"WriteUnitsPerSecond": 4040}}));
        let lower = request(&body).unwrap();
        assert!(
            apply(&mut m, &lower, 0, false)
                .unwrap_err()
                .message
                .unwrap()
                .contains("WriteUnitsPerSecond 4040 is lower than current WarmThroughput")
        );
        // A provisioned table's baseline is its provisioned units.
        let mut p = meta();
        p.billing_mode = "PROVISIONED".into();
        p.provisioned_throughput.read_capacity_units = 5;
        p.provisioned_throughput.write_capacity_units = 7;
        assert_eq!(
            described(&p)["WarmThroughput"],
            json!({"ReadUnitsPerSecond": 5, "WriteUnitsPerSecond": 7, "Status": "ACTIVE"})
        );
    }
}
