//! DynamoDB's expression language: condition, filter, key-condition, projection and update
//! expressions, parsed by a hand-written lexer and recursive-descent parser (`lexer.rs`,
//! `parser.rs`, grammar in its module doc) into a tree (`ast.rs`) that `eval.rs` evaluates on
//! an item and `update.rs` applies. `legacy.rs` turns the pre-expression parameters
//! (Expected, AttributeUpdates, KeyConditions, QueryFilter/ScanFilter, AttributesToGet) into
//! the same trees, so one evaluator serves both.
//!
//! `#names` and `:values` are substituted while parsing; one [`Expressions`] holds the
//! placeholders of a request, so that names and values used by none of its expressions are
//! refused at [`Expressions::finish`] with DynamoDB's message. The single-expression helpers
//! ([`parse_condition`], [`parse_update`], ...) do both steps.
//!
//! Every error is a [`ValidationError`] whose message is DynamoDB's, prefixed by the
//! expression kind (`Invalid UpdateExpression: ...`) where DynamoDB prefixes it. The
//! deliberate differences from DynamoDB are listed in `docs/dynamo-expressions.md`.

mod ast;
mod eval;
mod key;
mod legacy;
mod lexer;
mod parser;
mod reserved;
mod update;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub use ast::{Comparator, Path, PathElement};
pub use key::{CompositeKeyCondition, KeyCondition, RangeCondition};
pub use legacy::{
    GET_PARAMETERS, Parameters, QUERY_PARAMETERS, SCAN_PARAMETERS, UPDATE_PARAMETERS,
    WRITE_PARAMETERS, attribute_updates, attributes_to_get, check_parameters,
    composite_key_conditions, expected, key_conditions, query_filter,
};
pub use parser::{MAX_EXPRESSION_BYTES, MAX_IN_OPERANDS, MAX_PATH_DEPTH};
pub use reserved::is_reserved;

pub use crate::value::ValidationError;
use crate::value::{AttributeValue, Item, Map};

/// Which request parameter an expression came from; it names the expression in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ConditionExpression`
    Condition,
    /// `FilterExpression`
    Filter,
    /// `KeyConditionExpression`
    KeyCondition,
    /// `ProjectionExpression`
    Projection,
    /// `UpdateExpression`
    Update,
}

impl Kind {
    /// The request parameter's name.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Condition => "ConditionExpression",
            Kind::Filter => "FilterExpression",
            Kind::KeyCondition => "KeyConditionExpression",
            Kind::Projection => "ProjectionExpression",
            Kind::Update => "UpdateExpression",
        }
    }
}

/// The request's `ExpressionAttributeNames` and `ExpressionAttributeValues`, and which of
/// them the expressions used.
#[derive(Debug)]
pub(crate) struct Placeholders<'a> {
    names: &'a HashMap<String, String>,
    values: &'a HashMap<String, AttributeValue>,
    used_names: HashSet<String>,
    used_values: HashSet<String>,
    /// The top-level attributes of the paths that go inside one (`a.b`, `a[0]`).
    nested: BTreeSet<String>,
}

impl Placeholders<'_> {
    fn name(&mut self, placeholder: &str) -> Option<String> {
        let n = self.names.get(placeholder)?;
        self.used_names.insert(placeholder.to_owned());
        Some(n.clone())
    }

    fn value(&mut self, placeholder: &str) -> Option<AttributeValue> {
        let v = self.values.get(placeholder)?;
        self.used_values.insert(placeholder.to_owned());
        Some(v.clone())
    }
}

/// The expressions of one request, sharing its names and values.
#[derive(Debug)]
pub struct Expressions<'a> {
    placeholders: Placeholders<'a>,
}

impl<'a> Expressions<'a> {
    /// Starts parsing a request's expressions with its placeholders.
    pub fn new(
        names: &'a HashMap<String, String>,
        values: &'a HashMap<String, AttributeValue>,
    ) -> Self {
        Expressions {
            placeholders: Placeholders {
                names,
                values,
                used_names: HashSet::new(),
                used_values: HashSet::new(),
                nested: BTreeSet::new(),
            },
        }
    }

    fn parse_condition(&mut self, text: &str, kind: Kind) -> Result<ast::Cond, ValidationError> {
        let mut p = parser::Parser::new(text, kind, &mut self.placeholders)?;
        let cond = p.condition()?;
        p.expect_end()?;
        Ok(cond)
    }

    /// Parses a `ConditionExpression`.
    pub fn condition(&mut self, text: &str) -> Result<Condition, ValidationError> {
        self.parse_condition(text, Kind::Condition).map(Condition)
    }

    /// Parses a `FilterExpression`.
    pub fn filter(&mut self, text: &str) -> Result<Condition, ValidationError> {
        self.parse_condition(text, Kind::Filter).map(Condition)
    }

    /// Parses a `KeyConditionExpression` for a table or index with these key attributes.
    pub fn key_condition(
        &mut self,
        text: &str,
        hash_key: &str,
        range_key: Option<&str>,
    ) -> Result<KeyCondition, ValidationError> {
        let cond = self.parse_condition(text, Kind::KeyCondition)?;
        key::from_condition(cond, hash_key, range_key)
    }

    /// Parses a `KeyConditionExpression` on a multi-attribute GSI key with these HASH and
    /// RANGE attributes.
    pub fn composite_key_condition(
        &mut self,
        text: &str,
        hashes: &[&str],
        ranges: &[&str],
    ) -> Result<CompositeKeyCondition, ValidationError> {
        let cond = self.parse_condition(text, Kind::KeyCondition)?;
        key::from_composite_condition(cond, hashes, ranges)
    }

    /// Parses a `ProjectionExpression`.
    pub fn projection(&mut self, text: &str) -> Result<Projection, ValidationError> {
        let mut p = parser::Parser::new(text, Kind::Projection, &mut self.placeholders)?;
        Ok(Projection::from_paths(p.projection()?))
    }

    /// Parses an `UpdateExpression`.
    pub fn update(&mut self, text: &str) -> Result<Update, ValidationError> {
        let mut p = parser::Parser::new(text, Kind::Update, &mut self.placeholders)?;
        Ok(Update {
            actions: p.update()?,
            legacy: false,
        })
    }

    /// Refuses a document path inside a key attribute (`pk.a`, `pk[0]`): `keys` are the
    /// table's, `index_keys` its indexes', named as DynamoDB names them in its refusal.
    pub fn scalar_keys<'k>(
        &self,
        keys: impl IntoIterator<Item = &'k str>,
        index_keys: impl IntoIterator<Item = &'k str>,
    ) -> Result<(), ValidationError> {
        let nested = &self.placeholders.nested;
        if nested.is_empty() {
            return Ok(());
        }
        let found = keys
            .into_iter()
            .map(|k| ("Key", k))
            .chain(index_keys.into_iter().map(|k| ("IndexKey", k)))
            .find(|(_, k)| nested.contains(*k));
        match found {
            Some((what, k)) => Err(ValidationError(format!(
                "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: {what}: {k}"
            ))),
            None => Ok(()),
        }
    }

    /// Refuses names and values that no expression used.
    pub fn finish(self) -> Result<(), ValidationError> {
        let p = self.placeholders;
        for (kind, all, used) in [
            (
                "ExpressionAttributeNames",
                p.names.keys().collect::<BTreeSet<_>>(),
                &p.used_names,
            ),
            (
                "ExpressionAttributeValues",
                p.values.keys().collect::<BTreeSet<_>>(),
                &p.used_values,
            ),
        ] {
            let unused: Vec<&str> = all
                .into_iter()
                .filter(|k| !used.contains(*k))
                .map(String::as_str)
                .collect();
            if !unused.is_empty() {
                return Err(ValidationError(format!(
                    "Value provided in {kind} unused in expressions: keys: {{{}}}",
                    unused.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// Parses a lone `ConditionExpression` and checks every name and value is used.
pub fn parse_condition(
    text: &str,
    names: &HashMap<String, String>,
    values: &HashMap<String, AttributeValue>,
) -> Result<Condition, ValidationError> {
    let mut e = Expressions::new(names, values);
    let c = e.condition(text)?;
    e.finish()?;
    Ok(c)
}

/// Parses a lone `UpdateExpression` and checks every name and value is used.
pub fn parse_update(
    text: &str,
    names: &HashMap<String, String>,
    values: &HashMap<String, AttributeValue>,
) -> Result<Update, ValidationError> {
    let mut e = Expressions::new(names, values);
    let u = e.update(text)?;
    e.finish()?;
    Ok(u)
}

/// Parses a lone `ProjectionExpression` and checks every name is used.
pub fn parse_projection(
    text: &str,
    names: &HashMap<String, String>,
) -> Result<Projection, ValidationError> {
    let values = HashMap::new();
    let mut e = Expressions::new(names, &values);
    let p = e.projection(text)?;
    e.finish()?;
    Ok(p)
}

/// Parses a lone `KeyConditionExpression` and checks every name and value is used.
pub fn parse_key_condition(
    text: &str,
    names: &HashMap<String, String>,
    values: &HashMap<String, AttributeValue>,
    hash_key: &str,
    range_key: Option<&str>,
) -> Result<KeyCondition, ValidationError> {
    let mut e = Expressions::new(names, values);
    let k = e.key_condition(text, hash_key, range_key)?;
    e.finish()?;
    Ok(k)
}

/// A parsed condition or filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition(ast::Cond);

impl Condition {
    /// The condition that always holds (no condition given).
    pub fn always() -> Condition {
        Condition(ast::Cond::True)
    }

    /// True if `item` satisfies the condition. A missing item is an empty item.
    pub fn eval(&self, item: &Item) -> bool {
        eval::eval(&self.0, item)
    }

    /// The top-level attributes the condition reads.
    pub fn attributes(&self) -> BTreeSet<&str> {
        fn operand<'c>(o: &'c ast::Operand, out: &mut BTreeSet<&'c str>) {
            match o {
                ast::Operand::Path(p) | ast::Operand::Size(p) => {
                    out.insert(p.top());
                }
                ast::Operand::Value(_) => {}
            }
        }
        fn walk<'c>(c: &'c ast::Cond, out: &mut BTreeSet<&'c str>) {
            match c {
                ast::Cond::True => {}
                ast::Cond::Compare(_, a, b)
                | ast::Cond::BeginsWith(a, b)
                | ast::Cond::Contains(a, b) => {
                    operand(a, out);
                    operand(b, out);
                }
                ast::Cond::Between(a, b, c) => {
                    for o in [a, b, c] {
                        operand(o, out);
                    }
                }
                ast::Cond::In(a, list) => {
                    operand(a, out);
                    for o in list {
                        operand(o, out);
                    }
                }
                ast::Cond::And(a, b) | ast::Cond::Or(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                ast::Cond::Not(a) => walk(a, out),
                ast::Cond::Exists(p) | ast::Cond::NotExists(p) => {
                    out.insert(p.top());
                }
                ast::Cond::AttributeType(a, t) => {
                    operand(a, out);
                    operand(t, out);
                }
            }
        }
        let mut out = BTreeSet::new();
        walk(&self.0, &mut out);
        out
    }
}

/// A parsed update: its actions in the order written.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    actions: Vec<ast::Action>,
    /// From `AttributeUpdates`, whose type mismatches DynamoDB words its own way.
    legacy: bool,
}

impl Update {
    /// Applies the update to `item`, returning the new item and the names of the top-level
    /// attributes the update touched. `exists` is false for an item that does not exist yet
    /// (`item` then holds at most its key): a REMOVE or DELETE through a path the item lacks
    /// (`REMOVE a.b` without a map `a`) is refused on an item that exists and removes nothing
    /// on one that does not, as in DynamoDB.
    pub fn apply(
        &self,
        item: &Item,
        exists: bool,
    ) -> Result<(Item, BTreeSet<String>), ValidationError> {
        let (new, changed) = update::apply(&self.actions, item, exists).map_err(|e| {
            if self.legacy && e.0 == update::BAD_TYPE {
                ValidationError(update::LEGACY_TYPE_MISMATCH.into())
            } else {
                e
            }
        })?;
        Ok((Item(new), changed))
    }

    /// The top-level attributes the update writes or removes, known before any item is read:
    /// DynamoDB refuses an update of a key attribute by these, before it looks at values.
    pub fn attributes(&self) -> BTreeSet<&str> {
        self.actions.iter().map(|a| a.path().top()).collect()
    }

    /// Whether every action removes (REMOVE, or DELETE from a set): such an update of an item
    /// that does not exist leaves it not existing, as in DynamoDB, where any other update (even
    /// one with no actions) creates the item.
    pub fn only_removes(&self) -> bool {
        !self.actions.is_empty()
            && self
                .actions
                .iter()
                .all(|a| matches!(a, ast::Action::Remove(_) | ast::Action::Delete(..)))
    }

    /// The paths the update writes or removes, as a projection: applied to the old and new
    /// items it gives DynamoDB's `UPDATED_OLD` and `UPDATED_NEW`.
    pub fn updated_paths(&self) -> Projection {
        Projection::from_paths(self.actions.iter().map(|a| a.path().clone()).collect())
    }
}

/// What to keep of an item: a tree of document paths.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Projection {
    root: BTreeMap<String, Node>,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    All,
    Map(BTreeMap<String, Node>),
    List(BTreeMap<u32, Node>),
}

impl Projection {
    /// A projection of these paths.
    pub fn from_paths(paths: Vec<Path>) -> Projection {
        let mut root: BTreeMap<String, Node> = BTreeMap::new();
        for path in paths {
            let mut elements = path.0.into_iter();
            let Some(PathElement::Name(top)) = elements.next() else {
                continue;
            };
            let mut slot = root.entry(top).or_insert(Node::Map(BTreeMap::new()));
            let mut covered = false;
            for e in elements {
                if *slot == Node::All {
                    covered = true;
                    break;
                }
                slot = match e {
                    PathElement::Name(n) => {
                        if !matches!(slot, Node::Map(_)) {
                            *slot = Node::Map(BTreeMap::new());
                        }
                        let Node::Map(m) = slot else { unreachable!() };
                        m.entry(n).or_insert(Node::Map(BTreeMap::new()))
                    }
                    PathElement::Index(i) => {
                        if !matches!(slot, Node::List(_)) {
                            *slot = Node::List(BTreeMap::new());
                        }
                        let Node::List(l) = slot else { unreachable!() };
                        l.entry(i).or_insert(Node::Map(BTreeMap::new()))
                    }
                };
            }
            // The path's end is taken whole (a shorter path covers longer ones).
            if !covered {
                *slot = Node::All;
            }
        }
        Projection { root }
    }

    /// A projection of top-level attributes (`AttributesToGet`).
    pub fn attributes<I: IntoIterator<Item = String>>(names: I) -> Projection {
        Projection::from_paths(names.into_iter().map(Path::attribute).collect())
    }

    /// The top-level attributes the projection reads.
    pub fn top_level_names(&self) -> impl Iterator<Item = &str> {
        self.root.keys().map(String::as_str)
    }

    /// The parts of `item` the projection names; list elements keep their order, compacted.
    pub fn apply(&self, item: &Item) -> Item {
        Item(project_map(&self.root, item))
    }
}

fn project_map(nodes: &BTreeMap<String, Node>, map: &Map) -> Map {
    nodes
        .iter()
        .filter_map(|(name, node)| Some((name.clone(), project(node, map.get(name)?)?)))
        .collect()
}

fn project(node: &Node, value: &AttributeValue) -> Option<AttributeValue> {
    match (node, value) {
        (Node::All, v) => Some(v.clone()),
        (Node::Map(children), AttributeValue::M(m)) => {
            let out = project_map(children, m);
            (!out.is_empty()).then_some(AttributeValue::M(out))
        }
        (Node::List(children), AttributeValue::L(l)) => {
            let out: Vec<AttributeValue> = children
                .iter()
                .filter_map(|(i, n)| project(n, l.get(*i as usize)?))
                .collect();
            (!out.is_empty()).then_some(AttributeValue::L(out))
        }
        _ => None,
    }
}
