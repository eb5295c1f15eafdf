//! Computed selectors: the scalar functions and field selections a SELECT evaluates per row,
//! nested as the query writes them (`system.blobasint(system.intasblob(v))`,
//! `toTimestamp(now())`, `addr.street`, `toJson(m)`).
//!
//! The plain shapes (a column, `WRITETIME`, `TTL`, aggregates, `token()`, `CAST` and element
//! selection of a column) keep their own outputs in `select.rs`; anything else that is a function
//! call or a field selection compiles here into a [`Computed`] tree with its result type, checked
//! against the argument types once per statement as Cassandra checks them.

use bytes::Bytes;
use khata_types::schema::{ColumnDef, CqlType, TableDef};

use khata_coordinator::Coordinator;

use super::error::ExecError;
use super::functions::{date_millis, days, uuid_millis};
use crate::language::ast::Selectable;
use crate::value::CqlValue;

/// What the functions of a statement read besides the row: the statement's time and the node's
/// generators of time-based and random UUIDs.
#[derive(Clone, Copy)]
pub(super) struct Env<'a> {
    pub coordinator: &'a Coordinator,
    /// Microseconds since the epoch.
    pub now_micros: i64,
}

/// A computed selector and its result type.
#[derive(Clone, Debug)]
pub(super) struct Computed {
    node: Node,
    /// The type of the value it yields.
    pub ty: CqlType,
}

#[derive(Clone, Debug)]
enum Node {
    Column(ColumnDef),
    Call(Scalar, Vec<Computed>),
    /// Field `index` of a user type value.
    Field(Box<Computed>, usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    Now,
    Uuid,
    CurrentTimestamp,
    CurrentDate,
    CurrentTime,
    ToTimestamp,
    ToDate,
    ToUnixTimestamp,
    MinTimeuuid,
    MaxTimeuuid,
    /// `<type>AsBlob`: the value's bytes as a blob.
    AsBlob,
    /// `blobAs<type>`: a blob's bytes as a value of the type (checked).
    BlobAs,
    ToJson,
}

/// The native types by the names the blob conversion functions use.
fn native(name: &str) -> Option<CqlType> {
    Some(match name {
        "ascii" => CqlType::Ascii,
        "bigint" => CqlType::Bigint,
        "blob" => CqlType::Blob,
        "boolean" => CqlType::Boolean,
        "date" => CqlType::Date,
        "decimal" => CqlType::Decimal,
        "double" => CqlType::Double,
        "duration" => CqlType::Duration,
        "float" => CqlType::Float,
        "inet" => CqlType::Inet,
        "int" => CqlType::Int,
        "smallint" => CqlType::Smallint,
        "text" | "varchar" => CqlType::Text,
        "time" => CqlType::Time,
        "timestamp" => CqlType::Timestamp,
        "timeuuid" => CqlType::Timeuuid,
        "tinyint" => CqlType::Tinyint,
        "uuid" => CqlType::Uuid,
        "varint" => CqlType::Varint,
        _ => return None,
    })
}

fn type_text(ty: &CqlType) -> String {
    khata_types::type_text::type_text(ty)
}

/// Whether a selector is one this module computes (a function call or a field selection).
pub(super) fn handles(s: &Selectable) -> bool {
    matches!(
        s,
        Selectable::FunctionCall { .. } | Selectable::Field { .. }
    )
}

/// Compile `s` over the columns of `def`.
pub(super) fn compile(def: &TableDef, s: &Selectable) -> Result<Computed, ExecError> {
    match s {
        Selectable::Column(n) => {
            let c = def
                .column(&n.0)
                .ok_or_else(|| ExecError::invalid(format!("Undefined column name {}", n.0)))?;
            Ok(Computed {
                ty: c.ty.clone(),
                node: Node::Column(c.clone()),
            })
        }
        Selectable::Field { selectable, field } => {
            let of = compile(def, selectable)?;
            let CqlType::Udt { fields, .. } = &of.ty else {
                return Err(ExecError::invalid(format!(
                    "Invalid field selection: {selectable} of type {} is not a user type",
                    type_text(&of.ty)
                )));
            };
            let Some(index) = fields.iter().position(|(n, _)| *n == field.0) else {
                return Err(ExecError::invalid(format!(
                    "{} of type {} has no field {}",
                    selectable,
                    type_text(&of.ty),
                    field.0
                )));
            };
            Ok(Computed {
                ty: fields[index].1.clone(),
                node: Node::Field(Box::new(of), index),
            })
        }
        Selectable::FunctionCall { name, args } => {
            let lower = name.name.0.to_ascii_lowercase();
            let args = args
                .iter()
                .map(|a| compile(def, a))
                .collect::<Result<Vec<_>, _>>()?;
            let arity = |n: usize| -> Result<(), ExecError> {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(ExecError::invalid(format!(
                        "Invalid number of arguments in call to function system.{lower}: {n} required but {} provided",
                        args.len()
                    )))
                }
            };
            let argument_type = |allowed: &[CqlType], expected: &str| -> Result<(), ExecError> {
                if allowed.contains(&args[0].ty) {
                    Ok(())
                } else {
                    Err(ExecError::invalid(format!(
                        "Type error: {} cannot be passed as argument 0 of function system.{lower} of type {expected}",
                        type_text(&args[0].ty)
                    )))
                }
            };
            let times = [CqlType::Timeuuid, CqlType::Timestamp, CqlType::Date];
            let (scalar, ty) = match lower.as_str() {
                "now" | "currenttimeuuid" => (Scalar::Now, CqlType::Timeuuid),
                "uuid" => (Scalar::Uuid, CqlType::Uuid),
                "currenttimestamp" => (Scalar::CurrentTimestamp, CqlType::Timestamp),
                "currentdate" => (Scalar::CurrentDate, CqlType::Date),
                "currenttime" => (Scalar::CurrentTime, CqlType::Time),
                "totimestamp" | "dateof" => {
                    arity(1)?;
                    argument_type(&times, "timeuuid")?;
                    (Scalar::ToTimestamp, CqlType::Timestamp)
                }
                "todate" => {
                    arity(1)?;
                    argument_type(&times, "timeuuid")?;
                    (Scalar::ToDate, CqlType::Date)
                }
                "tounixtimestamp" | "unixtimestampof" => {
                    arity(1)?;
                    argument_type(&times, "timeuuid")?;
                    (Scalar::ToUnixTimestamp, CqlType::Bigint)
                }
                "mintimeuuid" | "maxtimeuuid" => {
                    arity(1)?;
                    argument_type(&[CqlType::Timestamp], "timestamp")?;
                    let f = if lower == "mintimeuuid" {
                        Scalar::MinTimeuuid
                    } else {
                        Scalar::MaxTimeuuid
                    };
                    (f, CqlType::Timeuuid)
                }
                "tojson" => {
                    arity(1)?;
                    (Scalar::ToJson, CqlType::Text)
                }
                other => {
                    if let Some(ty) = other.strip_suffix("asblob").and_then(native) {
                        arity(1)?;
                        argument_type(std::slice::from_ref(&ty), &type_text(&ty))?;
                        (Scalar::AsBlob, CqlType::Blob)
                    } else if let Some(ty) = other.strip_prefix("blobas").and_then(native) {
                        arity(1)?;
                        argument_type(&[CqlType::Blob], "blob")?;
                        (Scalar::BlobAs, ty)
                    } else {
                        return Err(ExecError::invalid(format!(
                            "Unknown function {} called with {} arguments",
                            name,
                            args.len()
                        )));
                    }
                }
            };
            if matches!(
                scalar,
                Scalar::Now
                    | Scalar::Uuid
                    | Scalar::CurrentTimestamp
                    | Scalar::CurrentDate
                    | Scalar::CurrentTime
            ) {
                arity(0)?;
            }
            Ok(Computed {
                ty,
                node: Node::Call(scalar, args),
            })
        }
        other => Err(ExecError::invalid(format!(
            "selector {other} is not supported by khata yet"
        ))),
    }
}

/// The result column name Cassandra gives a computed selector: `system.f(args)` for a function,
/// `s.field` for a field.
pub(super) fn column_name(s: &Selectable) -> String {
    match s {
        Selectable::Column(n) => n.0.clone(),
        Selectable::Field { selectable, field } => {
            format!("{}.{}", column_name(selectable), field.0)
        }
        Selectable::FunctionCall { name, args } => {
            let args: Vec<String> = args.iter().map(column_name).collect();
            format!(
                "system.{}({})",
                name.name.0.to_ascii_lowercase(),
                args.join(", ")
            )
        }
        other => other.to_string(),
    }
}

impl Computed {
    /// The value for one row; `column` gives a column's value in it (`None` for null).
    pub(super) fn eval(
        &self,
        env: Env<'_>,
        column: &dyn Fn(&ColumnDef) -> Option<Bytes>,
    ) -> Result<Option<Bytes>, ExecError> {
        Ok(match &self.node {
            Node::Column(c) => column(c),
            Node::Field(of, index) => match of.eval(env, column)? {
                Some(value) => udt_field(&value, *index),
                None => None,
            },
            Node::Call(f, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(env, column)?);
                }
                call(env, *f, args, values, &self.ty)?
            }
        })
    }
}

/// Field `index` of a serialized user type value (`[int length][bytes]` per field; a value
/// written before fields were added has fewer).
fn udt_field(value: &[u8], index: usize) -> Option<Bytes> {
    let mut rest = value;
    for i in 0.. {
        let len = i32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
        rest = &rest[4..];
        let field = if len < 0 {
            None
        } else {
            let len = len as usize;
            let bytes = rest.get(..len)?;
            rest = &rest[len..];
            Some(bytes)
        };
        if i == index {
            return field.map(Bytes::copy_from_slice);
        }
    }
    None
}

fn millis_of(ty: &CqlType, value: &[u8]) -> Option<i64> {
    match ty {
        CqlType::Timeuuid => uuid_millis(&uuid::Uuid::from_slice(value).ok()?),
        CqlType::Timestamp => Some(i64::from_be_bytes(value.try_into().ok()?)),
        CqlType::Date => Some(date_millis(u32::from_be_bytes(value.try_into().ok()?))),
        _ => None,
    }
}

fn call(
    env: Env<'_>,
    f: Scalar,
    args: &[Computed],
    values: Vec<Option<Bytes>>,
    ty: &CqlType,
) -> Result<Option<Bytes>, ExecError> {
    let now_millis = env.now_micros / 1000;
    let bytes = |v: CqlValue| Some(Bytes::from(v.to_bytes(ty)));
    let first = values.into_iter().next().flatten();
    Ok(match f {
        Scalar::Now => bytes(CqlValue::Timeuuid(env.coordinator.timeuuid())),
        Scalar::Uuid => bytes(CqlValue::Uuid(env.coordinator.random_uuid())),
        Scalar::CurrentTimestamp => bytes(CqlValue::Timestamp(now_millis)),
        Scalar::CurrentDate => bytes(CqlValue::Date(days(now_millis))),
        Scalar::CurrentTime => bytes(CqlValue::Time(
            now_millis.rem_euclid(86_400_000) * 1_000_000,
        )),
        Scalar::ToTimestamp | Scalar::ToDate | Scalar::ToUnixTimestamp => {
            let Some(millis) = first.and_then(|v| millis_of(&args[0].ty, &v)) else {
                return Ok(None);
            };
            match f {
                Scalar::ToTimestamp => bytes(CqlValue::Timestamp(millis)),
                Scalar::ToDate => bytes(CqlValue::Date(days(millis))),
                _ => bytes(CqlValue::Bigint(millis)),
            }
        }
        Scalar::MinTimeuuid | Scalar::MaxTimeuuid => {
            let Some(millis) = first.and_then(|v| millis_of(&CqlType::Timestamp, &v)) else {
                return Ok(None);
            };
            let u = super::functions::bounding_timeuuid(millis, f == Scalar::MaxTimeuuid);
            bytes(CqlValue::Timeuuid(u))
        }
        Scalar::AsBlob => first,
        Scalar::BlobAs => match first {
            Some(b) => {
                if let Err(e) = CqlValue::deserialize(ty, &b) {
                    return Err(ExecError::invalid(format!(
                        "In call to function system.blobas{}, value 0x{} is not a valid binary representation for type {}: {e}",
                        type_text(ty),
                        hex(&b),
                        type_text(ty)
                    )));
                }
                Some(b)
            }
            None => None,
        },
        Scalar::ToJson => {
            let mut text = String::new();
            match first.and_then(|b| CqlValue::deserialize(&args[0].ty, &b).ok()) {
                Some(v) => crate::value::json::write_value(&args[0].ty, &v, &mut text),
                None => text.push_str("null"),
            }
            Some(Bytes::from(text))
        }
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
