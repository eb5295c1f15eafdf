//! Reading a request's JSON members, with DynamoDB's two kinds of refusal.
//!
//! A member of the wrong JSON type is a `SerializationException` (DynamoDB's deserializer
//! refuses the document before validation runs). A member of the right type that breaks a
//! constraint is a *violation*; DynamoDB collects every violation of a request and answers one
//! `ValidationException`: `N validation error(s) detected: Value 'x' at 'path' failed to
//! satisfy constraint: Member must ...; ...`. [`Violations`] collects them in that shape.

use serde_json::{Map, Value};

use crate::error::{DynamoError, Result};

/// The request body: a JSON object.
pub type Object = Map<String, Value>;

/// The name of a JSON value's type, as DynamoDB's deserializer names it in its messages.
fn token_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "VALUE_NULL",
        Value::Bool(true) => "TRUE_VALUE",
        Value::Bool(false) => "FALSE_VALUE",
        Value::Number(_) => "NUMBER_VALUE",
        Value::String(_) => "VALUE_STRING",
        Value::Array(_) => "START_ARRAY",
        Value::Object(_) => "START_OBJECT",
    }
}

fn wrong_type(v: &Value, expected: &str) -> DynamoError {
    DynamoError::serialization(format!(
        "{} cannot be converted to {expected}",
        token_name(v)
    ))
}

/// A string member; `null` or absent is `None`.
pub fn string<'a>(obj: &'a Object, name: &str) -> Result<Option<&'a str>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong_type(v, "String")),
    }
}

/// A boolean member.
pub fn boolean(obj: &Object, name: &str) -> Result<Option<bool>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(wrong_type(v, "Boolean")),
    }
}

/// An integer member (DynamoDB's `Long`/`Integer` members).
pub fn integer(obj: &Object, name: &str) -> Result<Option<i64>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err(DynamoError::serialization(format!(
                "Number {n} is not an integer within range"
            ))),
        },
        Some(v) => Err(wrong_type(v, "Long")),
    }
}

/// A structure member.
pub fn object<'a>(obj: &'a Object, name: &str) -> Result<Option<&'a Object>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(v) => Err(wrong_type(v, "Structure")),
    }
}

/// A list member.
pub fn list<'a>(obj: &'a Object, name: &str) -> Result<Option<&'a Vec<Value>>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(DynamoError::serialization(format!(
            "Unexpected {} where a list was expected",
            token_name(v)
        ))),
    }
}

/// A list of structures.
pub fn object_list<'a>(obj: &'a Object, name: &str) -> Result<Option<Vec<&'a Object>>> {
    let Some(items) = list(obj, name)? else {
        return Ok(None);
    };
    items
        .iter()
        .map(|v| match v {
            Value::Object(o) => Ok(o),
            v => Err(wrong_type(v, "Structure")),
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// A list of strings.
pub fn string_list<'a>(obj: &'a Object, name: &str) -> Result<Option<Vec<&'a str>>> {
    let Some(items) = list(obj, name)? else {
        return Ok(None);
    };
    items
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.as_str()),
            v => Err(wrong_type(v, "String")),
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// Constraint violations of one request, reported together.
#[derive(Debug, Default)]
pub struct Violations(Vec<String>);

impl Violations {
    /// `value` is the offending value as DynamoDB quotes it: `'x'`, or `null`.
    pub fn push(&mut self, value: &str, path: &str, constraint: &str) {
        self.0.push(format!(
            "Value {value} at '{path}' failed to satisfy constraint: Member {constraint}"
        ));
    }

    /// A required member that is absent.
    pub fn null(&mut self, path: &str) {
        self.push("null", path, "must not be null");
    }

    /// The checks of a table (or index) name: 3-255 characters of `[a-zA-Z0-9_.-]`.
    pub fn name(&mut self, value: Option<&str>, path: &str) {
        let Some(v) = value else {
            self.null(path);
            return;
        };
        let quoted = format!("'{v}'");
        if !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            || v.is_empty()
        {
            self.push(
                &quoted,
                path,
                "must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
            );
        }
        if v.chars().count() < 3 {
            self.push(&quoted, path, "must have length greater than or equal to 3");
        }
        if v.chars().count() > 255 {
            self.push(&quoted, path, "must have length less than or equal to 255");
        }
    }

    /// A value from an enumeration.
    pub fn one_of(&mut self, value: &str, path: &str, allowed: &[&str]) {
        if !allowed.contains(&value) {
            self.push(
                &format!("'{value}'"),
                path,
                &format!("must satisfy enum value set: [{}]", allowed.join(", ")),
            );
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok` when nothing was violated, else the one `ValidationException`.
    pub fn finish(self) -> Result<()> {
        match self.0.len() {
            0 => Ok(()),
            n => Err(DynamoError::validation(format!(
                "{n} validation error{} detected: {}",
                if n == 1 { "" } else { "s" },
                self.0.join("; ")
            ))),
        }
    }
}

/// The table name of a request: required and valid (or a table's ARN, which DynamoDB takes
/// wherever it takes a `TableName`), else a `ValidationException`.
pub fn table_name(obj: &Object) -> Result<&str> {
    let Some(name) = string(obj, "TableName")? else {
        return Err(DynamoError::validation(
            "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null",
        ));
    };
    table_name_of(name)
}

/// The table a `TableName` names: the name itself when it is a valid one (3-255 characters of
/// `[a-zA-Z0-9_.-]`), or the name in a table ARN, `arn:<partition>:dynamodb:<region>:<account>:
/// table/<name>` (any region and account: one node answers for all). Anything else is
/// refused as DynamoDB refuses a bad name, before any table is looked up.
pub fn table_name_of(value: &str) -> Result<&str> {
    if let Some(arn) = value.strip_prefix("arn:") {
        let parts: Vec<&str> = arn.splitn(5, ':').collect();
        let name = match parts.as_slice() {
            [_, "dynamodb", _, _, resource] => resource.strip_prefix("table/"),
            _ => None,
        };
        let mut v = Violations::default();
        if let Some(name) = name {
            v.name(Some(name), "tableName");
            if v.is_empty() {
                return Ok(name);
            }
        }
        return Err(DynamoError::validation(format!(
            "Invalid TableName: {value} is neither a table name nor a table ARN"
        )));
    }
    let mut v = Violations::default();
    v.name(Some(value), "tableName");
    v.finish()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_read_as_dynamodb_writes_them() {
        let mut v = Violations::default();
        v.name(Some("a;"), "tableName");
        let e = v.finish().unwrap_err();
        assert_eq!(
            e.message.unwrap(),
            "2 validation errors detected: Value 'a;' at 'tableName' failed to satisfy \
             constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; \
             Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length \
             greater than or equal to 3"
        );
        let obj: Object = serde_json::from_str(
            r#"{"TableName": "arn:aws:dynamodb:eu-west-1:123456789012:table/t_1"}"#,
        )
        .unwrap();
        assert_eq!(table_name(&obj).unwrap(), "t_1");
        for bad in [
            "arn:aws:dynamodb:eu-west-1:123456789012:table/t!",
            "arn:aws:s3:::bucket",
            "arn:aws:dynamodb:eu-west-1:123456789012:table/t_1/stream/x",
        ] {
            assert!(table_name_of(bad).is_err(), "{bad}");
        }
        let e = table_name_of("xx").unwrap_err();
        assert_eq!(
            e.message.unwrap(),
            "1 validation error detected: Value 'xx' at 'tableName' failed to satisfy \
             constraint: Member must have length greater than or equal to 3"
        );
        let obj: Object = serde_json::from_str(r#"{"TableName": 5}"#).unwrap();
        let e = table_name(&obj).unwrap_err();
        assert_eq!(
            e.message.as_deref(),
            Some("NUMBER_VALUE cannot be converted to String")
        );
    }
}
