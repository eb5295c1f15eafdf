//! `INSERT`, `UPDATE`, `DELETE` and `BATCH` (Parser.g's `insertStatement`,
//! `updateStatement`, `deleteStatement`, `batchStatement`, `usingClause`,
//! `columnOperation`, `columnCondition`).

use super::super::ast::{
    Assignment, AssignmentOp, Batch, BatchKind, BatchStatement, Condition, ConditionPredicate,
    Delete, DeleteTarget, ElementSelector, IfClause, Insert, InsertValues, Name, Term, Update,
    Using,
};
use super::super::keyword::Keyword;
use super::super::token::TokenKind;
use super::names::NameRole;
use super::{Parser, Result};

impl Parser<'_> {
    /// `insertStatement`
    pub(super) fn insert(&mut self) -> Result<Insert> {
        self.expect_keyword(Keyword::Insert)?;
        self.expect_keyword(Keyword::Into)?;
        let table = self.qualified_name()?;
        let values = if self.eat_keyword(Keyword::Json) {
            let value = match &self.peek().kind {
                TokenKind::String(json) => {
                    let json = json.clone();
                    self.advance();
                    Term::Literal(super::super::ast::Literal::String(json))
                }
                TokenKind::QuestionMark | TokenKind::Colon => Term::Marker(self.marker()?),
                _ => return Err(self.mismatched(&["STRING_LITERAL", "QMARK", "':'"])),
            };
            let mut default_unset = false;
            if self.eat_keyword(Keyword::Default) {
                if self.eat_keyword(Keyword::Unset) {
                    default_unset = true;
                } else if !self.eat_keyword(Keyword::Null) {
                    return Err(self.mismatched(&["K_NULL", "K_UNSET"]));
                }
            }
            InsertValues::Json {
                value,
                default_unset,
            }
        } else {
            self.columns_and_values()?
        };
        // Cassandra takes `IF NOT EXISTS` before `USING`; either order is accepted here.
        let mut if_not_exists = self.if_not_exists()?;
        let using = self.using()?;
        if !if_not_exists {
            if_not_exists = self.if_not_exists()?;
        }
        Ok(Insert {
            table,
            values,
            if_not_exists,
            using,
        })
    }

    /// `(a, b) VALUES (x, y)`
    fn columns_and_values(&mut self) -> Result<InsertValues> {
        self.expect(TokenKind::LeftParen)?;
        let mut columns = vec![self.cident()?];
        while self.eat(&TokenKind::Comma) {
            columns.push(self.cident()?);
        }
        self.expect(TokenKind::RightParen)?;
        self.expect_keyword(Keyword::Values)?;
        let open = self.pos;
        self.expect(TokenKind::LeftParen)?;
        let values = self.term_list(TokenKind::RightParen)?;
        if values.is_empty() {
            return Err(self.no_viable_at(self.pos - 1));
        }
        if values.len() != columns.len() {
            return Err(self.invalid_at(open, "Unmatched column names/values".to_string()));
        }
        Ok(InsertValues::Columns { columns, values })
    }

    fn no_viable_at(&mut self, index: usize) -> super::ParseError {
        self.pos = index;
        self.no_viable()
    }

    /// `usingClause`, if next: `USING TTL t AND TIMESTAMP ts`.
    pub(super) fn using(&mut self) -> Result<Using> {
        let mut using = Using::default();
        if !self.eat_keyword(Keyword::Using) {
            return Ok(using);
        }
        loop {
            let index = self.pos;
            let slot = if self.eat_keyword(Keyword::Ttl) {
                &mut using.ttl
            } else if self.eat_keyword(Keyword::Timestamp) {
                &mut using.timestamp
            } else {
                return Err(self.mismatched(&["K_TIMESTAMP", "K_TTL"]));
            };
            if slot.is_some() {
                let what = self.offending(index).to_uppercase();
                return Err(self.invalid_at(index, format!("{what} given more than once")));
            }
            *slot = Some(self.int_value()?);
            if !self.eat_keyword(Keyword::And) {
                return Ok(using);
            }
        }
    }

    /// `updateStatement`
    pub(super) fn update(&mut self) -> Result<Update> {
        self.expect_keyword(Keyword::Update)?;
        let table = self.qualified_name()?;
        let using = self.using()?;
        self.expect_keyword(Keyword::Set)?;
        let mut assignments: Vec<Assignment> = Vec::new();
        loop {
            let start = self.pos;
            let a = self.assignment()?;
            // As Cassandra's grammar: setting a whole column goes with no other operation on
            // it, and a field is set once.
            let clash = assignments.iter().any(|b| {
                b.column == a.column
                    && match (&a.op, &b.op) {
                        (AssignmentOp::Set(_), _) | (_, AssignmentOp::Set(_)) => true,
                        (
                            AssignmentOp::SetField { field: f, .. },
                            AssignmentOp::SetField { field: g, .. },
                        ) => f == g,
                        _ => false,
                    }
            });
            if clash {
                return Err(self.recognition_at(
                    start,
                    format!("Multiple incompatible setting of column {}", a.column),
                ));
            }
            assignments.push(a);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_keyword(Keyword::Where)?;
        let where_clause = self.where_clause()?;
        let if_clause = self.if_clause()?;
        Ok(Update {
            table,
            using,
            assignments,
            where_clause,
            if_clause,
        })
    }

    /// `columnOperation`
    fn assignment(&mut self) -> Result<Assignment> {
        let column = self.cident()?;
        let op = match self.peek().kind {
            TokenKind::Equal => {
                self.advance();
                self.assigned_value(&column)?
            }
            TokenKind::PlusEqual => {
                self.advance();
                AssignmentOp::Add(self.term()?)
            }
            TokenKind::MinusEqual => {
                self.advance();
                AssignmentOp::Subtract(self.term()?)
            }
            TokenKind::LeftBracket => {
                self.advance();
                let key = self.term()?;
                self.expect(TokenKind::RightBracket)?;
                self.expect(TokenKind::Equal)?;
                AssignmentOp::SetElement {
                    key,
                    value: self.term()?,
                }
            }
            TokenKind::Dot => {
                self.advance();
                let field = self.ident()?;
                self.expect(TokenKind::Equal)?;
                AssignmentOp::SetField {
                    field,
                    value: self.term()?,
                }
            }
            _ => return Err(self.mismatched(&["'='", "'+='", "'-='", "'['", "'.'"])),
        };
        Ok(Assignment { column, op })
    }

    /// `normalColumnOperation`: what follows `c =`.
    fn assigned_value(&mut self, column: &Name) -> Result<AssignmentOp> {
        let at_operand_column = self.is_name_at(0, NameRole::Any) && !self.at_function_call(0);
        if at_operand_column && matches!(self.peek_nth(1), TokenKind::Plus | TokenKind::Minus) {
            let index = self.pos;
            let operand = self.cident()?;
            let add = self.advance().kind == TokenKind::Plus;
            let sign = if add { "+" } else { "-" };
            if &operand != column {
                // Cassandra's words, without a space after the sign.
                return Err(self.recognition_at(
                    index,
                    format!("Only expressions of the form X = X {sign}<value> are supported."),
                ));
            }
            let value = self.term()?;
            return Ok(if add {
                AssignmentOp::Add(value)
            } else {
                AssignmentOp::Subtract(value)
            });
        }
        let value = self.term()?;
        if !self.eat(&TokenKind::Plus) {
            return Ok(AssignmentOp::Set(value));
        }
        let index = self.pos;
        let operand = self.cident()?;
        if &operand != column {
            return Err(self.recognition_at(
                index,
                "Only expressions of the form X = <value> + X are supported.".to_string(),
            ));
        }
        Ok(AssignmentOp::Prepend(value))
    }

    /// `IF EXISTS` or `IF conditions`, if next.
    fn if_clause(&mut self) -> Result<Option<IfClause>> {
        if !self.eat_keyword(Keyword::If) {
            return Ok(None);
        }
        // `exists` is also a column name: `IF exists = true` is a condition.
        if self.at_keyword(Keyword::Exists) && !self.at_condition_operator(1) {
            self.advance();
            return Ok(Some(IfClause::Exists));
        }
        let mut conditions = vec![self.condition()?];
        while self.eat_keyword(Keyword::And) {
            conditions.push(self.condition()?);
        }
        Ok(Some(IfClause::Conditions(conditions)))
    }

    /// Whether the token `n` ahead continues a condition after its column name.
    fn at_condition_operator(&self, n: usize) -> bool {
        match self.peek_nth(n) {
            TokenKind::Equal
            | TokenKind::NotEqual
            | TokenKind::Less
            | TokenKind::LessEqual
            | TokenKind::Greater
            | TokenKind::GreaterEqual
            | TokenKind::LeftBracket
            | TokenKind::Dot => true,
            kind => matches!(kind.keyword(), Some(Keyword::In | Keyword::Contains)),
        }
    }

    /// `columnCondition`
    fn condition(&mut self) -> Result<Condition> {
        let column = self.cident()?;
        let selector = if self.eat(&TokenKind::LeftBracket) {
            let key = self.term()?;
            self.expect(TokenKind::RightBracket)?;
            Some(ElementSelector::Element(key))
        } else if self.eat(&TokenKind::Dot) {
            Some(ElementSelector::Field(self.ident()?))
        } else {
            None
        };
        let predicate = if let Some(op) = self.comparison() {
            ConditionPredicate::Compare(op, self.term()?)
        } else if self.eat_keyword(Keyword::In) {
            ConditionPredicate::In(self.in_values()?)
        } else if selector.is_none() && self.eat_keyword(Keyword::Contains) {
            let op = if self.eat_keyword(Keyword::Key) {
                super::super::ast::ComparisonOp::ContainsKey
            } else {
                super::super::ast::ComparisonOp::Contains
            };
            ConditionPredicate::Compare(op, self.term()?)
        } else {
            return Err(self.no_viable());
        };
        Ok(Condition {
            column,
            selector,
            predicate,
        })
    }

    /// `deleteStatement`
    pub(super) fn delete(&mut self) -> Result<Delete> {
        self.expect_keyword(Keyword::Delete)?;
        let mut targets = Vec::new();
        if !self.at_keyword(Keyword::From) {
            loop {
                let column = self.cident()?;
                let selector = if self.eat(&TokenKind::LeftBracket) {
                    let key = self.term()?;
                    self.expect(TokenKind::RightBracket)?;
                    Some(ElementSelector::Element(key))
                } else if self.eat(&TokenKind::Dot) {
                    Some(ElementSelector::Field(self.ident()?))
                } else {
                    None
                };
                targets.push(DeleteTarget { column, selector });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect_keyword(Keyword::From)?;
        let table = self.qualified_name()?;
        let timestamp = if self.eat_keyword(Keyword::Using) {
            self.expect_keyword(Keyword::Timestamp)?;
            Some(self.int_value()?)
        } else {
            None
        };
        self.expect_keyword(Keyword::Where)?;
        let where_clause = self.where_clause()?;
        let if_clause = self.if_clause()?;
        Ok(Delete {
            targets,
            table,
            timestamp,
            where_clause,
            if_clause,
        })
    }

    /// `batchStatement`
    pub(super) fn batch(&mut self) -> Result<Batch> {
        self.expect_keyword(Keyword::Begin)?;
        let kind = if self.eat_keyword(Keyword::Unlogged) {
            BatchKind::Unlogged
        } else if self.eat_keyword(Keyword::Counter) {
            BatchKind::Counter
        } else {
            BatchKind::Logged
        };
        self.expect_keyword(Keyword::Batch)?;
        let using = self.using()?;
        let mut statements = Vec::new();
        loop {
            let statement = match self.peek().kind.keyword() {
                Some(Keyword::Insert) => BatchStatement::Insert(self.insert()?),
                Some(Keyword::Update) => BatchStatement::Update(self.update()?),
                Some(Keyword::Delete) => BatchStatement::Delete(self.delete()?),
                Some(Keyword::Apply) => break,
                _ => {
                    return Err(self.mismatched(&["K_INSERT", "K_UPDATE", "K_DELETE", "K_APPLY"]));
                }
            };
            statements.push(statement);
            self.eat(&TokenKind::Semicolon);
        }
        self.expect_keyword(Keyword::Apply)?;
        self.expect_keyword(Keyword::Batch)?;
        Ok(Batch {
            kind,
            using,
            statements,
        })
    }
}
