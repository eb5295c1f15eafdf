//! CQL values as JSON, for `SELECT JSON` and `INSERT JSON`, following Cassandra's
//! `toJSONString` / `fromJSONObject` of each type.
//!
//! Out ([`write_value`]): numbers as JSON numbers (floats as Java writes them, `NaN` and
//! `Infinity` as `null`, as JSON has none), text, uuids, inets (as Java's `getHostAddress`), dates, times, durations and timestamps (`"2024-01-31 10:00:00.000Z"`) as strings,
//! blobs as `"0x..."`, lists, sets and tuples as arrays, maps as objects whose keys are the JSON
//! of the key as a string (a string key as is), UDTs as objects (case-sensitive field names
//! quoted). In: the same, and, as Cassandra accepts,
//! numbers and booleans given as strings, timestamps as numbers of milliseconds.

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
            for (i, (name, item)) in fields.iter().enumerate() {
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
        CqlValue::Float(f) => out.push_str(&numeric::java_float_string(*f)),
        CqlValue::Double(f) => out.push_str(&numeric::java_double_string(*f)),
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
        CqlValue::Empty => Json::Null,
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
            Json::Object(m)
        }
    }
}

fn is_number_type(ty: &CqlType) -> bool {
    matches!(
        ty,
        CqlType::Tinyint
            | CqlType::Smallint
            | CqlType::Int
            | CqlType::Bigint
            | CqlType::Counter
            | CqlType::Varint
            | CqlType::Float
            | CqlType::Double
            | CqlType::Decimal
    )
}

/// The term a JSON value stands for, as a literal of `ty`.
fn to_term(ty: &CqlType, json: &Json, receiver: &str) -> Result<Term, LiteralError> {
    let bad = || {
        LiteralError::InvalidLiteral(format!(
            "Error decoding JSON value for {receiver}: {json} is not a valid {}",
            khata_types::type_text::type_text(ty)
        ))
    };
    Ok(match (json, ty) {
        (Json::Null, _) => Term::Literal(Literal::Null),
        (Json::Bool(b), CqlType::Boolean) => Term::Literal(Literal::Boolean(*b)),
        (Json::String(s), CqlType::Boolean) => match s.to_ascii_lowercase().as_str() {
            "true" => Term::Literal(Literal::Boolean(true)),
            "false" => Term::Literal(Literal::Boolean(false)),
            _ => return Err(bad()),
        },
        (Json::Number(n), CqlType::Timestamp) => Term::Literal(Literal::Integer(n.to_string())),
        (Json::Number(n), t) if is_number_type(t) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E']) {
                Term::Literal(Literal::Float(text))
            } else {
                Term::Literal(Literal::Integer(text))
            }
        }
        // DecimalType's and IntegerType's fromJSONObject.
        (Json::String(s), CqlType::Decimal | CqlType::Varint)
            if (*ty == CqlType::Decimal && super::numeric::parse_decimal(s).is_none())
                || (*ty == CqlType::Varint && super::numeric::parse_varint(s).is_none()) =>
        {
            return Err(LiteralError::InvalidLiteral(format!(
                "Error decoding JSON value for {receiver}: Value '{s}' is not a valid representation of a {} value",
                khata_types::type_text::type_text(ty)
            )));
        }
        // SimpleDateType.fromJSONObject takes a string only.
        (Json::Number(n), CqlType::Date) => {
            let kind = match n.as_i64() {
                Some(v) if i32::try_from(v).is_ok() => "Integer",
                Some(_) => "Long",
                None => "Double",
            };
            return Err(LiteralError::InvalidLiteral(format!(
                "Error decoding JSON value for {receiver}: Expected a string representation of a date value, but got a {kind}: {n}"
            )));
        }
        // DurationType.fromJSONObject: the string form of a duration.
        (Json::String(s), CqlType::Duration) => Term::Literal(Literal::Duration(s.clone())),
        (Json::String(s), t) if is_number_type(t) => match s.as_str() {
            "NaN" => Term::Literal(Literal::NaN),
            "Infinity" => Term::Literal(Literal::Infinity),
            "-Infinity" => Term::Literal(Literal::NegativeInfinity),
            text if text.contains(['.', 'e', 'E']) => {
                Term::Literal(Literal::Float(text.to_string()))
            }
            text => Term::Literal(Literal::Integer(text.to_string())),
        },
        (Json::String(s), CqlType::Blob) => match s.strip_prefix("0x") {
            Some(hex) => Term::Literal(Literal::Hex(hex.to_string())),
            None => return Err(bad()),
        },
        (Json::String(s), CqlType::Uuid | CqlType::Timeuuid) => {
            Term::Literal(Literal::Uuid(s.parse().map_err(|_| bad())?))
        }
        (Json::String(s), _)
            if !matches!(
                ty,
                CqlType::List { .. }
                    | CqlType::Set { .. }
                    | CqlType::Map { .. }
                    | CqlType::Tuple(_)
                    | CqlType::Udt { .. }
                    | CqlType::Vector { .. }
            ) =>
        {
            Term::Literal(Literal::String(s.clone()))
        }
        (Json::Array(items), CqlType::List { element, .. } | CqlType::Vector { element, .. }) => {
            Term::List(
                items
                    .iter()
                    .map(|i| to_term(element, i, receiver))
                    .collect::<Result<_, _>>()?,
            )
        }
        (Json::Array(items), CqlType::Set { element, .. }) => Term::Set(
            items
                .iter()
                .map(|i| to_term(element, i, receiver))
                .collect::<Result<_, _>>()?,
        ),
        // TupleType.fromJSONObject: exactly one item per component.
        (Json::Array(items), CqlType::Tuple(types)) if items.len() != types.len() => {
            let what = if items.len() > types.len() {
                "contains extra"
            } else {
                "is missing"
            };
            return Err(LiteralError::InvalidLiteral(format!(
                "Error decoding JSON value for {receiver}: Tuple {what} items (expected {}): {}",
                types.len(),
                java_text(json)
            )));
        }
        (Json::Array(items), CqlType::Tuple(types)) => Term::Tuple(
            items
                .iter()
                .zip(types)
                .map(|(i, t)| to_term(t, i, receiver))
                .collect::<Result<_, _>>()?,
        ),
        (Json::Object(m), CqlType::Map { key, value, .. }) => Term::Map(
            m.iter()
                .map(|(k, v)| {
                    // A key is the JSON of the key as a string: parse it unless it is text.
                    let key_json = match key.as_ref() {
                        CqlType::Text | CqlType::Ascii => Json::String(k.clone()),
                        _ => serde_json::from_str(k).unwrap_or_else(|_| Json::String(k.clone())),
                    };
                    Ok((
                        to_term(key, &key_json, receiver)?,
                        to_term(value, v, receiver)?,
                    ))
                })
                .collect::<Result<_, LiteralError>>()?,
        ),
        (Json::Object(m), CqlType::Udt { name, fields, .. }) => {
            let mut out = Vec::new();
            for (k, v) in m {
                // JsonUtils.handleCaseSensitivity: `"\"Foo\""` names `Foo`, an unquoted key
                // is lower-cased.
                let field = match k.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
                    Some(quoted) => quoted.to_string(),
                    None => k.to_lowercase(),
                };
                let Some((_, t)) = fields.iter().find(|(n, _)| *n == field) else {
                    return Err(LiteralError::InvalidLiteral(format!(
                        "Error decoding JSON value for {receiver}: Unknown field '{field}' in value of user defined type {name}"
                    )));
                };
                out.push((Name(field), to_term(t, v, receiver)?));
            }
            Term::UserType(out)
        }
        _ => return Err(bad()),
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
            .map_or_else(|| n.to_string(), numeric::java_double_string),
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

/// A value of `ty` from JSON (`None` for `null`).
pub fn from_json(
    ty: &CqlType,
    json: &Json,
    receiver: &str,
    now_millis: i64,
) -> Result<Option<CqlValue>, LiteralError> {
    let term = to_term(ty, json, receiver)?;
    from_term(&term, receiver, ty, now_millis)
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
