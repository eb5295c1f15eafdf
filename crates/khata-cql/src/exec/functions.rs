//! Native functions usable as terms: `now()`, `uuid()`, `currentTimestamp()` and friends, the
//! time conversions (`toTimestamp`, `toDate`, `toUnixTimestamp`, and the deprecated `dateOf`
//! and `unixTimestampOf`) of their results, the blob conversions (`textAsBlob('a')`,
//! `blobAsInt(?)`) and `fromJson`.

use khata_types::schema::CqlType;

use super::Run;
use crate::language::ast::{Literal, Term};
use crate::value::{CqlValue, LiteralError, type_name, value_compatible};

/// The smallest (or largest) timeuuid of a millisecond, as Cassandra's `minTimeuuid` and
/// `maxTimeuuid` make them: the time's 100 ns units at the start (end) of the millisecond,
/// and the clock sequence and node bytes Cassandra's `TimeUUIDType` orders first (last).
pub(super) fn bounding_timeuuid(millis: i64, max: bool) -> uuid::Uuid {
    const UUID_EPOCH_OFFSET: i64 = 0x01B2_1DD2_1381_4000;
    let ticks =
        (millis.wrapping_mul(10_000) + UUID_EPOCH_OFFSET + if max { 9_999 } else { 0 }) as u64;
    let time_low = (ticks & 0xFFFF_FFFF) as u32;
    let time_mid = ((ticks >> 32) & 0xFFFF) as u16;
    let time_hi = ((ticks >> 48) & 0x0FFF) as u16 | 0x1000;
    let mut bytes = [0u8; 16];
    bytes[0..4].copy_from_slice(&time_low.to_be_bytes());
    bytes[4..6].copy_from_slice(&time_mid.to_be_bytes());
    bytes[6..8].copy_from_slice(&time_hi.to_be_bytes());
    let low: u64 = if max {
        0x7f7f_7f7f_7f7f_7f7f
    } else {
        0x8080_8080_8080_8080
    };
    bytes[8..16].copy_from_slice(&low.to_be_bytes());
    uuid::Uuid::from_bytes(bytes)
}

/// Milliseconds of a version-1 UUID's time.
pub(crate) fn uuid_millis(u: &uuid::Uuid) -> Option<i64> {
    let (secs, nanos) = u.get_timestamp()?.to_unix();
    Some(secs as i64 * 1000 + i64::from(nanos / 1_000_000))
}

/// The `date` (days, 2^31 = the epoch) of a time in milliseconds.
pub(crate) fn days(millis: i64) -> u32 {
    (millis.div_euclid(86_400_000) + (1i64 << 31)) as u32
}

/// The time in milliseconds at the start of a `date`.
pub(crate) fn date_millis(date: u32) -> i64 {
    (i64::from(date) - (1i64 << 31)) * 86_400_000
}

/// A native function's name as khata dispatches on it: lower case, with the snake_case names
/// Cassandra 5.0 added (`to_timestamp`, `current_timeuuid`, `int_as_blob`, `blob_as_int`,
/// `from_json`, ...) read as the names Cassandra 4 has for the same functions.
pub(crate) fn native_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let legacy = match lower.as_str() {
        "to_timestamp" => "totimestamp",
        "to_date" => "todate",
        "to_unix_timestamp" => "tounixtimestamp",
        "current_timestamp" => "currenttimestamp",
        "current_date" => "currentdate",
        "current_time" => "currenttime",
        "current_timeuuid" => "currenttimeuuid",
        "min_timeuuid" => "mintimeuuid",
        "max_timeuuid" => "maxtimeuuid",
        "to_json" => "tojson",
        "from_json" => "fromjson",
        other => {
            if let Some(ty) = other.strip_suffix("_as_blob")
                && super::selector::native(ty).is_some()
            {
                return format!("{ty}asblob");
            }
            if let Some(ty) = other.strip_prefix("blob_as_")
                && super::selector::native(ty).is_some()
            {
                return format!("blobas{ty}");
            }
            return lower;
        }
    };
    legacy.to_string()
}

/// The value of a function call, before it is fitted to the receiver's type.
fn call(run: &Run<'_>, name: &str, args: &[Term]) -> Result<CqlValue, LiteralError> {
    let now_millis = run.now_micros / 1000;
    let arg = |i: usize| -> Result<CqlValue, LiteralError> {
        match args.get(i) {
            Some(Term::FunctionCall { name, args }) => {
                let lower = native_name(&name.name.0);
                match blob_conversion(&lower) {
                    // `toDate(blobAsTimestamp(0x...))`.
                    Some((parameter, result)) => {
                        blob_convert(run, &lower, args, &parameter, &result)?.ok_or_else(|| {
                            LiteralError::InvalidLiteral(format!(
                                "khata evaluates {name}() only on a value, not null"
                            ))
                        })
                    }
                    None => call(run, &lower, args),
                }
            }
            Some(other) => Err(LiteralError::InvalidLiteral(format!(
                "khata evaluates only function calls as arguments here, not {other}"
            ))),
            None => Err(LiteralError::InvalidLiteral(format!(
                "{name} needs an argument"
            ))),
        }
    };
    let time_of = |v: CqlValue| -> Result<i64, LiteralError> {
        match v {
            CqlValue::Timeuuid(u) => uuid_millis(&u)
                .ok_or_else(|| LiteralError::InvalidLiteral("not a time-based uuid".into())),
            CqlValue::Timestamp(ms) => Ok(ms),
            CqlValue::Date(d) => Ok((i64::from(d) - (1i64 << 31)) * 86_400_000),
            other => Err(LiteralError::InvalidLiteral(format!(
                "Invalid argument {other:?} for a time conversion"
            ))),
        }
    };
    Ok(match (name, args.len()) {
        ("now" | "currenttimeuuid", 0) => CqlValue::Timeuuid(run.coordinator.timeuuid()),
        ("uuid", 0) => CqlValue::Uuid(run.coordinator.random_uuid()),
        ("currenttimestamp", 0) => CqlValue::Timestamp(now_millis),
        ("currentdate", 0) => CqlValue::Date(days(now_millis)),
        ("currenttime", 0) => CqlValue::Time(now_millis.rem_euclid(86_400_000) * 1_000_000),
        ("totimestamp", 1) => CqlValue::Timestamp(time_of(arg(0)?)?),
        ("todate", 1) => CqlValue::Date(days(time_of(arg(0)?)?)),
        ("tounixtimestamp", 1) => CqlValue::Bigint(time_of(arg(0)?)?),
        // Cassandra 4.1's deprecated `dateOf` and `unixTimestampOf` take a timeuuid only.
        ("dateof" | "unixtimestampof", 1) => {
            let millis = match arg(0)? {
                v @ CqlValue::Timeuuid(_) => time_of(v)?,
                _ => {
                    return Err(LiteralError::InvalidLiteral(format!(
                        "Type error: {} cannot be passed as argument 0 of function system.{name} \
                         of type timeuuid",
                        args[0]
                    )));
                }
            };
            if name == "dateof" {
                CqlValue::Timestamp(millis)
            } else {
                CqlValue::Bigint(millis)
            }
        }
        ("mintimeuuid" | "maxtimeuuid", 1) => {
            let millis = match &args[0] {
                Term::FunctionCall { .. } => time_of(arg(0)?)?,
                Term::Marker(m) => match run.values.get(m.index) {
                    Some(crate::frame::Value::Set(bytes)) => {
                        match CqlValue::deserialize(&CqlType::Timestamp, bytes) {
                            Ok(CqlValue::Timestamp(ms)) => ms,
                            _ => {
                                return Err(LiteralError::InvalidLiteral(format!(
                                    "{name}() takes a timestamp"
                                )));
                            }
                        }
                    }
                    _ => {
                        return Err(LiteralError::InvalidLiteral(format!(
                            "Invalid null or unset value for the argument of {name}()"
                        )));
                    }
                },
                other => {
                    match crate::value::from_term(other, name, &CqlType::Timestamp, now_millis)? {
                        Some(CqlValue::Timestamp(ms)) => ms,
                        _ => {
                            return Err(LiteralError::InvalidLiteral(format!(
                                "{name}() takes a timestamp"
                            )));
                        }
                    }
                }
            };
            CqlValue::Timeuuid(bounding_timeuuid(millis, name == "maxtimeuuid"))
        }
        _ => {
            return Err(LiteralError::InvalidLiteral(format!(
                "Unknown function {name} called with {} arguments",
                args.len()
            )));
        }
    })
}

/// `fromJson('...')` (or `fromJson(?)` with the text bound): the JSON read as the receiver's
/// type, as `INSERT JSON` reads a column's value.
fn from_json_arg(
    run: &Run<'_>,
    args: &[Term],
    receiver: &str,
    ty: &CqlType,
) -> Result<Option<CqlValue>, LiteralError> {
    let text = match args {
        [Term::Literal(Literal::String(s))] => s.clone(),
        // `fromJson(null)`: null, as a bound null is (FromJsonFct returns null for null).
        [Term::Literal(Literal::Null)] => return Ok(None),
        [Term::Marker(m)] => match run.values.get(m.index) {
            Some(crate::frame::Value::Set(bytes)) => String::from_utf8(bytes.to_vec())
                .map_err(|_| LiteralError::InvalidLiteral("fromJson() takes text".into()))?,
            _ => return Ok(None),
        },
        [other] => {
            return Err(LiteralError::InvalidLiteral(format!(
                "fromJson() takes a string literal or a bind marker, not {other}"
            )));
        }
        _ => {
            return Err(LiteralError::InvalidLiteral(format!(
                "Invalid number of arguments in call to function system.fromjson: 1 required but {} provided",
                args.len()
            )));
        }
    };
    crate::value::json::from_json_text(ty, &text, receiver, run.now_micros / 1000)
}

/// Evaluate a non-literal term (a function call) for a receiver of type `ty`.
pub(crate) fn evaluate(
    run: &Run<'_>,
    term: &Term,
    receiver: &str,
    ty: &CqlType,
) -> Result<Option<CqlValue>, LiteralError> {
    let Term::FunctionCall { name, args } = term else {
        return Err(LiteralError::NotALiteral(term.to_string()));
    };
    let lower = native_name(&name.name.0);
    if lower == "fromjson" {
        return from_json_arg(run, args, receiver, ty);
    }
    if lower == "tojson" {
        return Err(LiteralError::InvalidLiteral(
            "toJson() may only be used within the selection clause of SELECT statements".into(),
        ));
    }
    if super::aggregate::AggKind::from_name(&lower).is_some() {
        // FunctionCall.Raw.prepare's words (sic), in WHERE and in values alike.
        return Err(LiteralError::InvalidLiteral(
            "Aggregation function are not supported in the where clause".into(),
        ));
    }
    let (value, result_ty) = match blob_conversion(&lower) {
        Some((parameter, result)) => match blob_convert(run, &lower, args, &parameter, &result)? {
            Some(value) => (value, result),
            None => return Ok(None),
        },
        None => {
            let value = call(run, &lower, args)?;
            let result = result_type(&value);
            (value, result)
        }
    };
    if result_ty != *ty && value_compatible(ty, &result_ty) {
        // The receiver reads the result's bytes as its own value.
        let bytes = value.to_bytes(&result_ty);
        return CqlValue::deserialize(ty, &bytes).map(Some).map_err(|e| {
            LiteralError::InvalidLiteral(format!(
                "Invalid value of function system.{lower} for {receiver}: {e}"
            ))
        });
    }
    let fits = match (&value, ty) {
        (CqlValue::Empty, ty) => result_ty == *ty,
        (v, ty) => v.conforms_to(ty),
    };
    if !fits {
        // FunctionCall.Raw.prepare's words.
        return Err(LiteralError::InvalidLiteral(format!(
            "Type error: cannot assign result of function system.{lower} (type {}) to {receiver} \
             (type {})",
            type_name(&result_ty),
            type_name(ty)
        )));
    }
    Ok(Some(value))
}

/// The type of what [`call`] returns.
fn result_type(value: &CqlValue) -> CqlType {
    match value {
        CqlValue::Timeuuid(_) => CqlType::Timeuuid,
        CqlValue::Uuid(_) => CqlType::Uuid,
        CqlValue::Timestamp(_) => CqlType::Timestamp,
        CqlValue::Date(_) => CqlType::Date,
        CqlValue::Time(_) => CqlType::Time,
        _ => CqlType::Bigint,
    }
}

/// `<type>AsBlob` and `blobAs<type>` (Cassandra's `BytesConversionFcts`, one for each native
/// type but `blob`): the parameter's type and the result's.
pub(super) fn blob_conversion(name: &str) -> Option<(CqlType, CqlType)> {
    let not_blob = |ty: CqlType| (ty != CqlType::Blob).then_some(ty);
    if let Some(ty) = name
        .strip_suffix("asblob")
        .and_then(super::selector::native)
        .and_then(not_blob)
    {
        return Some((ty, CqlType::Blob));
    }
    name.strip_prefix("blobas")
        .and_then(super::selector::native)
        .and_then(not_blob)
        .map(|ty| (CqlType::Blob, ty))
}

/// A blob conversion's value: its argument (a literal, a bind marker named
/// `arg0(system.textasblob)` as Cassandra names it, or another function) read as `parameter`,
/// and its bytes as `result`, which a `blobAs<type>` checks (`None`: null).
fn blob_convert(
    run: &Run<'_>,
    name: &str,
    args: &[Term],
    parameter: &CqlType,
    result: &CqlType,
) -> Result<Option<CqlValue>, LiteralError> {
    let [arg] = args else {
        return Err(LiteralError::InvalidLiteral(format!(
            "Invalid number of arguments in call to function system.{name}: 1 required but {} \
             provided",
            args.len()
        )));
    };
    let value = super::bind::term_value(run, arg, &format!("arg0(system.{name})"), parameter)
        .map_err(|e| match e {
            // Cassandra's `FunctionCall.bindAndGet`.
            LiteralError::Unset(_) => LiteralError::InvalidLiteral(format!(
                "Invalid unset value for argument in call to function {name}"
            )),
            e => e,
        })?;
    let Some(value) = value else {
        return Ok(None);
    };
    let bytes = value.to_bytes(parameter);
    CqlValue::deserialize(result, &bytes).map(Some).map_err(|_| {
        LiteralError::InvalidLiteral(format!(
            "In call to function system.{name}, value 0x{} is not a valid binary representation \
             for type {}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            type_name(result)
        ))
    })
}
