//! A recursive-descent parser of DynamoDB's PartiQL statements into [`Statement`]s.
//!
//! The grammar is DynamoDB's subset of PartiQL (`docs/dynamo-partiql.md`): `SELECT`, `INSERT
//! INTO ... VALUE`, `UPDATE ... SET/REMOVE ... WHERE`, `DELETE FROM ... WHERE` and, in
//! transactions, `EXISTS(SELECT ...)`. Parameters (`?`) are replaced by the request's
//! `Parameters` while parsing, and literals become attribute values in DynamoDB's JSON form,
//! so the tree carries values the item operations take as `ExpressionAttributeValues`.
//!
//! Limits: nesting (parentheses, literals, `NOT`) deeper than [`MAX_DEPTH`] is refused, so a
//! hostile statement cannot exhaust the stack; the statement's length is bounded by the caller.

use serde_json::{Map, Value, json};

use super::lexer::{Token, tokens};

/// The deepest nesting of parentheses, `NOT`s and literals a statement may have.
pub(crate) const MAX_DEPTH: usize = 32;

/// A parsed statement.
#[derive(Clone, Debug)]
pub(crate) enum Statement {
    Select(Select),
    Insert(Insert),
    Update(Update),
    Delete(Delete),
    /// `EXISTS(SELECT ...)`: a condition check, in transactions only.
    Exists(Select),
}

/// A table, or one of its indexes.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub table: String,
    pub index: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Select {
    pub from: Target,
    /// `None` for `*`.
    pub projection: Option<Vec<Path>>,
    pub filter: Option<Expr>,
}

#[derive(Clone, Debug)]
pub(crate) struct Insert {
    pub table: String,
    /// The item's attributes, values in DynamoDB's JSON form.
    pub item: Map<String, Value>,
}

#[derive(Clone, Debug)]
pub(crate) struct Update {
    pub table: String,
    pub actions: Vec<Action>,
    pub filter: Option<Expr>,
    pub returning: Option<Returning>,
}

#[derive(Clone, Debug)]
pub(crate) struct Delete {
    pub table: String,
    pub filter: Option<Expr>,
    pub returning: Option<Returning>,
}

/// An UPDATE's `SET path = value` or `REMOVE path`.
#[derive(Clone, Debug)]
pub(crate) enum Action {
    Set(Path, Operand),
    Remove(Path),
}

/// `RETURNING ... *`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Returning {
    AllOld,
    AllNew,
    ModifiedOld,
    ModifiedNew,
}

impl Returning {
    /// The `ReturnValues` of the equivalent item operation.
    pub(crate) fn return_values(self) -> &'static str {
        match self {
            Returning::AllOld => "ALL_OLD",
            Returning::AllNew => "ALL_NEW",
            Returning::ModifiedOld => "UPDATED_OLD",
            Returning::ModifiedNew => "UPDATED_NEW",
        }
    }

    pub(crate) fn words(self) -> &'static str {
        match self {
            Returning::AllOld => "ALL OLD",
            Returning::AllNew => "ALL NEW",
            Returning::ModifiedOld => "MODIFIED OLD",
            Returning::ModifiedNew => "MODIFIED NEW",
        }
    }
}

/// A document path: `a.b[1]."c d"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Path(pub Vec<Step>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Name(String),
    Index(u32),
}

impl Path {
    /// The attribute name, when the path is a top-level attribute.
    pub(crate) fn attribute(&self) -> Option<&str> {
        match self.0.as_slice() {
            [Step::Name(n)] => Some(n),
            _ => None,
        }
    }
}

/// A value in a condition or a SET.
#[derive(Clone, Debug)]
pub(crate) enum Operand {
    Path(Path),
    /// A literal or parameter, in DynamoDB's JSON form.
    Value(Value),
    Add(Box<Operand>, Box<Operand>),
    Sub(Box<Operand>, Box<Operand>),
    /// A function: `size`, `list_append`, `if_not_exists`, `set_add`, `set_delete`.
    Call(String, Vec<Operand>),
}

/// A condition.
#[derive(Clone, Debug)]
pub(crate) enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare(Operand, &'static str, Operand),
    Between(Operand, Operand, Operand),
    In(Operand, Vec<Operand>),
    /// `path IS [NOT] MISSING`: `true` for `IS MISSING`.
    Missing(Path, bool),
    /// `path IS [NOT] NULL`: `true` for `IS NULL`.
    Null(Path, bool),
    /// A boolean function: `begins_with`, `contains`, `attribute_exists`, ...
    Call(String, Vec<Operand>),
}

/// Parse `text` with `params` for its `?`s. The error is the detail after DynamoDB's
/// "Statement wasn't well formed, can't be processed: ".
pub(crate) fn parse(text: &str, params: &[Value]) -> Result<Statement, ParseError> {
    let tokens = tokens(text).map_err(ParseError::Syntax)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        params,
        used: 0,
        depth: 0,
    };
    let statement = p.statement()?;
    if let Some(t) = p.peek() {
        return Err(ParseError::Syntax(format!(
            "Unexpected token: {}",
            t.describe()
        )));
    }
    if p.used != params.len() {
        return Err(ParseError::Parameters);
    }
    Ok(statement)
}

/// Why a statement was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// Not well formed: the detail.
    Syntax(String),
    /// The statement's `?`s and the request's `Parameters` differ in number.
    Parameters,
}

struct Parser<'a> {
    tokens: Vec<Token>,
    pos: usize,
    params: &'a [Value],
    used: usize,
    depth: usize,
}

type Parsed<T> = Result<T, ParseError>;

fn syntax<T>(message: impl Into<String>) -> Parsed<T> {
    Err(ParseError::Syntax(message.into()))
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn unexpected<T>(&self) -> Parsed<T> {
        match self.peek() {
            Some(t) => syntax(format!("Unexpected token: {}", t.describe())),
            None => syntax("Unexpected end of statement"),
        }
    }

    /// Whether the next token is keyword `word` (consumed if so).
    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Ident(s)) if s.eq_ignore_ascii_case(word)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, word: &str) -> Parsed<()> {
        if self.keyword(word) {
            Ok(())
        } else {
            match self.peek() {
                Some(t) => syntax(format!("Expected {word}, found {}", t.describe())),
                None => syntax(format!("Expected {word}, found end of statement")),
            }
        }
    }

    fn symbol(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Token::Symbol(x)) if *x == s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_symbol(&mut self, s: &str) -> Parsed<()> {
        if self.symbol(s) {
            Ok(())
        } else {
            match self.peek() {
                Some(t) => syntax(format!("Expected '{s}', found {}", t.describe())),
                None => syntax(format!("Expected '{s}', found end of statement")),
            }
        }
    }

    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return syntax(format!("Statement nesting exceeds {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn statement(&mut self) -> Parsed<Statement> {
        if self.keyword("SELECT") {
            Ok(Statement::Select(self.select()?))
        } else if self.keyword("INSERT") {
            self.insert().map(Statement::Insert)
        } else if self.keyword("UPDATE") {
            self.update().map(Statement::Update)
        } else if self.keyword("DELETE") {
            self.delete().map(Statement::Delete)
        } else if self.keyword("EXISTS") {
            self.expect_symbol("(")?;
            self.expect_keyword("SELECT")?;
            let select = self.select()?;
            self.expect_symbol(")")?;
            Ok(Statement::Exists(select))
        } else {
            syntax("Expected data manipulation")
        }
    }

    /// An identifier, quoted or not.
    fn name(&mut self) -> Parsed<String> {
        match self.next() {
            Some(Token::Ident(s) | Token::Quoted(s)) => Ok(s),
            _ => {
                self.pos -= 1;
                self.unexpected()
            }
        }
    }

    fn select(&mut self) -> Parsed<Select> {
        let projection = if self.symbol("*") {
            None
        } else {
            let mut paths = vec![self.path()?];
            while self.symbol(",") {
                paths.push(self.path()?);
            }
            Some(paths)
        };
        self.expect_keyword("FROM")?;
        let table = self.name()?;
        let index = if self.symbol(".") {
            Some(self.name()?)
        } else {
            None
        };
        let filter = self.where_clause()?;
        Ok(Select {
            from: Target { table, index },
            projection,
            filter,
        })
    }

    fn where_clause(&mut self) -> Parsed<Option<Expr>> {
        if self.keyword("WHERE") {
            Ok(Some(self.condition()?))
        } else {
            Ok(None)
        }
    }

    fn insert(&mut self) -> Parsed<Insert> {
        self.expect_keyword("INTO")?;
        let table = self.name()?;
        self.expect_keyword("VALUE")?;
        let Value::Object(mut value) = self.literal()? else {
            return syntax("INSERT's VALUE must be a map: {'attribute': value, ...}");
        };
        let item = match value.remove("M") {
            Some(Value::Object(m)) => m,
            _ => return syntax("INSERT's VALUE must be a map: {'attribute': value, ...}"),
        };
        Ok(Insert { table, item })
    }

    fn update(&mut self) -> Parsed<Update> {
        let table = self.name()?;
        let mut actions = Vec::new();
        loop {
            if self.keyword("SET") {
                loop {
                    let path = self.path()?;
                    self.expect_symbol("=")?;
                    actions.push(Action::Set(path, self.operand()?));
                    if !self.symbol(",") {
                        break;
                    }
                }
            } else if self.keyword("REMOVE") {
                loop {
                    actions.push(Action::Remove(self.path()?));
                    if !self.symbol(",") {
                        break;
                    }
                }
            } else {
                break;
            }
        }
        if actions.is_empty() {
            return self.unexpected();
        }
        let filter = self.where_clause()?;
        let returning = self.returning()?;
        Ok(Update {
            table,
            actions,
            filter,
            returning,
        })
    }

    fn delete(&mut self) -> Parsed<Delete> {
        self.expect_keyword("FROM")?;
        let table = self.name()?;
        let filter = self.where_clause()?;
        let returning = self.returning()?;
        Ok(Delete {
            table,
            filter,
            returning,
        })
    }

    fn returning(&mut self) -> Parsed<Option<Returning>> {
        if !self.keyword("RETURNING") {
            return Ok(None);
        }
        let all = if self.keyword("ALL") {
            true
        } else if self.keyword("MODIFIED") {
            false
        } else {
            return self.unexpected();
        };
        let new = if self.keyword("NEW") {
            true
        } else if self.keyword("OLD") {
            false
        } else {
            return self.unexpected();
        };
        self.expect_symbol("*")?;
        Ok(Some(match (all, new) {
            (true, true) => Returning::AllNew,
            (true, false) => Returning::AllOld,
            (false, true) => Returning::ModifiedNew,
            (false, false) => Returning::ModifiedOld,
        }))
    }

    /// `a.b[1]."c"`.
    fn path(&mut self) -> Parsed<Path> {
        let mut steps = vec![Step::Name(self.name()?)];
        loop {
            if self.symbol(".") {
                steps.push(Step::Name(self.name()?));
            } else if self.symbol("[") {
                match self.next() {
                    Some(Token::Number(n)) => match n.parse::<u32>() {
                        Ok(i) => steps.push(Step::Index(i)),
                        Err(_) => return syntax(format!("Invalid list index: {n}")),
                    },
                    Some(Token::Str(s)) => steps.push(Step::Name(s)),
                    _ => {
                        self.pos -= 1;
                        return self.unexpected();
                    }
                }
                self.expect_symbol("]")?;
            } else {
                return Ok(Path(steps));
            }
        }
    }

    fn condition(&mut self) -> Parsed<Expr> {
        self.enter()?;
        let mut left = self.conjunction()?;
        while self.keyword("OR") {
            left = Expr::Or(Box::new(left), Box::new(self.conjunction()?));
        }
        self.leave();
        Ok(left)
    }

    fn conjunction(&mut self) -> Parsed<Expr> {
        let mut left = self.negation()?;
        while self.keyword("AND") {
            left = Expr::And(Box::new(left), Box::new(self.negation()?));
        }
        Ok(left)
    }

    fn negation(&mut self) -> Parsed<Expr> {
        if self.keyword("NOT") {
            self.enter()?;
            let inner = self.negation()?;
            self.leave();
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Parsed<Expr> {
        // A parenthesized condition, unless it is a parenthesized operand (rare; not kept).
        if self.symbol("(") {
            let inner = self.condition()?;
            self.expect_symbol(")")?;
            return Ok(inner);
        }
        // A boolean function.
        if let (Some(Token::Ident(f)), Some(Token::Symbol("("))) =
            (self.tokens.get(self.pos), self.tokens.get(self.pos + 1))
        {
            let f = f.to_ascii_lowercase();
            if matches!(
                f.as_str(),
                "begins_with"
                    | "contains"
                    | "attribute_exists"
                    | "attribute_not_exists"
                    | "attribute_type"
            ) {
                self.pos += 2;
                let args = self.arguments()?;
                return Ok(Expr::Call(f, args));
            }
        }
        let left = self.operand()?;
        if self.keyword("IS") {
            let not = self.keyword("NOT");
            let Operand::Path(path) = left else {
                return syntax("IS applies to a document path");
            };
            if self.keyword("MISSING") {
                return Ok(Expr::Missing(path, !not));
            }
            if self.keyword("NULL") {
                return Ok(Expr::Null(path, !not));
            }
            return self.unexpected();
        }
        if self.keyword("BETWEEN") {
            let low = self.operand()?;
            self.expect_keyword("AND")?;
            let high = self.operand()?;
            return Ok(Expr::Between(left, low, high));
        }
        if self.keyword("IN") {
            let close = if self.symbol("(") {
                ")"
            } else if self.symbol("[") {
                "]"
            } else {
                return self.unexpected();
            };
            let mut list = vec![self.operand()?];
            while self.symbol(",") {
                list.push(self.operand()?);
            }
            self.expect_symbol(close)?;
            return Ok(Expr::In(left, list));
        }
        let op = match self.peek() {
            Some(Token::Symbol(s)) if matches!(*s, "=" | "<>" | "!=" | "<" | "<=" | ">" | ">=") => {
                let op = if *s == "!=" { "<>" } else { *s };
                self.pos += 1;
                op
            }
            _ => return self.unexpected(),
        };
        let right = self.operand()?;
        Ok(Expr::Compare(left, op, right))
    }

    /// A function's arguments after its `(`, through the `)`.
    fn arguments(&mut self) -> Parsed<Vec<Operand>> {
        self.enter()?;
        let mut args = Vec::new();
        if !self.symbol(")") {
            loop {
                args.push(self.operand()?);
                if self.symbol(")") {
                    break;
                }
                self.expect_symbol(",")?;
            }
        }
        self.leave();
        Ok(args)
    }

    /// An operand: a term, or terms joined by `+` / `-`.
    fn operand(&mut self) -> Parsed<Operand> {
        let mut left = self.term()?;
        loop {
            if self.symbol("+") {
                left = Operand::Add(Box::new(left), Box::new(self.term()?));
            } else if self.symbol("-") {
                left = Operand::Sub(Box::new(left), Box::new(self.term()?));
            } else {
                return Ok(left);
            }
        }
    }

    fn term(&mut self) -> Parsed<Operand> {
        match self.peek() {
            Some(Token::Ident(f))
                if matches!(self.tokens.get(self.pos + 1), Some(Token::Symbol("("))) =>
            {
                let f = f.to_ascii_lowercase();
                self.pos += 2;
                let args = self.arguments()?;
                Ok(Operand::Call(f, args))
            }
            Some(Token::Ident(w))
                if ["true", "false", "null", "missing"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k)) =>
            {
                Ok(Operand::Value(self.literal()?))
            }
            Some(Token::Ident(_) | Token::Quoted(_)) => Ok(Operand::Path(self.path()?)),
            _ => Ok(Operand::Value(self.literal()?)),
        }
    }

    /// A literal or a parameter, as an attribute value.
    fn literal(&mut self) -> Parsed<Value> {
        self.enter()?;
        let value = self.literal_inner();
        self.leave();
        value
    }

    fn literal_inner(&mut self) -> Parsed<Value> {
        match self.next() {
            Some(Token::Param) => {
                let Some(v) = self.params.get(self.used) else {
                    return Err(ParseError::Parameters);
                };
                self.used += 1;
                Ok(v.clone())
            }
            Some(Token::Str(s)) => Ok(json!({ "S": s })),
            Some(Token::Number(n)) => Ok(json!({ "N": n })),
            Some(Token::Symbol("-")) => match self.next() {
                Some(Token::Number(n)) => Ok(json!({ "N": format!("-{n}") })),
                _ => {
                    self.pos -= 1;
                    self.unexpected()
                }
            },
            Some(Token::Ident(w)) if w.eq_ignore_ascii_case("true") => Ok(json!({ "BOOL": true })),
            Some(Token::Ident(w)) if w.eq_ignore_ascii_case("false") => {
                Ok(json!({ "BOOL": false }))
            }
            Some(Token::Ident(w)) if w.eq_ignore_ascii_case("null") => Ok(json!({ "NULL": true })),
            Some(Token::Ident(w)) if w.eq_ignore_ascii_case("missing") => {
                syntax("MISSING is not a value; use IS MISSING")
            }
            Some(Token::Symbol("[")) => {
                let mut list = Vec::new();
                if !self.symbol("]") {
                    loop {
                        list.push(self.literal()?);
                        if self.symbol("]") {
                            break;
                        }
                        self.expect_symbol(",")?;
                    }
                }
                Ok(json!({ "L": list }))
            }
            Some(Token::Symbol("{")) => {
                let mut map = Map::new();
                if !self.symbol("}") {
                    loop {
                        let key = match self.next() {
                            Some(Token::Str(s)) => s,
                            _ => {
                                self.pos -= 1;
                                return self.unexpected();
                            }
                        };
                        self.expect_symbol(":")?;
                        let value = self.literal()?;
                        map.insert(key, value);
                        if self.symbol("}") {
                            break;
                        }
                        self.expect_symbol(",")?;
                    }
                }
                Ok(json!({ "M": map }))
            }
            Some(Token::Symbol("<<")) => {
                let mut members = Vec::new();
                if !self.symbol(">>") {
                    loop {
                        members.push(self.literal()?);
                        if self.symbol(">>") {
                            break;
                        }
                        self.expect_symbol(",")?;
                    }
                }
                set_of(members)
            }
            _ => {
                self.pos -= 1;
                self.unexpected()
            }
        }
    }
}

/// `<<a, b>>` as an SS, NS or BS: every member must be of the one scalar type.
fn set_of(members: Vec<Value>) -> Parsed<Value> {
    let mut kind: Option<String> = None;
    let mut out = Vec::with_capacity(members.len());
    for m in members {
        let Value::Object(o) = m else {
            return syntax("Invalid set member");
        };
        let Some((k, v)) = o.into_iter().next() else {
            return syntax("Invalid set member");
        };
        if !matches!(k.as_str(), "S" | "N" | "B") || kind.as_ref().is_some_and(|x| *x != k) {
            return syntax("Set members must all be strings, all numbers or all binaries");
        }
        kind = Some(k);
        out.push(v);
    }
    let Some(kind) = kind else {
        return syntax("A set cannot be empty");
    };
    let mut set = Map::new();
    set.insert(format!("{kind}S"), Value::Array(out));
    Ok(Value::Object(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Statement {
        parse(text, &[]).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    #[test]
    fn parses_each_statement_kind() {
        let Statement::Select(s) = ok(
            r#"SELECT a, b.c[1] FROM "T"."I" WHERE pk = 'x' AND NOT (n > 1 OR begins_with(s, 'a'))"#,
        ) else {
            panic!()
        };
        assert_eq!(s.from.index.as_deref(), Some("I"));
        assert_eq!(s.projection.unwrap().len(), 2);
        let Statement::Insert(i) =
            ok("INSERT INTO T VALUE {'pk': 'a', 'n': -1, 's': <<'x','y'>>, 'l': [1, {'m': null}]}")
        else {
            panic!()
        };
        assert_eq!(i.item["s"], json!({"SS": ["x", "y"]}));
        assert_eq!(i.item["n"], json!({"N": "-1"}));
        let Statement::Update(u) = ok(
            "UPDATE T SET a = 1, b.c = b.c + 2 REMOVE d WHERE pk = 'k' RETURNING MODIFIED NEW *",
        ) else {
            panic!()
        };
        assert_eq!(u.actions.len(), 3);
        assert_eq!(u.returning, Some(Returning::ModifiedNew));
        assert!(matches!(
            ok("DELETE FROM T WHERE pk = 'k' AND x IS NOT MISSING RETURNING ALL OLD *"),
            Statement::Delete(_)
        ));
        assert!(matches!(
            ok("EXISTS(SELECT * FROM T WHERE pk = 'k')"),
            Statement::Exists(_)
        ));
    }

    #[test]
    fn parameters_are_counted() {
        let p = [json!({"S": "a"})];
        assert!(parse("SELECT * FROM T WHERE pk = ?", &p).is_ok());
        assert_eq!(
            parse("SELECT * FROM T WHERE pk = ? AND x = ?", &p).unwrap_err(),
            ParseError::Parameters
        );
        assert_eq!(
            parse("SELECT * FROM T", &p).unwrap_err(),
            ParseError::Parameters
        );
    }

    #[test]
    fn refuses_malformed_statements_without_panicking() {
        for text in [
            "",
            "SELEC * FROM T",
            "SELECT FROM",
            "SELECT * FROM T WHERE",
            "UPDATE T WHERE pk = 1",
            "INSERT INTO T VALUE 'x'",
            "SELECT * FROM T WHERE a IN",
            "DELETE FROM T RETURNING ALL",
            "SELECT * FROM T WHERE a = <<>>",
            "SELECT * FROM T WHERE a = <<1, 'x'>>",
            "SELECT * FROM T x",
            "SELECT * FROM T WHERE a[x] = 1",
            "SELECT * FROM T WHERE -",
        ] {
            assert!(
                matches!(parse(text, &[]), Err(ParseError::Syntax(_))),
                "{text}"
            );
        }
        let deep = format!(
            "SELECT * FROM T WHERE {}a = 1{}",
            "(".repeat(1000),
            ")".repeat(1000)
        );
        assert!(parse(&deep, &[]).is_err());
        let deep = format!("INSERT INTO T VALUE {}", "[".repeat(1000));
        assert!(parse(&deep, &[]).is_err());
        let nots = format!("SELECT * FROM T WHERE {} a = 1", "NOT ".repeat(1000));
        assert!(parse(&nots, &[]).is_err());
    }

    /// Words and symbols the grammar knows, so random statements get past the first token.
    const PIECES: &[&str] = &[
        "SELECT",
        "*",
        "FROM",
        "\"T\"",
        ".",
        "\"I\"",
        "WHERE",
        "pk",
        "=",
        "?",
        "'s'",
        "1",
        "-2.5",
        "AND",
        "OR",
        "NOT",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "<<",
        ">>",
        ",",
        ":",
        "IN",
        "BETWEEN",
        "IS",
        "MISSING",
        "NULL",
        "begins_with",
        "size",
        "INSERT",
        "INTO",
        "VALUE",
        "UPDATE",
        "SET",
        "REMOVE",
        "DELETE",
        "RETURNING",
        "ALL",
        "OLD",
        "NEW",
        "EXISTS",
        "+",
        "<>",
        "<=",
        "true",
        "null",
        "'k'",
        "a.b",
        "[0]",
    ];

    proptest::proptest! {
        #[test]
        fn never_panics_on_any_statement(
            pieces in proptest::collection::vec(0..PIECES.len(), 0..60),
            noise in ".{0,40}",
        ) {
            let text: Vec<&str> = pieces.iter().map(|i| PIECES[*i]).collect();
            let text = format!("{} {noise}", text.join(" "));
            let params = [json!({"S": "p"}), json!({"N": "1"})];
            // What parses also translates without panicking.
            let mut printer = super::super::translate::Printer::default();
            match parse(&text, &params) {
                Ok(Statement::Select(s) | Statement::Exists(s)) => {
                    if let Some(f) = &s.filter {
                        let _ = printer.condition(f);
                    }
                    let _ = super::super::translate::split_key(s.filter.as_ref(), "pk", Some("a"));
                }
                Ok(Statement::Update(u)) => {
                    let _ = printer.update(&u.actions);
                }
                _ => {}
            }
            let _ = parse(&noise, &[]);
        }
    }
}
