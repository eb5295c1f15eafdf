//! The parser of condition, filter, key-condition, projection and update expressions, by
//! descent, substituting `#names` and `:values` as it goes.
//!
//! Condition grammar, loosest binding first (DynamoDB's precedence: comparators, IN, BETWEEN,
//! functions, parentheses, NOT, AND, OR):
//!
//! ```text
//! condition := and (OR and)*
//! and       := not (AND not)*
//! not       := NOT not | primary
//! primary   := '(' condition ')' | comparison
//! comparison:= function '(' operand (',' operand)* ')'      -- attribute_exists, ..., contains
//!            | operand comparator operand
//!            | operand BETWEEN operand AND operand
//!            | operand IN '(' operand (',' operand)* ')'
//! operand   := path | :value | size '(' path ')'
//! path      := (name | #name) ('.' (name | #name) | '[' digits ']')*
//! ```
//!
//! The first four rules are folded with explicit stacks (a shunting-yard over NOT, AND, OR and
//! parentheses), so that no input, however deeply it nests, recurses; a condition is bounded
//! by DynamoDB's 300 operators instead. Only function arguments recurse, at most 32 deep.
//!
//! Update grammar: `(SET set (',' set)* | REMOVE path (',' path)* | ADD path :value (',' ...)*
//! | DELETE path :value (',' ...)*)+`, each clause at most once, where `set := path '='
//! value (('+' | '-') value)?` (the whole or either side in parentheses, at most 32 deep) and `value := path | :value | if_not_exists '(' path ',' value
//! ')' | list_append '(' value ',' value ')'`: a function's arguments are values, never sums,
//! and a list_append directly inside another is refused (as DynamoDB does).

use super::ast::{Action, Comparator, Cond, Operand, Path, PathElement, SetValue};
use super::lexer::{Tok, Token, near, near_bad_char, tokenize};
use super::reserved::is_reserved;
use super::{Kind, Placeholders};
use crate::value::{AttributeValue, ValidationError};

/// The longest expression DynamoDB accepts, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 4096;
/// The most operands on the right of IN.
pub const MAX_IN_OPERANDS: usize = 100;
/// The most elements a document path may have.
pub const MAX_PATH_DEPTH: usize = 32;
/// The most operators (comparators, BETWEEN, IN, AND, OR, NOT; not functions or
/// parentheses) a condition may have, as DynamoDB counts them.
pub const MAX_OPERATORS: usize = 300;
/// Functions nested in each other's arguments beyond this are refused, which bounds the
/// parser's only recursion (parentheses and NOTs are folded without it). A condition nests
/// functions two deep at most (`begins_with(size(a), :v)`); an update value may alternate
/// `if_not_exists` and `list_append` without end, which nobody needs 32 deep.
const MAX_FUNCTION_NESTING: usize = 32;

/// AND, OR and NOT, the operators that join conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Logical {
    Not,
    And,
    Or,
}

impl Logical {
    /// How tightly it binds: NOT, then AND, then OR.
    fn binding(self) -> u8 {
        match self {
            Logical::Not => 3,
            Logical::And => 2,
            Logical::Or => 1,
        }
    }
}

/// One level of parentheses (or the whole condition) being folded: its conditions and the
/// operators waiting for their right operands, as a shunting-yard keeps them.
struct Group {
    /// The token index of its `(`; `None` for the whole condition.
    open: Option<usize>,
    operands: Vec<Cond>,
    operators: Vec<Logical>,
    /// The token span of the last group closed inside it, to know a redundant `((c))`.
    last_group: Option<(usize, usize)>,
}

impl Group {
    fn new(open: Option<usize>) -> Group {
        Group {
            open,
            operands: Vec::new(),
            operators: Vec::new(),
            last_group: None,
        }
    }

    /// Applies the NOTs waiting for the operand just completed.
    fn fold_nots(&mut self) {
        while self.operators.last() == Some(&Logical::Not) {
            self.operators.pop();
            let c = self.operands.pop().expect("a NOT waits for an operand");
            self.operands.push(Cond::Not(Box::new(c)));
        }
    }

    /// Folds the operators that bind at least as tightly as `next` (so AND and OR are left
    /// associative and AND binds before OR), then lets `next` wait.
    fn push_binary(&mut self, next: Logical) {
        while let Some(&top) = self.operators.last() {
            if top.binding() < next.binding() {
                break;
            }
            self.fold_top();
        }
        self.operators.push(next);
    }

    fn fold_top(&mut self) {
        let op = self.operators.pop().expect("an operator waits");
        let right = self
            .operands
            .pop()
            .expect("a binary operator has two operands");
        let left = self
            .operands
            .pop()
            .expect("a binary operator has two operands");
        self.operands.push(match op {
            Logical::And => Cond::And(Box::new(left), Box::new(right)),
            Logical::Or => Cond::Or(Box::new(left), Box::new(right)),
            Logical::Not => unreachable!("NOTs are folded as their operand completes"),
        });
    }

    /// The group's one condition.
    fn finish(mut self) -> Cond {
        while !self.operators.is_empty() {
            self.fold_top();
        }
        self.operands.pop().expect("a group holds a condition")
    }
}

const CONDITION_FUNCTIONS: &[&str] = &[
    "attribute_exists",
    "attribute_not_exists",
    "attribute_type",
    "begins_with",
    "contains",
];
const ATTRIBUTE_TYPES: &[&str] = &["S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"];

pub(crate) struct Parser<'t, 'p, 'a> {
    text: &'t str,
    tokens: Vec<Token>,
    pos: usize,
    kind: Kind,
    placeholders: &'p mut Placeholders<'a>,
    depth: usize,
    /// Operators of the condition parsed so far ([`MAX_OPERATORS`]).
    operators: usize,
}

/// DynamoDB's name of a value's type in update-operator messages.
fn long_type_name(v: &AttributeValue) -> &'static str {
    match v {
        AttributeValue::S(_) => "STRING",
        AttributeValue::N(_) => "NUMBER",
        AttributeValue::B(_) => "BINARY",
        AttributeValue::Bool(_) => "BOOLEAN",
        AttributeValue::Null => "NULL",
        AttributeValue::M(_) => "MAP",
        AttributeValue::L(_) => "LIST",
        AttributeValue::Ss(_) => "STRING_SET",
        AttributeValue::Ns(_) => "NUMBER_SET",
        AttributeValue::Bs(_) => "BINARY_SET",
    }
}

impl<'t, 'p, 'a> Parser<'t, 'p, 'a> {
    pub(crate) fn new(
        text: &'t str,
        kind: Kind,
        placeholders: &'p mut Placeholders<'a>,
    ) -> Result<Self, ValidationError> {
        let invalid = |m: String| ValidationError(format!("Invalid {}: {m}", kind.label()));
        if text.len() > MAX_EXPRESSION_BYTES {
            return Err(invalid(format!(
                "Expression size has exceeded the maximum allowed size; expression size: {}",
                text.len()
            )));
        }
        if text.trim().is_empty() {
            return Err(invalid("The expression can not be empty;".into()));
        }
        let tokens = tokenize(text).map_err(|bad| {
            invalid(format!(
                "Syntax error; token: \"{}\", near: \"{}\"",
                &text[bad.start..bad.end],
                near_bad_char(text, &bad)
            ))
        })?;
        Ok(Parser {
            text,
            tokens,
            pos: 0,
            kind,
            placeholders,
            depth: 0,
            operators: 0,
        })
    }

    fn err(&self, message: impl std::fmt::Display) -> ValidationError {
        ValidationError(format!("Invalid {}: {message}", self.kind.label()))
    }

    fn syntax_error(&self) -> ValidationError {
        let t = &self.tokens[self.pos];
        let token = if t.tok == Tok::Eof {
            "<EOF>"
        } else {
            &self.text[t.start..t.end]
        };
        self.err(format_args!(
            "Syntax error; token: \"{token}\", near: \"{}\"",
            near(self.text, &self.tokens, self.pos)
        ))
    }

    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        let i = (self.pos + ahead).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }

    fn advance(&mut self) -> Tok {
        let t = self.tokens[self.pos].tok.clone();
        if t != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn expect(&mut self, tok: Tok) -> Result<(), ValidationError> {
        if *self.peek() == tok {
            self.advance();
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), ValidationError> {
        if self.peek().is_keyword(keyword) {
            self.advance();
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    pub(crate) fn expect_end(&mut self) -> Result<(), ValidationError> {
        self.expect(Tok::Eof)
    }

    fn enter(&mut self) -> Result<(), ValidationError> {
        self.depth += 1;
        if self.depth > MAX_FUNCTION_NESTING {
            return Err(self.err(format_args!(
                "The expression has too many nested levels; nesting levels: {}",
                self.depth
            )));
        }
        Ok(())
    }

    /// Counts one operator of a condition.
    fn operator(&mut self) -> Result<(), ValidationError> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(self.err(format_args!(
                "The expression contains too many operators; operator count: {}",
                self.operators
            )));
        }
        Ok(())
    }

    fn name_element(&mut self) -> Result<String, ValidationError> {
        match self.peek().clone() {
            Tok::Word(w) => {
                if is_reserved(&w) {
                    return Err(self.err(format_args!(
                        "Attribute name is a reserved keyword; reserved keyword: {w}"
                    )));
                }
                self.advance();
                Ok(w)
            }
            Tok::Name(n) => {
                let resolved = self.placeholders.name(&n).ok_or_else(|| {
                    self.err(format_args!(
                        "An expression attribute name used in the document path is not defined; attribute name: {n}"
                    ))
                })?;
                self.advance();
                Ok(resolved)
            }
            _ => Err(self.syntax_error()),
        }
    }

    pub(crate) fn path(&mut self) -> Result<Path, ValidationError> {
        let mut elements = vec![PathElement::Name(self.name_element()?)];
        loop {
            match self.peek() {
                Tok::Dot => {
                    self.advance();
                    elements.push(PathElement::Name(self.name_element()?));
                }
                Tok::LBracket => {
                    self.advance();
                    let Tok::Digits(d) = self.peek().clone() else {
                        return Err(self.syntax_error());
                    };
                    let index: u32 = d.parse().map_err(|_| self.syntax_error())?;
                    self.advance();
                    self.expect(Tok::RBracket)?;
                    elements.push(PathElement::Index(index));
                }
                _ => break,
            }
        }
        if elements.len() > MAX_PATH_DEPTH {
            return Err(self.err(format_args!(
                "The document path has too many nesting levels; nesting levels: {}",
                elements.len()
            )));
        }
        if let [PathElement::Name(top), _, ..] = elements.as_slice() {
            self.placeholders.nested.insert(top.clone());
        }
        Ok(Path(elements))
    }

    fn value(&mut self) -> Result<AttributeValue, ValidationError> {
        let Tok::Value(v) = self.peek().clone() else {
            return Err(self.syntax_error());
        };
        let value = self.placeholders.value(&v).ok_or_else(|| {
            self.err(format_args!(
                "An expression attribute value used in expression is not defined; attribute value: {v}"
            ))
        })?;
        self.advance();
        Ok(value)
    }

    fn is_function_call(&self) -> bool {
        matches!(self.peek(), Tok::Word(_)) && *self.peek_at(1) == Tok::LParen
    }

    // ---- conditions ----

    /// A condition: its NOTs, ANDs, ORs and parentheses folded with explicit stacks, so no
    /// input recurses; the comparisons and functions between them are [`Self::comparison`]s.
    pub(crate) fn condition(&mut self) -> Result<Cond, ValidationError> {
        let mut groups = vec![Group::new(None)];
        loop {
            // An operand: NOTs and opening parentheses, then a comparison or function.
            loop {
                let group = groups.last_mut().expect("the outermost group stays");
                if self.peek().is_keyword("NOT") {
                    self.advance();
                    group.operators.push(Logical::Not);
                    self.operator()?;
                } else if *self.peek() == Tok::LParen {
                    groups.push(Group::new(Some(self.pos)));
                    self.advance();
                } else {
                    let c = self.comparison()?;
                    group.operands.push(c);
                    break;
                }
            }
            // What follows an operand: AND, OR, a closing parenthesis, or the end.
            loop {
                let group = groups.last_mut().expect("the outermost group stays");
                group.fold_nots();
                let next = if self.peek().is_keyword("AND") {
                    Logical::And
                } else if self.peek().is_keyword("OR") {
                    Logical::Or
                } else if *self.peek() == Tok::RParen && group.open.is_some() {
                    let close = self.pos;
                    self.advance();
                    let inner = groups.pop().expect("a group is open");
                    let open = inner.open.expect("checked above");
                    // `((c))`: DynamoDB refuses a group whose only content is another group.
                    if inner.last_group == Some((open + 1, close - 1)) {
                        return Err(self.err("The expression has redundant parentheses;"));
                    }
                    let outer = groups.last_mut().expect("the outermost group stays");
                    outer.operands.push(inner.finish());
                    outer.last_group = Some((open, close));
                    continue;
                } else if groups.len() > 1 {
                    return Err(self.syntax_error());
                } else {
                    let outermost = groups.pop().expect("the outermost group stays");
                    return Ok(outermost.finish());
                };
                self.advance();
                self.operator()?;
                group.push_binary(next);
                break;
            }
        }
    }

    /// A comparison, BETWEEN, IN or condition function: what a condition joins.
    fn comparison(&mut self) -> Result<Cond, ValidationError> {
        if self.is_function_call() {
            let Tok::Word(name) = self.peek().clone() else {
                unreachable!()
            };
            if CONDITION_FUNCTIONS.contains(&name.as_str()) {
                let cond = self.condition_function(&name)?;
                if self.comparator().is_some()
                    || self.peek().is_keyword("BETWEEN")
                    || self.peek().is_keyword("IN")
                {
                    return Err(self.misused_function(&name));
                }
                return Ok(cond);
            }
        }
        let left = self.operand()?;
        if let Some(c) = self.comparator() {
            self.advance();
            self.operator()?;
            let right = self.operand()?;
            self.distinct(c.symbol(), &left, &right)?;
            if !matches!(c, Comparator::Eq | Comparator::Ne) {
                for o in [&left, &right] {
                    self.orderable(c.symbol(), o)?;
                }
            }
            return Ok(Cond::Compare(c, left, right));
        }
        if self.peek().is_keyword("BETWEEN") {
            self.advance();
            self.operator()?;
            let low = self.operand()?;
            self.expect_keyword("AND")?;
            let high = self.operand()?;
            // An operand that cannot be ordered is refused before bounds of unlike types.
            for o in [&left, &low, &high] {
                self.orderable("BETWEEN", o)?;
            }
            if let (Operand::Value(l), Operand::Value(h)) = (&low, &high) {
                if l.type_name() != h.type_name() {
                    return Err(self.err(format_args!(
                        "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                        l.type_name(), short(l), h.type_name(), short(h)
                    )));
                }
                if super::eval::compare_values(l, h) == Some(std::cmp::Ordering::Greater) {
                    return Err(self.err(format_args!(
                        "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                        l.type_name(), short(l), h.type_name(), short(h)
                    )));
                }
            }
            return Ok(Cond::Between(left, low, high));
        }
        if self.peek().is_keyword("IN") {
            self.advance();
            self.operator()?;
            self.expect(Tok::LParen)?;
            let mut list = vec![self.operand()?];
            while *self.peek() == Tok::Comma {
                self.advance();
                list.push(self.operand()?);
            }
            self.expect(Tok::RParen)?;
            if list.len() > MAX_IN_OPERANDS {
                return Err(self.err(format_args!(
                    "The IN operator is provided with too many operands; number of operands: {}",
                    list.len()
                )));
            }
            return Ok(Cond::In(left, list));
        }
        if matches!(left, Operand::Size(_)) && *self.peek() == Tok::Eof {
            return Err(self.err(
                "The function is not allowed to be used this way in an expression; function: size",
            ));
        }
        Err(self.syntax_error())
    }

    /// The comparator at the current token, if it is one.
    fn comparator(&self) -> Option<Comparator> {
        match self.peek() {
            Tok::Eq => Some(Comparator::Eq),
            Tok::Ne => Some(Comparator::Ne),
            Tok::Lt => Some(Comparator::Lt),
            Tok::Le => Some(Comparator::Le),
            Tok::Gt => Some(Comparator::Gt),
            Tok::Ge => Some(Comparator::Ge),
            _ => None,
        }
    }

    fn misused_function(&self, name: &str) -> ValidationError {
        self.err(format_args!(
            "The function is not allowed to be used this way in an expression; function: {name}"
        ))
    }

    /// Refuses an operator or function whose first operand is the same path as its second
    /// (`a = a`, `contains(s, s)`), which can only ever give one answer.
    fn distinct(
        &self,
        what: &str,
        first: &Operand,
        second: &Operand,
    ) -> Result<(), ValidationError> {
        match (first, second) {
            (Operand::Path(a), Operand::Path(b)) if a == b => Err(self.err(format_args!(
                "The first operand must be distinct from the remaining operands for this operator or function; operator: {what}, first operand: {a}"
            ))),
            _ => Ok(()),
        }
    }

    /// Refuses a value operand of an ordering (`<`, BETWEEN) that is not a number, string or
    /// binary: such a comparison could never hold.
    fn orderable(&self, what: &str, o: &Operand) -> Result<(), ValidationError> {
        match o {
            Operand::Value(
                v @ (AttributeValue::Bool(_)
                | AttributeValue::Null
                | AttributeValue::M(_)
                | AttributeValue::L(_)
                | AttributeValue::Ss(_)
                | AttributeValue::Ns(_)
                | AttributeValue::Bs(_)),
            ) => Err(self.operand_type(what, v)),
            _ => Ok(()),
        }
    }

    fn operand(&mut self) -> Result<Operand, ValidationError> {
        if self.is_function_call() {
            let Tok::Word(name) = self.peek().clone() else {
                unreachable!()
            };
            if name == "size" {
                let args = self.function_arguments(&name, |p| p.operand())?;
                let [arg] = <[Operand; 1]>::try_from(args)
                    .map_err(|a| self.operand_count(&name, a.len()))?;
                let Operand::Path(path) = arg else {
                    return Err(self.requires_path(&name));
                };
                return Ok(Operand::Size(path));
            }
            if CONDITION_FUNCTIONS.contains(&name.as_str()) {
                return Err(self.misused_function(&name));
            }
            if matches!(name.as_str(), "if_not_exists" | "list_append") {
                return Err(self.err(format_args!(
                    "The function is not allowed in a {} expression; function: {name}",
                    match self.kind {
                        Kind::Filter => "filter",
                        Kind::KeyCondition => "key condition",
                        _ => "condition",
                    }
                )));
            }
            return Err(self.err(format_args!("Invalid function name; function: {name}")));
        }
        match self.peek() {
            Tok::Value(_) => Ok(Operand::Value(self.value()?)),
            Tok::Word(_) | Tok::Name(_) => Ok(Operand::Path(self.path()?)),
            _ => Err(self.syntax_error()),
        }
    }

    fn function_arguments<T>(
        &mut self,
        _name: &str,
        mut argument: impl FnMut(&mut Self) -> Result<T, ValidationError>,
    ) -> Result<Vec<T>, ValidationError> {
        self.advance(); // the name
        self.expect(Tok::LParen)?;
        self.enter()?;
        let mut args = vec![argument(self)?];
        while *self.peek() == Tok::Comma {
            self.advance();
            args.push(argument(self)?);
        }
        self.depth -= 1;
        self.expect(Tok::RParen)?;
        Ok(args)
    }

    fn operand_count(&self, name: &str, count: usize) -> ValidationError {
        self.err(format_args!(
            "Incorrect number of operands for operator or function; operator or function: {name}, number of operands: {count}"
        ))
    }

    fn requires_path(&self, name: &str) -> ValidationError {
        self.err(format_args!(
            "Operator or function requires a document path; operator or function: {name}"
        ))
    }

    fn operand_type(&self, name: &str, v: &AttributeValue) -> ValidationError {
        self.operand_type_named(name, v.type_name())
    }

    fn operand_type_named(&self, name: &str, type_name: &str) -> ValidationError {
        self.err(format_args!(
            "Incorrect operand type for operator or function; operator or function: {name}, operand type: {type_name}"
        ))
    }

    fn condition_function(&mut self, name: &str) -> Result<Cond, ValidationError> {
        let args = self.function_arguments(name, |p| p.operand())?;
        let wanted = match name {
            "attribute_exists" | "attribute_not_exists" => 1,
            _ => 2,
        };
        if args.len() != wanted {
            return Err(self.operand_count(name, args.len()));
        }
        let mut args = args.into_iter();
        let first = args.next().unwrap_or(Operand::Value(AttributeValue::Null));
        let second = args.next();
        match (name, first, second) {
            ("attribute_exists", Operand::Path(p), None) => Ok(Cond::Exists(p)),
            ("attribute_not_exists", Operand::Path(p), None) => Ok(Cond::NotExists(p)),
            // The first operand may be a value as well as a path (`attribute_type(:v, :t)`, which
            // DynamoDB accepts though its guide shows a path); the type must be a value, so that
            // it is known before any item is read.
            ("attribute_type", a, Some(t)) => {
                self.distinct(name, &a, &t)?;
                match &t {
                    Operand::Value(AttributeValue::S(s))
                        if !ATTRIBUTE_TYPES.contains(&s.as_str()) =>
                    {
                        return Err(self.err(format_args!(
                            "Invalid attribute type name found; type: {s}, valid types: {{ B,NULL,SS,BOOL,L,BS,N,NS,S,M }}"
                        )));
                    }
                    Operand::Value(AttributeValue::S(_)) => {}
                    Operand::Value(other) => return Err(self.operand_type(name, other)),
                    // size() is a number; a path's type is any of them until the item is read,
                    // which DynamoDB writes as the set of every type.
                    Operand::Size(_) => {
                        return Err(self.operand_type_named(name, "N"));
                    }
                    Operand::Path(_) => {
                        return Err(self.operand_type_named(name, "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}"));
                    }
                }
                Ok(Cond::AttributeType(a, t))
            }
            ("begins_with", a, Some(b)) => {
                self.distinct(name, &a, &b)?;
                for op in [&a, &b] {
                    if let Operand::Value(v) = op
                        && !matches!(v, AttributeValue::S(_) | AttributeValue::B(_))
                    {
                        return Err(self.operand_type(name, v));
                    }
                }
                Ok(Cond::BeginsWith(a, b))
            }
            ("contains", a, Some(b)) => {
                self.distinct(name, &a, &b)?;
                Ok(Cond::Contains(a, b))
            }
            _ => Err(self.requires_path(name)),
        }
    }

    // ---- updates ----

    pub(crate) fn update(&mut self) -> Result<Vec<Action>, ValidationError> {
        let mut actions = Vec::new();
        let mut seen: Vec<&'static str> = Vec::new();
        loop {
            let clause = match self.peek() {
                t if t.is_keyword("SET") => "SET",
                t if t.is_keyword("REMOVE") => "REMOVE",
                t if t.is_keyword("ADD") => "ADD",
                t if t.is_keyword("DELETE") => "DELETE",
                _ => return Err(self.syntax_error()),
            };
            if seen.contains(&clause) {
                return Err(self.err(format_args!(
                    "The \"{clause}\" section can only be used once in an update expression;"
                )));
            }
            seen.push(clause);
            self.advance();
            loop {
                actions.push(self.action(clause)?);
                if *self.peek() != Tok::Comma {
                    break;
                }
                self.advance();
            }
            if *self.peek() == Tok::Eof {
                break;
            }
        }
        check_overlaps(actions.iter().map(Action::path)).map_err(|m| self.err(m))?;
        Ok(actions)
    }

    fn action(&mut self, clause: &str) -> Result<Action, ValidationError> {
        let path = self.path()?;
        match clause {
            "SET" => {
                self.expect(Tok::Eq)?;
                Ok(Action::Set(path, self.set_value()?))
            }
            "REMOVE" => Ok(Action::Remove(path)),
            _ => {
                let value = self.value()?;
                let fits = matches!(
                    (clause, &value),
                    ("ADD", AttributeValue::N(_))
                        | (
                            _,
                            AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)
                        )
                );
                if !fits {
                    return Err(self.err(format_args!(
                        "Incorrect operand type for operator or function; operator: {clause}, operand type: {}",
                        long_type_name(&value)
                    )));
                }
                Ok(if clause == "ADD" {
                    Action::Add(path, value)
                } else {
                    Action::Delete(path, value)
                })
            }
        }
    }

    /// A SET action's value: `operand`, `operand + operand`, `operand - operand`, each part
    /// or the whole in parentheses (`set a = ((b) + (c))`, which DynamoDB takes).
    fn set_value(&mut self) -> Result<SetValue, ValidationError> {
        if *self.peek() == Tok::LParen {
            // The whole value in parentheses, unless they close an operand of a sum.
            let start = self.pos;
            self.advance();
            self.enter()?;
            let inner = self.set_value();
            self.depth -= 1;
            if let Ok(v) = inner
                && *self.peek() == Tok::RParen
                && !matches!(self.peek_at(1), Tok::Plus | Tok::Minus)
            {
                self.advance();
                return Ok(v);
            }
            self.pos = start;
        }
        let left = self.parenthesised_operand()?;
        match self.peek() {
            Tok::Plus => {
                self.advance();
                Ok(SetValue::Plus(
                    Box::new(left),
                    Box::new(self.parenthesised_operand()?),
                ))
            }
            Tok::Minus => {
                self.advance();
                Ok(SetValue::Minus(
                    Box::new(left),
                    Box::new(self.parenthesised_operand()?),
                ))
            }
            _ => Ok(left),
        }
    }

    /// An operand of a SET value, in any number of parentheses (`(c[1])`).
    fn parenthesised_operand(&mut self) -> Result<SetValue, ValidationError> {
        if *self.peek() != Tok::LParen {
            return self.set_operand();
        }
        self.advance();
        self.enter()?;
        let operand = self.parenthesised_operand();
        self.depth -= 1;
        let operand = operand?;
        self.expect(Tok::RParen)?;
        Ok(operand)
    }

    fn set_operand(&mut self) -> Result<SetValue, ValidationError> {
        if self.is_function_call() {
            let Tok::Word(name) = self.peek().clone() else {
                unreachable!()
            };
            return match name.as_str() {
                "if_not_exists" | "list_append" => {
                    // A function's arguments are operands, not sums: `if_not_exists(a, :v + :w)` is
                    // a syntax error at the `+` in DynamoDB, which only has `f(x) + :y`.
                    let args = self.function_arguments(&name, |p| p.set_operand())?;
                    let [a, b] = <[SetValue; 2]>::try_from(args)
                        .map_err(|a| self.operand_count(&name, a.len()))?;
                    if name == "if_not_exists" {
                        let SetValue::Path(p) = a else {
                            return Err(self.requires_path(&name));
                        };
                        Ok(SetValue::IfNotExists(p, Box::new(b)))
                    } else {
                        for v in [&a, &b] {
                            match v {
                                SetValue::Value(v) if !matches!(v, AttributeValue::L(_)) => {
                                    return Err(self.operand_type(&name, v));
                                }
                                // DynamoDB refuses a list_append inside another (an
                                // if_not_exists inside one is fine), though it parses it.
                                SetValue::ListAppend(..) => {
                                    return Err(self.misused_function(&name));
                                }
                                _ => {}
                            }
                        }
                        Ok(SetValue::ListAppend(Box::new(a), Box::new(b)))
                    }
                }
                "size" => Err(self.err(format_args!(
                    "The function is not allowed in an update expression; function: {name}"
                ))),
                n if CONDITION_FUNCTIONS.contains(&n) => Err(self.err(format_args!(
                    "The function is not allowed in an update expression; function: {name}"
                ))),
                _ => Err(self.err(format_args!("Invalid function name; function: {name}"))),
            };
        }
        match self.peek() {
            Tok::Value(_) => Ok(SetValue::Value(self.value()?)),
            Tok::Word(_) | Tok::Name(_) => Ok(SetValue::Path(self.path()?)),
            _ => Err(self.syntax_error()),
        }
    }

    // ---- projections ----

    pub(crate) fn projection(&mut self) -> Result<Vec<Path>, ValidationError> {
        let mut paths = vec![self.path()?];
        while *self.peek() == Tok::Comma {
            self.advance();
            paths.push(self.path()?);
        }
        self.expect_end()?;
        check_overlaps(paths.iter()).map_err(|m| self.err(m))?;
        Ok(paths)
    }
}

/// A short text of a value for messages.
fn short(v: &AttributeValue) -> String {
    match v {
        AttributeValue::S(s) => s.clone(),
        AttributeValue::N(n) => n.to_string(),
        other => other.to_json().to_string(),
    }
}

/// Refuses two paths where one is a prefix of the other (overlap) or where one indexes a list
/// and the other names a map key at the same place (conflict).
pub(crate) fn check_overlaps<'x>(paths: impl Iterator<Item = &'x Path>) -> Result<(), String> {
    let paths: Vec<&Path> = paths.collect();
    for (i, one) in paths.iter().enumerate() {
        for two in &paths[i + 1..] {
            let mut related = true;
            let mut conflict = false;
            for (a, b) in one.0.iter().zip(two.0.iter()) {
                if a != b {
                    related = false;
                    conflict = matches!(
                        (a, b),
                        (PathElement::Name(_), PathElement::Index(_))
                            | (PathElement::Index(_), PathElement::Name(_))
                    );
                    break;
                }
            }
            if related {
                return Err(format!(
                    "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: {one}, path two: {two}"
                ));
            }
            if conflict {
                return Err(format!(
                    "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: {one}, path two: {two}"
                ));
            }
        }
    }
    Ok(())
}
