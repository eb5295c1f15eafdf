//! `SELECT`, its selectors, and `WHERE` relations (Parser.g's `selectStatement`,
//! `selectors`, `unaliasedSelector`, `whereClause`, `relation`).

use super::super::ast::{
    ArithmeticOp, ComparisonOp, InValues, OrderDirection, Ordering, Relation, Select, Selectable,
    Selection, Selector, Term, WritetimeKind,
};
use super::super::keyword::Keyword;
use super::super::token::TokenKind;
use super::names::NameRole;
use super::term::negate;
use super::{Parser, Result};

impl Parser<'_> {
    /// `selectStatement`
    pub(super) fn select(&mut self) -> Result<Select> {
        self.expect_keyword(Keyword::Select)?;
        // `json` and `distinct` are also column names: they are flags only if what follows
        // them parses as a selection (Parser.g's syntactic predicates).
        let json = self.at_keyword(Keyword::Json) && self.flag_precedes_selection(true);
        let distinct = self.at_keyword(Keyword::Distinct) && self.flag_precedes_selection(false);
        let selection = self.selection()?;
        self.expect_keyword(Keyword::From)?;
        let table = self.qualified_name()?;
        let where_clause = if self.eat_keyword(Keyword::Where) {
            self.where_clause()?
        } else {
            Vec::new()
        };
        let mut group_by = Vec::new();
        if self.eat_keyword(Keyword::Group) {
            self.expect_keyword(Keyword::By)?;
            loop {
                group_by.push(self.selectable()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let mut order_by = Vec::new();
        if self.eat_keyword(Keyword::Order) {
            self.expect_keyword(Keyword::By)?;
            loop {
                // Cassandra keeps the orderings in a map by column: a column named again
                // keeps its first place and takes its last direction (`ORDER BY c, c DESC`,
                // which cqlengine sends for `order_by('c').order_by('-c')`, is `c DESC`).
                let ordering = self.ordering()?;
                match order_by.iter_mut().find(|o: &&mut Ordering| {
                    o.column == ordering.column && o.ann_of.is_none() && ordering.ann_of.is_none()
                }) {
                    Some(earlier) => earlier.direction = ordering.direction,
                    None => order_by.push(ordering),
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let mut per_partition_limit = None;
        if self.eat_keyword(Keyword::Per) {
            self.expect_keyword(Keyword::Partition)?;
            self.expect_keyword(Keyword::Limit)?;
            per_partition_limit = Some(self.int_value()?);
        }
        let limit = if self.eat_keyword(Keyword::Limit) {
            Some(self.int_value()?)
        } else {
            None
        };
        let allow_filtering = self.eat_keyword(Keyword::Allow);
        if allow_filtering {
            self.expect_keyword(Keyword::Filtering)?;
        }
        Ok(Select {
            json,
            distinct,
            selection,
            table,
            where_clause,
            group_by,
            order_by,
            per_partition_limit,
            limit,
            allow_filtering,
        })
    }

    /// Consumes the flag keyword at the cursor if a selection parses after it (after
    /// `JSON`, possibly `DISTINCT` and a selection).
    fn flag_precedes_selection(&mut self, allow_distinct: bool) -> bool {
        let before = self.checkpoint();
        self.advance();
        let after = self.checkpoint();
        let mut ok = self.selection().is_ok();
        if !ok && allow_distinct && self.restore_then(after) && self.eat_keyword(Keyword::Distinct)
        {
            ok = self.selection().is_ok();
        }
        self.restore(if ok { after } else { before });
        ok
    }

    /// Restores `checkpoint`; true, to chain in conditions.
    fn restore_then(&mut self, checkpoint: super::Checkpoint) -> bool {
        self.restore(checkpoint);
        true
    }

    fn selection(&mut self) -> Result<Selection> {
        if self.eat(&TokenKind::Star) {
            return Ok(Selection::Wildcard);
        }
        let mut selectors = Vec::new();
        loop {
            let selectable = self.selectable()?;
            let alias = if self.eat_keyword(Keyword::As) {
                Some(self.ident()?)
            } else {
                None
            };
            selectors.push(Selector { selectable, alias });
            if !self.eat(&TokenKind::Comma) {
                return Ok(Selection::Selectors(selectors));
            }
        }
    }

    /// `unaliasedSelector`: arithmetic over selector groups.
    pub(super) fn selectable(&mut self) -> Result<Selectable> {
        self.nested(|p| {
            let depth = p.depth;
            let result = p.selectable_sum();
            p.depth = depth;
            result
        })
    }

    fn selectable_sum(&mut self) -> Result<Selectable> {
        let mut left = self.selectable_product()?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Plus => ArithmeticOp::Add,
                TokenKind::Minus => ArithmeticOp::Subtract,
                _ => return Ok(left),
            };
            self.chain_operator()?;
            self.advance();
            let right = self.selectable_product()?;
            left = arithmetic(op, left, right);
        }
    }

    fn selectable_product(&mut self) -> Result<Selectable> {
        let depth = self.depth;
        let result = self.selectable_product_chain();
        self.depth = depth;
        result
    }

    fn selectable_product_chain(&mut self) -> Result<Selectable> {
        let mut left = self.selectable_group()?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Star => ArithmeticOp::Multiply,
                TokenKind::Slash => ArithmeticOp::Divide,
                TokenKind::Percent => ArithmeticOp::Modulo,
                _ => return Ok(left),
            };
            self.chain_operator()?;
            self.advance();
            let right = self.selectable_group()?;
            left = arithmetic(op, left, right);
        }
    }

    /// `selectionGroup`: a negation, or a selector with field and element selections.
    fn selectable_group(&mut self) -> Result<Selectable> {
        if self.eat(&TokenKind::Minus) {
            let inner = self.nested(|p| p.selectable_group())?;
            return Ok(match inner {
                Selectable::Term(term @ Term::Literal(_)) => Selectable::Term(negate(term)),
                other => Selectable::Negation(Box::new(other)),
            });
        }
        let base = self.selectable_without_field()?;
        self.selector_modifiers(base)
    }

    /// `selectorModifier`: `.field` and `[key]`/`[from..to]`, any number.
    fn selector_modifiers(&mut self, mut selectable: Selectable) -> Result<Selectable> {
        loop {
            if self.eat(&TokenKind::Dot) {
                let field = self.ident()?;
                selectable = Selectable::Field {
                    selectable: Box::new(selectable),
                    field,
                };
            } else if self.eat(&TokenKind::LeftBracket) {
                let boxed = Box::new(selectable);
                selectable = if self.eat(&TokenKind::Range) {
                    let to = self.term()?;
                    Selectable::Slice {
                        selectable: boxed,
                        from: None,
                        to: Some(to),
                    }
                } else {
                    let key = self.term()?;
                    if self.eat(&TokenKind::Range) {
                        let to = if self.at(&TokenKind::RightBracket) {
                            None
                        } else {
                            Some(self.term()?)
                        };
                        Selectable::Slice {
                            selectable: boxed,
                            from: Some(key),
                            to,
                        }
                    } else {
                        Selectable::Element {
                            selectable: boxed,
                            key,
                        }
                    }
                };
                self.expect(TokenKind::RightBracket)?;
            } else {
                return Ok(selectable);
            }
        }
    }

    /// Whether a `selectionGroupWithoutField` starts here (after a type hint's `)`). `AS`
    /// is taken as the start of an alias, not as a column named `as`.
    fn at_selectable_without_field(&self) -> bool {
        if self.at_keyword(Keyword::As) {
            return false;
        }
        match self.peek().kind {
            TokenKind::LeftParen | TokenKind::LeftBracket | TokenKind::LeftBrace => true,
            // Cassandra's lexer reads `-1` (no space) as one negative number, which a type
            // hint takes (`(int) -1`); `(a) - 1` subtracts.
            TokenKind::Minus => {
                let next = &self.tokens[(self.pos + 1).min(self.tokens.len() - 1)];
                matches!(next.kind, TokenKind::Integer(_) | TokenKind::Float(_))
                    && next.span.start == self.peek().span.end
            }
            _ => self.is_name_at(0, NameRole::Any) || self.at_term(0),
        }
    }

    /// `selectionGroupWithoutField`
    fn selectable_without_field(&mut self) -> Result<Selectable> {
        match self.peek().kind {
            TokenKind::LeftParen => self.nested(|p| p.parenthesised_selectable()),
            TokenKind::LeftBracket => {
                self.advance();
                Ok(Selectable::List(
                    self.selectable_list(TokenKind::RightBracket)?,
                ))
            }
            TokenKind::LeftBrace => self.nested(|p| p.brace_selectable()),
            _ => self.simple_selectable(),
        }
    }

    /// `(type) selector` or `(a, b, ...)`.
    fn parenthesised_selectable(&mut self) -> Result<Selectable> {
        let checkpoint = self.checkpoint();
        self.advance();
        // `(a)` is a column in parentheses unless a selector follows the `)`.
        if let Ok(ty) = self.type_expr()
            && self.eat(&TokenKind::RightParen)
            && self.at_selectable_without_field()
        {
            let selectable = if self.at(&TokenKind::Minus) {
                self.advance();
                match self.simple_selectable()? {
                    Selectable::Term(term) => Selectable::Term(super::term::negate(term)),
                    _ => return Err(self.no_viable()),
                }
            } else {
                self.selectable_without_field()?
            };
            return Ok(Selectable::TypeHint {
                ty,
                selectable: Box::new(selectable),
            });
        }
        self.restore(checkpoint);
        self.advance();
        let items = self.selectable_list(TokenKind::RightParen)?;
        if items.is_empty() {
            return Err(self.no_viable());
        }
        Ok(Selectable::Tuple(items))
    }

    /// Selectors separated by commas up to `close` (consumed); may be empty.
    fn selectable_list(&mut self, close: TokenKind) -> Result<Vec<Selectable>> {
        let mut items = Vec::new();
        if self.eat(&close) {
            return Ok(items);
        }
        loop {
            items.push(self.selectable()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(close)?;
        Ok(items)
    }

    /// `{a, b}`, `{k: v}` or `{}`.
    fn brace_selectable(&mut self) -> Result<Selectable> {
        self.advance();
        if self.eat(&TokenKind::RightBrace) {
            return Ok(Selectable::Set(Vec::new()));
        }
        let first = self.selectable()?;
        if self.eat(&TokenKind::Colon) {
            let mut entries = vec![(first, self.selectable()?)];
            while self.eat(&TokenKind::Comma) {
                let key = self.selectable()?;
                self.expect(TokenKind::Colon)?;
                entries.push((key, self.selectable()?));
            }
            self.expect(TokenKind::RightBrace)?;
            return Ok(Selectable::Map(entries));
        }
        let mut items = vec![first];
        while self.eat(&TokenKind::Comma) {
            items.push(self.selectable()?);
        }
        self.expect(TokenKind::RightBrace)?;
        Ok(Selectable::Set(items))
    }

    /// `simpleUnaliasedSelector`: a column, a literal or marker, or a function.
    fn simple_selectable(&mut self) -> Result<Selectable> {
        let keyword = self.peek().kind.keyword();
        let call = self.peek_nth(1) == &TokenKind::LeftParen;
        match keyword {
            Some(Keyword::Count) if call && self.peek_nth(2) == &TokenKind::Star => {
                self.advance();
                self.advance();
                self.advance();
                self.expect(TokenKind::RightParen)?;
                return Ok(Selectable::CountRows);
            }
            Some(Keyword::Writetime | Keyword::Maxwritetime | Keyword::Ttl) if call => {
                let kind = match keyword {
                    Some(Keyword::Writetime) => WritetimeKind::Writetime,
                    Some(Keyword::Maxwritetime) => WritetimeKind::MaxWritetime,
                    _ => WritetimeKind::Ttl,
                };
                self.advance();
                self.advance();
                let column = Selectable::Column(self.cident()?);
                let column = self.selector_modifiers(column)?;
                self.expect(TokenKind::RightParen)?;
                return Ok(Selectable::Writetime {
                    kind,
                    column: Box::new(column),
                });
            }
            Some(Keyword::Cast) if call => {
                self.advance();
                self.advance();
                let selectable = self.selectable()?;
                self.expect_keyword(Keyword::As)?;
                let ty = self.native_type()?;
                self.expect(TokenKind::RightParen)?;
                return Ok(Selectable::Cast {
                    selectable: Box::new(selectable),
                    ty,
                });
            }
            _ => {}
        }
        if self.at_function_call(0) {
            let name = self.function_name()?;
            self.advance(); // `(`
            let args = self.selectable_list(TokenKind::RightParen)?;
            return Ok(Selectable::FunctionCall { name, args });
        }
        if self.is_name_at(0, NameRole::Any) || self.at(&TokenKind::QuotedName(String::new())) {
            return Ok(Selectable::Column(self.cident()?));
        }
        if matches!(self.peek().kind, TokenKind::QuestionMark | TokenKind::Colon) {
            return Ok(Selectable::Term(Term::Marker(self.marker()?)));
        }
        match self.constant() {
            Some(literal) => Ok(Selectable::Term(Term::Literal(literal))),
            None => Err(self.no_viable()),
        }
    }

    fn ordering(&mut self) -> Result<Ordering> {
        let column = self.cident()?;
        let ann_of = if self.eat_keyword(Keyword::Ann) {
            self.expect_keyword(Keyword::Of)?;
            Some(self.term()?)
        } else {
            None
        };
        let direction = if self.eat_keyword(Keyword::Desc) {
            OrderDirection::Desc
        } else {
            self.eat_keyword(Keyword::Asc);
            OrderDirection::Asc
        };
        Ok(Ordering {
            column,
            ann_of,
            direction,
        })
    }

    /// `whereClause`: relations joined by `AND`.
    pub(super) fn where_clause(&mut self) -> Result<Vec<Relation>> {
        let mut relations = vec![self.relation()?];
        while self.eat_keyword(Keyword::And) {
            relations.push(self.relation()?);
        }
        Ok(relations)
    }

    /// `relationType`: `= < <= > >= !=`, consumed if next.
    pub(super) fn comparison(&mut self) -> Option<ComparisonOp> {
        let op = match self.peek().kind {
            TokenKind::Equal => ComparisonOp::Equal,
            TokenKind::NotEqual => ComparisonOp::NotEqual,
            TokenKind::Less => ComparisonOp::Less,
            TokenKind::LessEqual => ComparisonOp::LessEqual,
            TokenKind::Greater => ComparisonOp::Greater,
            TokenKind::GreaterEqual => ComparisonOp::GreaterEqual,
            _ => return None,
        };
        self.advance();
        Some(op)
    }

    fn expect_comparison(&mut self) -> Result<ComparisonOp> {
        match self.comparison() {
            Some(op) => Ok(op),
            None => Err(self.mismatched(&["'='", "'<'", "'<='", "'>'", "'>='", "'!='"])),
        }
    }

    /// `relation`
    fn relation(&mut self) -> Result<Relation> {
        self.nested(|p| {
            if p.at_keyword(Keyword::Token) && p.peek_nth(1) == &TokenKind::LeftParen {
                p.advance();
                let columns = p.column_tuple()?;
                let op = p.expect_comparison()?;
                let value = p.term()?;
                return Ok(Relation::Token { columns, op, value });
            }
            if p.at(&TokenKind::LeftParen) {
                let tuple = matches!(p.peek_nth(2), TokenKind::Comma | TokenKind::RightParen);
                if !tuple {
                    p.advance();
                    let relation = p.relation()?;
                    p.expect(TokenKind::RightParen)?;
                    return Ok(relation);
                }
                return p.multi_column_relation();
            }
            p.single_column_relation()
        })
    }

    /// `tupleOfIdentifiers`: `(a, b, ...)`.
    fn column_tuple(&mut self) -> Result<Vec<super::super::ast::Name>> {
        self.expect(TokenKind::LeftParen)?;
        let mut columns = vec![self.cident()?];
        while self.eat(&TokenKind::Comma) {
            columns.push(self.cident()?);
        }
        self.expect(TokenKind::RightParen)?;
        Ok(columns)
    }

    fn multi_column_relation(&mut self) -> Result<Relation> {
        let columns = self.column_tuple()?;
        let negated = self.at_keyword(Keyword::Not) && self.nth_is_keyword(1, Keyword::In);
        if negated {
            self.advance();
        }
        if self.eat_keyword(Keyword::In) {
            let values = if self.eat(&TokenKind::LeftParen) {
                let mut values = Vec::new();
                if !self.eat(&TokenKind::RightParen) {
                    loop {
                        values.push(self.multi_column_value()?);
                        if !self.eat(&TokenKind::Comma) {
                            break;
                        }
                    }
                    self.expect(TokenKind::RightParen)?;
                }
                InValues::Terms(values)
            } else {
                InValues::Marker(self.marker()?)
            };
            return Ok(Relation::MultiColumnIn {
                columns,
                negated,
                values,
            });
        }
        let op = self.expect_comparison()?;
        let value = self.multi_column_value()?;
        Ok(Relation::MultiColumn { columns, op, value })
    }

    /// `multiColumnValue`: a tuple literal or a marker.
    fn multi_column_value(&mut self) -> Result<Term> {
        if matches!(self.peek().kind, TokenKind::QuestionMark | TokenKind::Colon) {
            return Ok(Term::Marker(self.marker()?));
        }
        self.expect(TokenKind::LeftParen)?;
        // A tuple literal has at least one element: `(b, c) > ()` is a syntax error.
        if self.at(&TokenKind::RightParen) {
            return Err(self.no_viable());
        }
        let items = self.term_list(TokenKind::RightParen)?;
        Ok(Term::Tuple(items))
    }

    /// `IN (...)` / `IN ?` values of a single column.
    pub(super) fn in_values(&mut self) -> Result<InValues> {
        if self.eat(&TokenKind::LeftParen) {
            return Ok(InValues::Terms(self.term_list(TokenKind::RightParen)?));
        }
        if matches!(self.peek().kind, TokenKind::QuestionMark | TokenKind::Colon) {
            return Ok(InValues::Marker(self.marker()?));
        }
        Err(self.mismatched(&["'('", "QMARK", "':'"]))
    }

    fn single_column_relation(&mut self) -> Result<Relation> {
        let column = self.cident()?;
        if self.eat(&TokenKind::LeftBracket) {
            let key = self.term()?;
            self.expect(TokenKind::RightBracket)?;
            let op = self.expect_comparison()?;
            let value = self.term()?;
            return Ok(Relation::MapElement {
                column,
                key,
                op,
                value,
            });
        }
        if let Some(op) = self.comparison() {
            let value = self.term()?;
            return Ok(Relation::Column { column, op, value });
        }
        let Some(keyword) = self.peek().kind.keyword() else {
            return Err(self.no_viable());
        };
        match keyword {
            Keyword::Between => {
                self.advance();
                let low = self.term()?;
                self.expect_keyword(Keyword::And)?;
                let high = self.term()?;
                Ok(Relation::Between { column, low, high })
            }
            Keyword::Like => {
                self.advance();
                let value = self.term()?;
                Ok(Relation::Column {
                    column,
                    op: ComparisonOp::Like,
                    value,
                })
            }
            Keyword::Is => {
                self.advance();
                self.expect_keyword(Keyword::Not)?;
                self.expect_keyword(Keyword::Null)?;
                Ok(Relation::IsNotNull { column })
            }
            Keyword::In => {
                self.advance();
                let values = self.in_values()?;
                Ok(Relation::In {
                    column,
                    negated: false,
                    values,
                })
            }
            Keyword::Contains => {
                self.advance();
                let op = if self.eat_keyword(Keyword::Key) {
                    ComparisonOp::ContainsKey
                } else {
                    ComparisonOp::Contains
                };
                let value = self.term()?;
                Ok(Relation::Column { column, op, value })
            }
            Keyword::Not => {
                self.advance();
                if self.eat_keyword(Keyword::In) {
                    let values = self.in_values()?;
                    return Ok(Relation::In {
                        column,
                        negated: true,
                        values,
                    });
                }
                self.expect_keyword(Keyword::Contains)?;
                let op = if self.eat_keyword(Keyword::Key) {
                    ComparisonOp::NotContainsKey
                } else {
                    ComparisonOp::NotContains
                };
                let value = self.term()?;
                Ok(Relation::Column { column, op, value })
            }
            _ => Err(self.no_viable()),
        }
    }
}

fn arithmetic(op: ArithmeticOp, left: Selectable, right: Selectable) -> Selectable {
    Selectable::Arithmetic {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}
