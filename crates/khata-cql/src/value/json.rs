//! CQL values as JSON, for `SELECT JSON` and `INSERT JSON`, following Cassandra's
//! `toJSONString` / `fromJSONObject` of each type.
//!
//! Out ([`write_value`]): numbers as JSON numbers (floats as Java writes them, `NaN` and
//! `Infinity` as `null`, as JSON has none), text, uuids, inets (as Java's `getHostAddress`), dates, times, durations and timestamps (`"2024-01-31 10:00:00.000Z"`) as strings,
//! blobs as `"0x..."`, lists, sets and tuples as arrays, maps as objects whose keys are the JSON
//! of the key as a string (a string key as is), UDTs as objects (case-sensitive field names
//! quoted). In: the same, and, as Cassandra accepts,
//! numbers and booleans given as strings, timestamps as numbers of milliseconds.

use khata_types::java_text;
use khata_types::schema::CqlType;
use serde_json::{Map, Number, Value as Json};

use super::{CqlValue, LiteralError, duration, from_term, numeric, temporal};
use crate::language::ast::{Literal, Name, Term};

fn float_json(f: f64) -> Json {
    Number::from_f64(f).map_or_else(
        || Json::String(f.to_string().replace("inf", "Infinity")),
        Json::Number,
    )
}

/// JSON text as Cassandra writes it: `", "` between items and `": "` after keys.
pub fn write_json(v: &Json, out: &mut String) {
    match v {
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Json::String(k.clone()).to_string());
                out.push_str(": ");
                write_json(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A value as JSON text, written as Cassandra writes it: a user type's fields in their
/// declared order and a map's entries in the map's order (a [`Json`] object would sort them by
/// name).
pub fn write_value(ty: &CqlType, v: &CqlValue, out: &mut String) {
    match v {
        CqlValue::List(items) | CqlValue::Set(items) | CqlValue::Vector(items) => {
            let element = match ty {
                CqlType::List { element, .. }
                | CqlType::Set { element, .. }
                | CqlType::Vector { element, .. } => element.as_ref(),
                other => other,
            };
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(element, item, out);
            }
            out.push(']');
        }
        CqlValue::Map(entries) => {
            let (kt, vt) = match ty {
                CqlType::Map { key, value, .. } => (key.as_ref(), value.as_ref()),
                other => (other, other),
            };
            out.push('{');
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                // MapType.toJSONString: a key that is not a JSON string is its JSON text
                // (written as Cassandra writes it) as a string.
                let mut key = String::new();
                write_value(kt, k, &mut key);
                if key.starts_with('"') {
                    out.push_str(&key);
                } else {
                    out.push_str(&Json::String(key).to_string());
                }
                out.push_str(": ");
                write_value(vt, item, out);
            }
            out.push('}');
        }
        CqlValue::Tuple(items) => {
            let types: &[CqlType] = match ty {
                CqlType::Tuple(t) => t,
                _ => &[],
            };
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match (item, types.get(i)) {
                    (Some(item), Some(t)) => write_value(t, item, out),
                    _ => out.push_str("null"),
                }
            }
            out.push(']');
        }
        CqlValue::Udt(fields) => {
            let types: &[(String, CqlType)] = match ty {
                CqlType::Udt { fields, .. } => fields,
                _ => &[],
            };
            out.push('{');
            // Every field of the type, null where the value has none (a field ALTER TYPE added
            // after the value was written), as `UserType.toJSONString` writes them.
            let names: Vec<&String> = if types.is_empty() {
                fields.iter().map(|(n, _)| n).collect()
            } else {
                types.iter().map(|(n, _)| n).collect()
            };
            for (i, name) in names.into_iter().enumerate() {
                let item = fields
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, v)| v.as_ref());
                if i > 0 {
                    out.push_str(", ");
                }
                // UserType.toJSONString: a case-sensitive name quoted (`"\"Foo\""`).
                if *name == name.to_lowercase() {
                    out.push_str(&Json::String(name.clone()).to_string());
                } else {
                    out.push_str(&Json::String(format!("\"{name}\"")).to_string());
                }
                out.push_str(": ");
                let t = types.iter().find(|(n, _)| n == name).map(|(_, t)| t);
                match (item, t) {
                    (Some(item), Some(t)) => write_value(t, item, out),
                    _ => out.push_str("null"),
                }
            }
            out.push('}');
        }
        // FloatType's and DoubleType's toJSONString: Java's text, and null for what JSON has
        // no number for.
        CqlValue::Float(f) if !f.is_finite() => out.push_str("null"),
        CqlValue::Double(f) if !f.is_finite() => out.push_str("null"),
        CqlValue::Float(f) => out.push_str(&java_text::java_float(*f)),
        CqlValue::Double(f) => out.push_str(&java_text::java_double(*f)),
        // DecimalType.toJSONString: `BigDecimal.toString` (`1E+2`).
        CqlValue::Decimal(d) => out.push_str(&numeric::decimal_java_string(d)),
        // InetAddressType.toJSONString: Java's `getHostAddress`.
        CqlValue::Inet(ip) => {
            out.push_str(&Json::String(super::display::java_host_address(ip)).to_string());
        }
        scalar => write_json(&to_json(ty, scalar), out),
    }
}

/// A value as JSON.
pub fn to_json(ty: &CqlType, v: &CqlValue) -> Json {
    match v {
        // An empty value (not null) of a type whose values have bytes: each type's
        // toJSONString writes `""` for it (`Objects.toString(deserialize(buffer), "\"\"")`).
        CqlValue::Empty => Json::String(String::new()),
        CqlValue::Ascii(s) | CqlValue::Text(s) => Json::String(s.clone()),
        CqlValue::Bigint(i) | CqlValue::Counter(i) => Json::Number((*i).into()),
        CqlValue::Int(i) => Json::Number((*i).into()),
        CqlValue::Smallint(i) => Json::Number((*i).into()),
        CqlValue::Tinyint(i) => Json::Number((*i).into()),
        CqlValue::Boolean(b) => Json::Bool(*b),
        CqlValue::Float(f) => float_json(f64::from(*f)),
        CqlValue::Double(f) => float_json(*f),
        CqlValue::Varint(i) => {
            serde_json::from_str(&i.to_string()).unwrap_or(Json::String(i.to_string()))
        }
        CqlValue::Decimal(d) => {
            let text = numeric::decimal_java_string(d);
            serde_json::from_str(&text).unwrap_or(Json::String(text))
        }
        CqlValue::Blob(b) => Json::String(format!(
            "0x{}",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        )),
        CqlValue::Uuid(u) | CqlValue::Timeuuid(u) => Json::String(u.to_string()),
        CqlValue::Inet(ip) => Json::String(ip.to_string()),
        CqlValue::Date(d) => Json::String(temporal::format_date(*d)),
        CqlValue::Time(t) => Json::String(temporal::format_time(*t)),
        CqlValue::Timestamp(ms) => Json::String(
            temporal::format_timestamp(*ms)
                .map(|s| s.replacen('T', " ", 1))
                .unwrap_or_else(|| ms.to_string()),
        ),
        CqlValue::Duration(d) => Json::String(duration::format_duration(d)),
        CqlValue::List(items) | CqlValue::Set(items) | CqlValue::Vector(items) => {
            let element = match ty {
                CqlType::List { element, .. }
                | CqlType::Set { element, .. }
                | CqlType::Vector { element, .. } => element.as_ref(),
                other => other,
            };
            Json::Array(items.iter().map(|i| to_json(element, i)).collect())
        }
        CqlValue::Map(entries) => {
            let (kt, vt) = match ty {
                CqlType::Map { key, value, .. } => (key.as_ref(), value.as_ref()),
                other => (other, other),
            };
            let mut m = Map::new();
            for (k, v) in entries {
                let key = match to_json(kt, k) {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                m.insert(key, to_json(vt, v));
            }
            Json::Object(m)
        }
        CqlValue::Tuple(items) => {
            let types: &[CqlType] = match ty {
                CqlType::Tuple(t) => t,
                _ => &[],
            };
            Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match (v, types.get(i)) {
                        (Some(v), Some(t)) => to_json(t, v),
                        _ => Json::Null,
                    })
                    .collect(),
            )
        }
        CqlValue::Udt(fields) => {
            let types: &[(String, CqlType)] = match ty {
                CqlType::Udt { fields, .. } => fields,
                _ => &[],
            };
            let mut m = Map::new();
            for (name, v) in fields {
                let t = types.iter().find(|(n, _)| n == name).map(|(_, t)| t);
                m.insert(
                    name.clone(),
                    match (v, t) {
                        (Some(v), Some(t)) => to_json(t, v),
                        _ => Json::Null,
                    },
                );
            }
            // Fields the type gained after the value was written: null.
            for (name, _) in types {
                m.entry(name.clone()).or_insert(Json::Null);
            }
            Json::Object(m)
        }
    }
}

/// The class Jackson decodes a JSON value to, as Cassandra's messages name it: `Integer`,
/// `Long` or `BigInteger` for an integer by its size, `Double` for any other number.
fn java_class(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "Boolean",
        Json::String(_) => "String",
        Json::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E']) {
                "Double"
            } else if text.parse::<i32>().is_ok() {
                "Integer"
            } else if text.parse::<i64>().is_ok() {
                "Long"
            } else {
                "BigInteger"
            }
        }
        Json::Array(_) => "ArrayList",
        Json::Object(_) => "LinkedHashMap",
    }
}

/// `Expected <what>, but got a <class>: <value>`, the words of the types' `fromJSONObject`.
fn expected(what: &str, json: &Json) -> String {
    format!(
        "Expected {what}, but got a {}: {}",
        java_class(json),
        java_text(json)
    )
}

/// A number's literal: an integer, or a float when it has a point or an exponent.
fn number_literal(text: &str) -> Term {
    match text {
        "NaN" => Term::Literal(Literal::NaN),
        "Infinity" => Term::Literal(Literal::Infinity),
        "-Infinity" => Term::Literal(Literal::NegativeInfinity),
        text if text.contains(['.', 'e', 'E']) => Term::Literal(Literal::Float(text.to_string())),
        text => Term::Literal(Literal::Integer(text.to_string())),
    }
}

/// A JSON string that stands for a collection, tuple or UDT is JSON itself
/// (`JsonUtils.decodeJson`), as in a map key (`{"[0, 1]": true}`).
fn decoded(json: &Json) -> Result<std::borrow::Cow<'_, Json>, String> {
    match json {
        Json::String(s) => serde_json::from_str(s)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| format!("Error decoding JSON string: {e}")),
        other => Ok(std::borrow::Cow::Borrowed(other)),
    }
}

/// The term a JSON value stands for, as a literal of `ty`, as each type's `fromJSONObject`
/// reads it; `Err` is its `MarshalException`'s message.
fn to_term(ty: &CqlType, json: &Json) -> Result<Term, String> {
    use CqlType as T;
    let string = |s: &str| Term::Literal(Literal::String(s.to_string()));
    let class = java_class(json);
    Ok(match (ty, json) {
        (_, Json::Null) => Term::Literal(Literal::Null),
        (T::Ascii, Json::String(s)) | (T::Text, Json::String(s)) => string(s),
        (T::Ascii, _) => return Err(expected("an ascii string", json)),
        (T::Text, _) => return Err(expected("a UTF-8 string", json)),
        // Strings through the type's `fromString`.
        (T::Tinyint | T::Smallint | T::Int | T::Bigint | T::Counter, Json::String(s)) => {
            Term::Literal(Literal::Integer(s.clone()))
        }
        (T::Float | T::Double, Json::String(s)) => number_literal(s),
        (T::Int, Json::Number(n)) if class == "Integer" => number_literal(&n.to_string()),
        (T::Int, _) => return Err(expected("an int value", json)),
        (T::Bigint | T::Counter, Json::Number(n)) if matches!(class, "Integer" | "Long") => {
            number_literal(&n.to_string())
        }
        (T::Bigint | T::Counter, _) => return Err(expected("a bigint value", json)),
        // ShortType and ByteType read the number's text.
        (T::Smallint | T::Tinyint, Json::Number(_)) => {
            Term::Literal(Literal::Integer(java_text(json)))
        }
        (T::Smallint, _) => return Err(expected("a short value", json)),
        (T::Tinyint, _) => return Err(expected("a byte value", json)),
        (T::Float | T::Double, Json::Number(n)) => number_literal(&n.to_string()),
        (T::Float, _) => return Err(expected("a float value", json)),
        (T::Double, _) => return Err(expected("a double value", json)),
        // DecimalType's and IntegerType's: the text of whatever was given. A number keeps its
        // own text, where Jackson would read a fraction as a double first: khata keeps
        // `0.100000000000000000000000000001` exact.
        (T::Decimal | T::Varint, _) => {
            let text = match json {
                Json::Number(n) => n.to_string(),
                other => java_text(other),
            };
            let valid = match ty {
                T::Decimal => numeric::parse_decimal(&text).is_some(),
                _ => numeric::parse_varint(&text).is_some(),
            };
            if !valid {
                return Err(format!(
                    "Value '{text}' is not a valid representation of a {} value",
                    khata_types::type_text::type_text(ty)
                ));
            }
            number_literal(&text)
        }
        (T::Boolean, Json::Bool(b)) => Term::Literal(Literal::Boolean(*b)),
        (T::Boolean, Json::String(s)) => match s.to_ascii_lowercase().as_str() {
            "true" => Term::Literal(Literal::Boolean(true)),
            "false" => Term::Literal(Literal::Boolean(false)),
            _ => return Err(format!("Unable to make boolean from '{s}'")),
        },
        (T::Boolean, _) => return Err(expected("a boolean value", json)),
        (T::Blob, _) => {
            let not_blob = |why: String| {
                format!(
                    "Value '{}' is not a valid blob representation: {why}",
                    java_text(json)
                )
            };
            let Json::String(s) = json else {
                return Err(not_blob(format!(
                    "class java.lang.{class} cannot be cast to class java.lang.String"
                )));
            };
            let Some(hex) = s.strip_prefix("0x") else {
                return Err(not_blob(format!(
                    "String representation of blob is missing 0x prefix: {s}"
                )));
            };
            if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(not_blob(format!("cannot parse '{hex}' as hex bytes")));
            }
            Term::Literal(Literal::Hex(hex.to_string()))
        }
        (T::Timestamp, Json::Number(n)) if matches!(class, "Integer" | "Long") => {
            Term::Literal(Literal::Integer(n.to_string()))
        }
        (T::Timestamp, Json::String(s)) => string(s),
        (T::Timestamp, _) => {
            return Err(expected(
                "a long or a datestring representation of a timestamp value",
                json,
            ));
        }
        (T::Uuid | T::Timeuuid, Json::String(s)) => match s.parse() {
            Ok(u) => Term::Literal(Literal::Uuid(u)),
            Err(_) => return Err(format!("Unable to make UUID from '{s}'")),
        },
        (T::Uuid, _) => return Err(expected("a string representation of a uuid", json)),
        (T::Timeuuid, _) => return Err(expected("a string representation of a timeuuid", json)),
        (T::Duration, Json::String(s)) => Term::Literal(Literal::Duration(s.clone())),
        (T::Duration, _) => return Err(expected("a string representation of a duration", json)),
        (T::Inet | T::Date | T::Time, Json::String(s)) => string(s),
        (T::Inet, _) => return Err(expected("a string representation of an inet value", json)),
        (T::Date, _) => return Err(expected("a string representation of a date value", json)),
        (T::Time, _) => return Err(expected("a string representation of a time value", json)),
        (T::List { element, .. } | T::Vector { element, .. }, _) => {
            let json = decoded(json)?;
            let Json::Array(items) = json.as_ref() else {
                return Err(expected("a list", &json));
            };
            let mut terms = Vec::with_capacity(items.len());
            for item in items {
                if item.is_null() {
                    return Err("Invalid null element in list".into());
                }
                terms.push(to_term(element, item)?);
            }
            Term::List(terms)
        }
        (T::Set { element, .. }, _) => {
            let json = decoded(json)?;
            let Json::Array(items) = json.as_ref() else {
                return Err(expected("a list (representing a set)", &json));
            };
            let mut terms = Vec::with_capacity(items.len());
            for item in items {
                if item.is_null() {
                    return Err("Invalid null element in set".into());
                }
                terms.push(to_term(element, item)?);
            }
            Term::Set(terms)
        }
        (T::Map { key, value, .. }, _) => {
            let json = decoded(json)?;
            let Json::Object(m) = json.as_ref() else {
                return Err(expected("a map", &json));
            };
            let mut entries = Vec::with_capacity(m.len());
            for (k, v) in m {
                if v.is_null() {
                    return Err("Invalid null value in map".into());
                }
                // A key is a string, read as the key type reads one (`"1"`, `"[0, 1]"`).
                entries.push((to_term(key, &Json::String(k.clone()))?, to_term(value, v)?));
            }
            Term::Map(entries)
        }
        (T::Tuple(types), _) => {
            let json = decoded(json)?;
            let Json::Array(items) = json.as_ref() else {
                return Err(expected("a list representation of a tuple", &json));
            };
            // TupleType.fromJSONObject: exactly one item per component.
            if items.len() != types.len() {
                let what = if items.len() > types.len() {
                    "contains extra"
                } else {
                    "is missing"
                };
                return Err(format!(
                    "Tuple {what} items (expected {}): {}",
                    types.len(),
                    java_text(&json)
                ));
            }
            Term::Tuple(
                items
                    .iter()
                    .zip(types)
                    .map(|(i, t)| to_term(t, i))
                    .collect::<Result<_, _>>()?,
            )
        }
        (T::Udt { name, fields, .. }, _) => {
            let json = decoded(json)?;
            let Json::Object(m) = json.as_ref() else {
                return Err(expected("a map", &json));
            };
            let mut out = Vec::new();
            for (k, v) in m {
                // JsonUtils.handleCaseSensitivity: `"\"Foo\""` names `Foo`, an unquoted key
                // is lower-cased.
                let field = match k.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
                    Some(quoted) => quoted.to_string(),
                    None => k.to_lowercase(),
                };
                let Some((_, t)) = fields.iter().find(|(n, _)| *n == field) else {
                    return Err(format!(
                        "Unknown field '{field}' in value of user defined type {name}"
                    ));
                };
                out.push((Name(field), to_term(t, v)?));
            }
            Term::UserType(out)
        }
    })
}

/// Parsed JSON as Java's `toString` writes what Jackson decodes it to, as Cassandra's
/// messages show it: strings without quotes, `[a, b]` lists, `{k=v}` maps, floats as
/// `Double.toString`.
pub(crate) fn java_text(json: &Json) -> String {
    match json {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::String(s) => s.clone(),
        Json::Number(n) if n.is_f64() => n
            .as_f64()
            .map_or_else(|| n.to_string(), java_text::java_double),
        Json::Number(n) => n.to_string(),
        Json::Array(items) => format!(
            "[{}]",
            items.iter().map(java_text).collect::<Vec<_>>().join(", ")
        ),
        Json::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}={}", java_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A value of `ty` from JSON (`None` for `null`), for the column `receiver` of an
/// `INSERT JSON`: a failure is `Error decoding JSON value for <receiver>: <why>`.
pub fn from_json(
    ty: &CqlType,
    json: &Json,
    receiver: &str,
    now_millis: i64,
) -> Result<Option<CqlValue>, LiteralError> {
    decode(ty, json, receiver, now_millis).map_err(|why| {
        LiteralError::InvalidLiteral(format!("Error decoding JSON value for {receiver}: {why}"))
    })
}

/// `fromJson(text)` for a receiver of type `ty`: a failure is the function's
/// (`FromJsonFct.execute`'s `FunctionExecutionException`).
pub fn from_json_text(
    ty: &CqlType,
    text: &str,
    receiver: &str,
    now_millis: i64,
) -> Result<Option<CqlValue>, LiteralError> {
    let failed = |why: String| {
        LiteralError::FromJsonFailed(format!(
            "execution of 'system.fromjson[text]' failed: {why}"
        ))
    };
    let json: Json = serde_json::from_str(text)
        .map_err(|e| failed(format!("Could not decode JSON string '{text}': {e}")))?;
    decode(ty, &json, receiver, now_millis).map_err(|why| {
        failed(format!(
            "org.apache.cassandra.serializers.MarshalException: {why}"
        ))
    })
}

/// JSON as a value of `ty`; `Err` is why not, in Cassandra's words.
fn decode(
    ty: &CqlType,
    json: &Json,
    receiver: &str,
    now_millis: i64,
) -> Result<Option<CqlValue>, String> {
    let term = to_term(ty, json)?;
    from_term(&term, receiver, ty, now_millis).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json() {
        let map = CqlType::Map {
            key: Box::new(CqlType::Int),
            value: Box::new(CqlType::Text),
            frozen: false,
        };
        let cases = [
            (CqlType::Int, CqlValue::Int(-5)),
            (CqlType::Text, CqlValue::Text("a\"b".into())),
            (CqlType::Boolean, CqlValue::Boolean(true)),
            (CqlType::Timestamp, CqlValue::Timestamp(1_700_000_000_123)),
            (CqlType::Blob, CqlValue::Blob(vec![1, 0xab])),
            (
                map.clone(),
                CqlValue::Map(vec![(CqlValue::Int(1), CqlValue::Text("x".into()))]),
            ),
        ];
        for (ty, v) in cases {
            let json = to_json(&ty, &v);
            let back = from_json(&ty, &json, "c", 0).unwrap().unwrap();
            assert_eq!(back, v, "{json}");
        }
        // Written in the value's order, not sorted by name.
        let mut text = String::new();
        let udt = CqlType::Udt {
            keyspace: "ks".into(),
            name: "u".into(),
            fields: vec![("z".into(), CqlType::Int), ("a".into(), map.clone())],
            frozen: true,
        };
        write_value(
            &udt,
            &CqlValue::Udt(vec![
                ("z".into(), Some(CqlValue::Int(1))),
                (
                    "a".into(),
                    Some(CqlValue::Map(vec![
                        (CqlValue::Int(2), CqlValue::Text("b".into())),
                        (CqlValue::Int(10), CqlValue::Text("c".into())),
                    ])),
                ),
            ]),
            &mut text,
        );
        assert_eq!(text, r#"{"z": 1, "a": {"2": "b", "10": "c"}}"#);
        assert_eq!(
            to_json(&CqlType::Timestamp, &CqlValue::Timestamp(0)),
            Json::String("1970-01-01 00:00:00.000Z".into())
        );
        // Numbers may come as strings.
        assert_eq!(
            from_json(&CqlType::Int, &Json::String("7".into()), "c", 0).unwrap(),
            Some(CqlValue::Int(7))
        );
    }
}
