//! PartiQL trees as the item operations' expressions.
//!
//! A PartiQL condition is a condition expression in other words: [`Printer`] writes paths as
//! `#n` placeholders and values as `:v` placeholders (so no attribute name is ever a reserved
//! word and no value is ever printed), collecting `ExpressionAttributeNames` and
//! `ExpressionAttributeValues`. `IS MISSING` becomes `attribute_not_exists`, `IS NULL`
//! `attribute_type(..., 'NULL')`, `!=` `<>`. An UPDATE's `SET a = set_add(a, v)` and
//! `set_delete` become the update expression's `ADD` and `DELETE`.
//!
//! [`split_key`] finds the key equalities among a WHERE's top-level `AND` terms, which decide
//! between GetItem-like, Query and Scan access.

use serde_json::{Map, Value, json};

use super::parser::{Action, Expr, Operand, Path, Step};

/// Placeholders collected while printing expressions of one request.
#[derive(Debug, Default)]
pub(crate) struct Printer {
    names: Map<String, Value>,
    values: Map<String, Value>,
}

/// A printing failure: a construct the item operations have no words for.
pub(crate) type Printed = Result<String, String>;

impl Printer {
    /// `#n` for attribute `name` (one placeholder per distinct name).
    pub(crate) fn name(&mut self, name: &str) -> String {
        if let Some((k, _)) = self.names.iter().find(|(_, v)| v.as_str() == Some(name)) {
            return k.clone();
        }
        let key = format!("#n{}", self.names.len());
        self.names.insert(key.clone(), Value::String(name.into()));
        key
    }

    /// `:v` for `value`.
    pub(crate) fn value(&mut self, value: &Value) -> String {
        let key = format!(":v{}", self.values.len());
        self.values.insert(key.clone(), value.clone());
        key
    }

    pub(crate) fn path(&mut self, path: &Path) -> String {
        let mut out = String::new();
        for step in &path.0 {
            match step {
                Step::Name(n) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    let p = self.name(n);
                    out.push_str(&p);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    pub(crate) fn operand(&mut self, operand: &Operand) -> Printed {
        Ok(match operand {
            Operand::Path(p) => self.path(p),
            Operand::Value(v) => self.value(v),
            Operand::Add(a, b) => format!("{} + {}", self.operand(a)?, self.operand(b)?),
            Operand::Sub(a, b) => format!("{} - {}", self.operand(a)?, self.operand(b)?),
            Operand::Call(f, args) => {
                if !matches!(f.as_str(), "size" | "list_append" | "if_not_exists") {
                    return Err(format!("Unsupported function: {f}"));
                }
                format!("{f}({})", self.arguments(args)?)
            }
        })
    }

    fn arguments(&mut self, args: &[Operand]) -> Printed {
        let printed: Result<Vec<String>, String> = args.iter().map(|a| self.operand(a)).collect();
        Ok(printed?.join(", "))
    }

    pub(crate) fn condition(&mut self, expr: &Expr) -> Printed {
        Ok(match expr {
            Expr::Or(a, b) => format!("({}) OR ({})", self.condition(a)?, self.condition(b)?),
            Expr::And(a, b) => format!("({}) AND ({})", self.condition(a)?, self.condition(b)?),
            Expr::Not(a) => format!("NOT ({})", self.condition(a)?),
            Expr::Compare(a, op, b) => format!("{} {op} {}", self.operand(a)?, self.operand(b)?),
            Expr::Between(a, l, h) => format!(
                "{} BETWEEN {} AND {}",
                self.operand(a)?,
                self.operand(l)?,
                self.operand(h)?
            ),
            Expr::In(a, list) => format!("{} IN ({})", self.operand(a)?, self.arguments(list)?),
            Expr::Missing(p, true) => format!("attribute_not_exists({})", self.path(p)),
            Expr::Missing(p, false) => format!("attribute_exists({})", self.path(p)),
            Expr::Null(p, is) => {
                let t = self.value(&json!({"S": "NULL"}));
                let test = format!("attribute_type({}, {t})", self.path(p));
                if *is { test } else { format!("NOT {test}") }
            }
            Expr::Call(f, args) => format!("{f}({})", self.arguments(args)?),
        })
    }

    /// An UPDATE's actions as an update expression.
    pub(crate) fn update(&mut self, actions: &[Action]) -> Printed {
        let (mut set, mut remove, mut add, mut delete) = (vec![], vec![], vec![], vec![]);
        for action in actions {
            match action {
                Action::Remove(p) => remove.push(self.path(p)),
                Action::Set(p, Operand::Call(f, args)) if f == "set_add" || f == "set_delete" => {
                    let [Operand::Path(target), value] = args.as_slice() else {
                        return Err(format!("{f} takes a path and a set"));
                    };
                    if target != p {
                        return Err(format!("{f} must update the path it reads"));
                    }
                    let entry = format!("{} {}", self.path(p), self.operand(value)?);
                    if f == "set_add" {
                        add.push(entry)
                    } else {
                        delete.push(entry)
                    }
                }
                Action::Set(p, value) => {
                    let entry = format!("{} = {}", self.path(p), self.operand(value)?);
                    set.push(entry);
                }
            }
        }
        let mut out = Vec::new();
        for (word, list) in [
            ("SET", set),
            ("REMOVE", remove),
            ("ADD", add),
            ("DELETE", delete),
        ] {
            if !list.is_empty() {
                out.push(format!("{word} {}", list.join(", ")));
            }
        }
        Ok(out.join(" "))
    }

    /// Put the placeholders into `request`.
    pub(crate) fn finish(self, request: &mut Map<String, Value>) {
        if !self.names.is_empty() {
            request.insert("ExpressionAttributeNames".into(), Value::Object(self.names));
        }
        if !self.values.is_empty() {
            request.insert(
                "ExpressionAttributeValues".into(),
                Value::Object(self.values),
            );
        }
    }
}

/// A WHERE's top-level `AND` terms.
pub(crate) fn conjuncts(expr: Option<&Expr>) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut stack: Vec<&Expr> = expr.into_iter().collect();
    while let Some(e) = stack.pop() {
        match e {
            Expr::And(a, b) => {
                stack.push(b);
                stack.push(a);
            }
            other => out.push(other),
        }
    }
    out
}

/// The value a term compares top-level attribute `key` to with `=`, if it does.
pub(crate) fn equality<'a>(term: &'a Expr, key: &str) -> Option<&'a Value> {
    match term {
        Expr::Compare(Operand::Path(p), "=", Operand::Value(v))
        | Expr::Compare(Operand::Value(v), "=", Operand::Path(p))
            if p.attribute() == Some(key) =>
        {
            Some(v)
        }
        _ => None,
    }
}

/// Whether a term is a condition on the sort key `key` a key condition can hold.
pub(crate) fn sort_key_term(term: &Expr, key: &str) -> bool {
    let is_key = |o: &Operand| matches!(o, Operand::Path(p) if p.attribute() == Some(key));
    let is_value = |o: &Operand| matches!(o, Operand::Value(_));
    match term {
        Expr::Compare(a, op, b) => *op != "<>" && is_key(a) && is_value(b),
        Expr::Between(a, l, h) => is_key(a) && is_value(l) && is_value(h),
        Expr::Call(f, args) => {
            f == "begins_with" && args.len() == 2 && is_key(&args[0]) && is_value(&args[1])
        }
        _ => false,
    }
}

/// A WHERE that names a whole primary key with equalities: the key, and the other terms.
pub(crate) struct KeyedWhere<'a> {
    pub key: Map<String, Value>,
    pub rest: Vec<&'a Expr>,
}

/// The key `hash` (and `range`) the WHERE's equalities name, or `None` if they do not name it
/// whole (each key attribute once).
pub(crate) fn split_key<'a>(
    filter: Option<&'a Expr>,
    hash: &str,
    range: Option<&str>,
) -> Option<KeyedWhere<'a>> {
    let mut key = Map::new();
    let mut rest = Vec::new();
    for term in conjuncts(filter) {
        let name = [Some(hash), range]
            .into_iter()
            .flatten()
            .find(|k| equality(term, k).is_some() && !key.contains_key(*k));
        match name {
            Some(k) => {
                key.insert(k.to_string(), equality(term, k)?.clone());
            }
            None => rest.push(term),
        }
    }
    let whole = key.contains_key(hash) && range.is_none_or(|r| key.contains_key(r));
    whole.then_some(KeyedWhere { key, rest })
}

/// Whether `expr` reads one of the top-level attributes `names`.
pub(crate) fn mentions(expr: &Expr, names: &[&str]) -> bool {
    fn operand(o: &Operand, names: &[&str]) -> bool {
        match o {
            Operand::Path(p) => {
                matches!(p.0.first(), Some(Step::Name(n)) if names.contains(&n.as_str()))
            }
            Operand::Value(_) => false,
            Operand::Add(a, b) | Operand::Sub(a, b) => operand(a, names) || operand(b, names),
            Operand::Call(_, args) => args.iter().any(|a| operand(a, names)),
        }
    }
    match expr {
        Expr::Or(a, b) | Expr::And(a, b) => mentions(a, names) || mentions(b, names),
        Expr::Not(a) => mentions(a, names),
        Expr::Compare(a, _, b) => operand(a, names) || operand(b, names),
        Expr::Between(a, l, h) => [a, l, h].iter().any(|o| operand(o, names)),
        Expr::In(a, list) => operand(a, names) || list.iter().any(|o| operand(o, names)),
        Expr::Missing(p, _) | Expr::Null(p, _) => operand(&Operand::Path(p.clone()), names),
        Expr::Call(_, args) => args.iter().any(|a| operand(a, names)),
    }
}

/// Terms joined by `AND` as one condition expression (`None` for no terms).
pub(crate) fn and_all(printer: &mut Printer, terms: &[&Expr]) -> Result<Option<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for t in terms {
        out.push(format!("({})", printer.condition(t)?));
    }
    Ok((!out.is_empty()).then(|| out.join(" AND ")))
}

#[cfg(test)]
mod tests {
    use super::super::parser::{Statement, parse};
    use super::*;

    #[test]
    fn conditions_print_as_condition_expressions() {
        let Statement::Select(s) = parse(
            "SELECT * FROM T WHERE pk = 'a' AND sk >= 3 AND x IS MISSING AND y != ? AND size(z) > 2",
            &[json!({"N": "1"})],
        )
        .unwrap() else {
            panic!()
        };
        let split = split_key(s.filter.as_ref(), "pk", None).unwrap();
        assert_eq!(split.key["pk"], json!({"S": "a"}));
        assert_eq!(split.rest.len(), 4);
        assert!(sort_key_term(split.rest[0], "sk"));
        let mut p = Printer::default();
        let text = and_all(&mut p, &split.rest[1..]).unwrap().unwrap();
        assert_eq!(
            text,
            "(attribute_not_exists(#n0)) AND (#n1 <> :v0) AND (size(#n2) > :v1)"
        );
        assert!(split_key(s.filter.as_ref(), "pk", Some("other")).is_none());
    }

    #[test]
    fn updates_print_as_update_expressions() {
        let Statement::Update(u) = parse(
            "UPDATE T SET a = 1, b.c = b.c + 2, s = set_add(s, <<'x'>>) REMOVE d[0] WHERE pk = 'k'",
            &[],
        )
        .unwrap() else {
            panic!()
        };
        let mut p = Printer::default();
        assert_eq!(
            p.update(&u.actions).unwrap(),
            "SET #n0 = :v0, #n1.#n2 = #n1.#n2 + :v1 REMOVE #n4[0] ADD #n3 :v2"
        );
    }
}
