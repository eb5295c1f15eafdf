//! The legacy (pre-expression) parameters as expression trees, so one evaluator serves both:
//! `Expected` and `QueryFilter`/`ScanFilter` (with `ConditionalOperator`) become a
//! [`Condition`], `KeyConditions` a [`KeyCondition`], `AttributeUpdates` an [`Update`],
//! `AttributesToGet` a [`Projection`]. Their JSON comes straight from the request.

use serde_json::Value as Json;

use super::ast::{Action, Comparator, Cond, Operand, Path, SetValue};
use super::key::{CompositeKeyCondition, KeyCondition, from_composite_condition, from_condition};
use super::{Condition, Projection, Update};
use crate::value::{AttributeValue, ValidationError, ValueError, check_attribute_name};

const INVALID: &str = "One or more parameter values were invalid: ";

fn invalid(m: impl std::fmt::Display) -> ValueError {
    ValueError::Validation(ValidationError(format!("{INVALID}{m}")))
}

fn shape(m: &str) -> ValueError {
    ValueError::Serialization(m.to_owned())
}

/// One operation's legacy parameters and the expression parameters that replace them, each
/// in the order DynamoDB names them when a request gives both kinds.
#[derive(Debug, Clone, Copy)]
pub struct Parameters {
    /// `ConditionalOperator` included: it counts as a legacy parameter.
    pub legacy: &'static [&'static str],
    pub expressions: &'static [&'static str],
    /// The legacy conditions `ConditionalOperator` joins: `Expected`, `QueryFilter` or
    /// `ScanFilter`.
    pub conditions: &'static str,
}

/// PutItem's and DeleteItem's.
pub const WRITE_PARAMETERS: Parameters = Parameters {
    legacy: &["Expected", "ConditionalOperator"],
    expressions: &["ConditionExpression"],
    conditions: "Expected",
};
/// UpdateItem's.
pub const UPDATE_PARAMETERS: Parameters = Parameters {
    legacy: &["AttributeUpdates", "Expected", "ConditionalOperator"],
    expressions: &["UpdateExpression", "ConditionExpression"],
    conditions: "Expected",
};
/// GetItem's (it has no conditions).
pub const GET_PARAMETERS: Parameters = Parameters {
    legacy: &["AttributesToGet"],
    expressions: &["ProjectionExpression"],
    conditions: "",
};
/// Query's. `KeyConditions` counts only next to a `KeyConditionExpression`: DynamoDB takes the
/// legacy key conditions with a `FilterExpression` or `ProjectionExpression` (Alternator's
/// test_limit_expression_len and test_projection_expression_query pass on AWS with them).
pub const QUERY_PARAMETERS: Parameters = Parameters {
    legacy: &[
        "AttributesToGet",
        "QueryFilter",
        "ConditionalOperator",
        "KeyConditions",
    ],
    expressions: &[
        "ProjectionExpression",
        "FilterExpression",
        "KeyConditionExpression",
    ],
    conditions: "QueryFilter",
};
/// Scan's.
pub const SCAN_PARAMETERS: Parameters = Parameters {
    legacy: &["AttributesToGet", "ScanFilter", "ConditionalOperator"],
    expressions: &["ProjectionExpression", "FilterExpression"],
    conditions: "ScanFilter",
};

/// Refuses what DynamoDB refuses of a request's legacy parameters before reading any of them:
/// an unknown `ConditionalOperator`; legacy and expression parameters together (naming those
/// given of each kind); a `ConditionalOperator` without at least two conditions to join.
pub fn check_parameters(
    req: &serde_json::Map<String, Json>,
    parameters: &Parameters,
) -> Result<(), ValueError> {
    let given = |name: &str| req.get(name).is_some_and(|v| !v.is_null());
    let operator = match req.get("ConditionalOperator") {
        // GetItem has no ConditionalOperator: one given is an unknown member, ignored.
        _ if parameters.conditions.is_empty() => None,
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.as_str()),
        Some(_) => {
            return Err(shape(
                "Unexpected value type in payload for ConditionalOperator",
            ));
        }
    };
    if let Some(other) = operator.filter(|o| !matches!(*o, "AND" | "OR")) {
        return Err(ValueError::Validation(ValidationError(format!(
            "1 validation error detected: Value '{other}' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]"
        ))));
    }
    let key_condition_expression = given("KeyConditionExpression");
    let legacy: Vec<&str> = parameters
        .legacy
        .iter()
        .copied()
        .filter(|n| given(n) && (*n != "KeyConditions" || key_condition_expression))
        .collect();
    let expressions: Vec<&str> = parameters
        .expressions
        .iter()
        .copied()
        .filter(|n| given(n))
        .collect();
    if !legacy.is_empty() && !expressions.is_empty() {
        return Err(ValueError::Validation(ValidationError(format!(
            "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
            legacy.join(", "),
            expressions.join(", ")
        ))));
    }
    if operator.is_some() {
        // A conditions member that is no map is refused when it is read.
        let conditions = match req.get(parameters.conditions) {
            None | Some(Json::Null) => Some(0),
            Some(Json::Object(m)) => Some(m.len()),
            Some(_) => None,
        };
        match conditions {
            Some(0) => {
                return Err(ValueError::Validation(ValidationError(
                    "ConditionalOperator cannot be used without Filter or Expected".into(),
                )));
            }
            Some(1) => {
                return Err(ValueError::Validation(ValidationError(
                    "ConditionalOperator can only be used when Filter or Expected has two or more elements".into(),
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

fn object(j: &Json) -> Result<&serde_json::Map<String, Json>, ValueError> {
    j.as_object()
        .ok_or_else(|| shape("Start of structure or map expected."))
}

fn values_list(entry: &serde_json::Map<String, Json>) -> Result<Vec<AttributeValue>, ValueError> {
    match entry.get("AttributeValueList") {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => a.iter().map(AttributeValue::from_json).collect(),
        Some(_) => Err(shape("Expected list or null")),
    }
}

const OPERATORS: &str =
    "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]";

/// Refuses a `ComparisonOperator` that is none of DynamoDB's, naming where it was:
/// `parameter` is the member in DynamoDB's spelling (`keyConditions`, `expected`, ...).
fn known_operator(parameter: &str, name: &str, operator: &str) -> Result<(), ValueError> {
    if OPERATORS
        .trim_matches(['[', ']'])
        .split(", ")
        .any(|o| o == operator)
    {
        return Ok(());
    }
    Err(ValueError::Validation(ValidationError(format!(
        "1 validation error detected: Value '{operator}' at '{parameter}.{name}.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {OPERATORS}"
    ))))
}

/// One `ComparisonOperator` (known: [`known_operator`]) with its arguments on attribute
/// `name`. As DynamoDB checks them: the number of arguments, that they are of one type, that
/// the operator takes that type, and a BETWEEN's order.
fn comparison(name: &str, operator: &str, args: Vec<AttributeValue>) -> Result<Cond, ValueError> {
    let path = || Operand::Path(Path::attribute(name));
    let wanted = match operator {
        "EQ" | "NE" | "LE" | "LT" | "GE" | "GT" | "CONTAINS" | "NOT_CONTAINS" | "BEGINS_WITH" => {
            args.len() == 1
        }
        "NULL" | "NOT_NULL" => args.is_empty(),
        "IN" => !args.is_empty(),
        "BETWEEN" => args.len() == 2,
        _ => false,
    };
    if !wanted {
        return Err(invalid(format_args!(
            "Invalid number of argument(s) for the {operator} ComparisonOperator"
        )));
    }
    if args
        .iter()
        .any(|v| std::mem::discriminant(v) != std::mem::discriminant(&args[0]))
    {
        return Err(invalid(
            "AttributeValues inside AttributeValueList must be of same type",
        ));
    }
    let scalar_only = matches!(
        operator,
        "LE" | "LT" | "GE" | "GT" | "BETWEEN" | "BEGINS_WITH"
    );
    let element_only = matches!(operator, "CONTAINS" | "NOT_CONTAINS" | "IN");
    for v in &args {
        let scalar = matches!(
            v,
            AttributeValue::S(_) | AttributeValue::N(_) | AttributeValue::B(_)
        );
        if (scalar_only || element_only) && !scalar
            || (operator == "BEGINS_WITH" && matches!(v, AttributeValue::N(_)))
        {
            return Err(invalid(format_args!(
                "ComparisonOperator {operator} is not valid for {} AttributeValue type",
                v.type_name()
            )));
        }
    }
    if operator == "BETWEEN"
        && super::eval::compare_values(&args[0], &args[1]) == Some(std::cmp::Ordering::Greater)
    {
        return Err(invalid(
            "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
        ));
    }
    if operator == "IN" {
        return Ok(Cond::In(
            path(),
            args.into_iter().map(Operand::Value).collect(),
        ));
    }
    let mut args = args.into_iter().map(Operand::Value);
    let mut next = || args.next().unwrap_or(Operand::Value(AttributeValue::Null));
    let compare = |c, v| Cond::Compare(c, path(), v);
    Ok(match operator {
        "EQ" => compare(Comparator::Eq, next()),
        // Legacy NE holds for a missing attribute, as `<>` does.
        "NE" => compare(Comparator::Ne, next()),
        "LE" => compare(Comparator::Le, next()),
        "LT" => compare(Comparator::Lt, next()),
        "GE" => compare(Comparator::Ge, next()),
        "GT" => compare(Comparator::Gt, next()),
        "NULL" => Cond::NotExists(Path::attribute(name)),
        "NOT_NULL" => Cond::Exists(Path::attribute(name)),
        "CONTAINS" => Cond::Contains(path(), next()),
        "NOT_CONTAINS" => Cond::And(
            Box::new(Cond::Exists(Path::attribute(name))),
            Box::new(Cond::Not(Box::new(Cond::Contains(path(), next())))),
        ),
        "BEGINS_WITH" => Cond::BeginsWith(path(), next()),
        "BETWEEN" => {
            let low = next();
            Cond::Between(path(), low, next())
        }
        _ => unreachable!("checked above"),
    })
}

fn combine(conds: Vec<Cond>, conditional_operator: Option<&str>) -> Result<Cond, ValueError> {
    let or = match conditional_operator {
        None | Some("AND") => false,
        Some("OR") => true,
        Some(other) => {
            return Err(ValueError::Validation(ValidationError(format!(
                "1 validation error detected: Value '{other}' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]"
            ))));
        }
    };
    Ok(conds
        .into_iter()
        .reduce(|a, b| {
            if or {
                Cond::Or(Box::new(a), Box::new(b))
            } else {
                Cond::And(Box::new(a), Box::new(b))
            }
        })
        .unwrap_or(Cond::True))
}

/// `Expected` (with `ConditionalOperator`) as a condition.
pub fn expected(json: &Json, conditional_operator: Option<&str>) -> Result<Condition, ValueError> {
    let mut conds = Vec::new();
    for (name, entry) in object(json)? {
        check_attribute_name(name)?;
        let entry = object(entry)?;
        let operator = entry.get("ComparisonOperator").and_then(Json::as_str);
        let exists = match entry.get("Exists") {
            None | Some(Json::Null) => None,
            Some(Json::Bool(b)) => Some(*b),
            Some(_) => return Err(shape("Expected a Boolean")),
        };
        let value = match entry.get("Value") {
            None | Some(Json::Null) => None,
            Some(v) => Some(AttributeValue::from_json(v)?),
        };
        let list = entry
            .get("AttributeValueList")
            .is_some_and(|v| !v.is_null());
        if let Some(operator) = operator {
            known_operator("expected", name, operator)?;
            if exists.is_some() {
                return Err(invalid(format_args!(
                    "Exists and ComparisonOperator cannot be used together for Attribute: {name}"
                )));
            }
            if list && value.is_some() {
                return Err(invalid(format_args!(
                    "Value and AttributeValueList cannot be used together for Attribute: {name}"
                )));
            }
            let args = match value {
                Some(v) => vec![v],
                None => values_list(entry)?,
            };
            conds.push(comparison(name, operator, args)?);
        } else if list {
            return Err(invalid(format_args!(
                "AttributeValueList can only be used with a ComparisonOperator for Attribute: {name}"
            )));
        } else {
            match (exists.unwrap_or(true), value) {
                (true, Some(v)) => conds.push(Cond::Compare(
                    Comparator::Eq,
                    Operand::Path(Path::attribute(name)),
                    Operand::Value(v),
                )),
                (true, None) => {
                    let shown = exists.map_or("null".to_owned(), |b| b.to_string());
                    return Err(invalid(format_args!(
                        "Value must be provided when Exists is {shown} for Attribute: {name}"
                    )));
                }
                (false, Some(_)) => {
                    return Err(invalid(format_args!(
                        "Value cannot be used when Exists is false for Attribute: {name}"
                    )));
                }
                (false, None) => conds.push(Cond::NotExists(Path::attribute(name))),
            }
        }
    }
    combine(conds, conditional_operator).map(Condition)
}

/// `QueryFilter` or `ScanFilter` (with `ConditionalOperator`) as a condition; `parameter` is
/// which, as DynamoDB spells it in messages (`queryFilter`, `scanFilter`).
pub fn query_filter(
    json: &Json,
    parameter: &str,
    conditional_operator: Option<&str>,
) -> Result<Condition, ValueError> {
    let mut conds = Vec::new();
    for (name, entry) in object(json)? {
        check_attribute_name(name)?;
        let entry = object(entry)?;
        let operator = entry
            .get("ComparisonOperator")
            .and_then(Json::as_str)
            .ok_or_else(|| invalid("ComparisonOperator must be provided"))?;
        known_operator(parameter, name, operator)?;
        conds.push(comparison(name, operator, values_list(entry)?)?);
    }
    combine(conds, conditional_operator).map(Condition)
}

/// `KeyConditions` as a key condition for a table or index with these keys.
pub fn key_conditions(
    json: &Json,
    hash_key: &str,
    range_key: Option<&str>,
) -> Result<KeyCondition, ValueError> {
    let cond = key_conditions_cond(json, 2)?;
    from_condition(cond, hash_key, range_key).map_err(ValueError::Validation)
}

/// `KeyConditions` as a key condition for a GSI with a multi-attribute key of these HASH and
/// RANGE attributes (one condition per key attribute at most).
pub fn composite_key_conditions(
    json: &Json,
    hashes: &[&str],
    ranges: &[&str],
) -> Result<CompositeKeyCondition, ValueError> {
    let cond = key_conditions_cond(json, hashes.len() + ranges.len())?;
    from_composite_condition(cond, hashes, ranges).map_err(ValueError::Validation)
}

/// The conditions of `KeyConditions` (at most `max` of them), ANDed.
fn key_conditions_cond(json: &Json, max: usize) -> Result<Cond, ValueError> {
    let mut conds = Vec::new();
    let entries = object(json)?;
    // dynalite's Query validation, checked against DynamoDB.
    if entries.len() > max {
        let message = match max {
            2 => "Conditions can be of length 1 or 2 only".to_string(),
            _ => format!("Conditions can be of length 1 to {max} only"),
        };
        return Err(ValueError::Validation(ValidationError(message)));
    }
    for (name, entry) in entries {
        check_attribute_name(name)?;
        let entry = object(entry)?;
        let operator = entry
            .get("ComparisonOperator")
            .and_then(Json::as_str)
            .ok_or_else(|| invalid("ComparisonOperator must be provided"))?;
        known_operator("keyConditions", name, operator)?;
        if !matches!(
            operator,
            "EQ" | "LE" | "LT" | "GE" | "GT" | "BEGINS_WITH" | "BETWEEN"
        ) {
            return Err(ValueError::Validation(ValidationError(format!(
                "Unsupported operator on KeyCondition: {operator}"
            ))));
        }
        conds.push(comparison(name, operator, values_list(entry)?)?);
    }
    combine(conds, None)
}

/// `AttributeUpdates` as an update.
pub fn attribute_updates(json: &Json) -> Result<Update, ValueError> {
    let mut actions = Vec::new();
    for (name, entry) in object(json)? {
        check_attribute_name(name)?;
        let entry = object(entry)?;
        let path = Path::attribute(name);
        let value = match entry.get("Value") {
            None | Some(Json::Null) => None,
            Some(v) => Some(AttributeValue::from_json(v)?),
        };
        let action = entry.get("Action").and_then(Json::as_str).unwrap_or("PUT");
        actions.push(match (action, value) {
            ("PUT", Some(v)) => Action::Set(path, SetValue::Value(v)),
            ("PUT", None) => {
                return Err(invalid(format_args!("Only DELETE action is allowed when no attribute value is specified: {name}")))
            }
            ("DELETE", None) => Action::Remove(path),
            ("DELETE", Some(v @ (AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)))) => Action::Delete(path, v),
            ("DELETE", Some(v)) => {
                return Err(invalid(format_args!("DELETE action with value is not supported for the type {}", v.type_name())))
            }
            ("ADD", Some(v @ (AttributeValue::N(_) | AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)))) => Action::Add(path, v),
            // Legacy ADD of a list appends to the list (creating it).
            ("ADD", Some(AttributeValue::L(l))) => Action::Set(
                path.clone(),
                SetValue::ListAppend(
                    Box::new(SetValue::IfNotExists(path, Box::new(SetValue::Value(AttributeValue::L(Vec::new()))))),
                    Box::new(SetValue::Value(AttributeValue::L(l))),
                ),
            ),
            ("ADD", Some(v)) => {
                return Err(invalid(format_args!("ADD action is not supported for the type {}", v.type_name())))
            }
            ("ADD", None) => {
                return Err(invalid(format_args!("Only DELETE action is allowed when no attribute value is specified: {name}")))
            }
            (other, _) => {
                return Err(ValueError::Validation(ValidationError(format!(
                    "1 validation error detected: Value '{other}' at 'attributeUpdates.{name}.member.action' failed to satisfy constraint: Member must satisfy enum value set: [ADD, PUT, DELETE]"
                ))))
            }
        });
    }
    Ok(Update {
        actions,
        legacy: true,
    })
}

/// `AttributesToGet` as a projection.
pub fn attributes_to_get(json: &Json) -> Result<Projection, ValueError> {
    let names = json
        .as_array()
        .ok_or_else(|| shape("Expected list or null"))?;
    if names.is_empty() {
        return Err(ValueError::Validation(ValidationError(
            "1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1".into(),
        )));
    }
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let n = n.as_str().ok_or_else(|| shape("Expected a String"))?;
        check_attribute_name(n)?;
        if out.iter().any(|x: &String| x == n) {
            return Err(invalid(format_args!(
                "Duplicate value in attribute name: {n}"
            )));
        }
        out.push(n.to_owned());
    }
    Ok(Projection::attributes(out))
}
