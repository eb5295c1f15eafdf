//! Terms (Parser.g's `term`, `value`, `constant`, `marker`, collection and tuple literals,
//! `function`, `intValue`).

use super::super::ast::{ArithmeticOp, IntValue, Literal, Name, Term};
use super::super::keyword::Keyword;
use super::super::token::TokenKind;
use super::names::NameRole;
use super::{Parser, Result};

impl Parser<'_> {
    /// Whether a term starts `n` tokens ahead.
    pub(super) fn at_term(&self, n: usize) -> bool {
        match self.peek_nth(n) {
            TokenKind::String(_)
            | TokenKind::Integer(_)
            | TokenKind::Float(_)
            | TokenKind::Boolean(_)
            | TokenKind::Duration(_)
            | TokenKind::Uuid(_)
            | TokenKind::Hex(_)
            | TokenKind::QuestionMark
            | TokenKind::Colon
            | TokenKind::LeftBracket
            | TokenKind::LeftBrace
            | TokenKind::LeftParen
            | TokenKind::Minus => true,
            TokenKind::Word {
                keyword: Some(Keyword::Null | Keyword::Nan | Keyword::Infinity),
                ..
            } => true,
            TokenKind::Word {
                keyword: Some(Keyword::Cast),
                ..
            } if self.peek_nth(n + 1) == &TokenKind::LeftParen => true,
            _ => self.at_function_call(n),
        }
    }

    /// `term`: arithmetic over simple terms, `+ -` below `* / %`, left to right.
    pub(super) fn term(&mut self) -> Result<Term> {
        self.nested(|p| {
            let depth = p.depth;
            let result = p.term_sum();
            p.depth = depth;
            result
        })
    }

    fn term_sum(&mut self) -> Result<Term> {
        let mut left = self.term_product()?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Plus => ArithmeticOp::Add,
                TokenKind::Minus => ArithmeticOp::Subtract,
                _ => return Ok(left),
            };
            // `c = [1] + c` (prepend): the `+` belongs to the assignment, not the term.
            if !self.at_term(1) {
                return Ok(left);
            }
            self.chain_operator()?;
            self.advance();
            let right = self.term_product()?;
            left = Term::Arithmetic {
                op,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    fn term_product(&mut self) -> Result<Term> {
        let depth = self.depth;
        let result = self.term_product_chain();
        self.depth = depth;
        result
    }

    fn term_product_chain(&mut self) -> Result<Term> {
        let mut left = self.term_group()?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Star => ArithmeticOp::Multiply,
                TokenKind::Slash => ArithmeticOp::Divide,
                TokenKind::Percent => ArithmeticOp::Modulo,
                _ => return Ok(left),
            };
            self.chain_operator()?;
            self.advance();
            let right = self.term_group()?;
            left = Term::Arithmetic {
                op,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    /// `termGroup`: a simple term, possibly negated. A negated number or duration is a
    /// negative literal, as Cassandra's lexer makes it.
    fn term_group(&mut self) -> Result<Term> {
        if !self.eat(&TokenKind::Minus) {
            return self.simple_term();
        }
        let term = self.nested(|p| p.simple_term())?;
        Ok(negate(term))
    }

    /// `simpleTerm`: a value, a function call, a type hint or a cast.
    pub(super) fn simple_term(&mut self) -> Result<Term> {
        if self.at_keyword(Keyword::Cast) && self.peek_nth(1) == &TokenKind::LeftParen {
            self.advance();
            self.advance();
            let term = self.nested(|p| p.simple_term())?;
            self.expect_keyword(Keyword::As)?;
            let ty = self.native_type()?;
            self.expect(TokenKind::RightParen)?;
            return Ok(Term::Cast {
                term: Box::new(term),
                ty,
            });
        }
        if self.at_function_call(0) {
            let name = self.function_name()?;
            self.advance(); // `(`
            let mut args = Vec::new();
            if !self.eat(&TokenKind::RightParen) {
                loop {
                    args.push(self.term()?);
                    if !self.eat(&TokenKind::Comma) {
                        break;
                    }
                }
                self.expect(TokenKind::RightParen)?;
            }
            return Ok(Term::FunctionCall { name, args });
        }
        if self.at(&TokenKind::LeftParen) && !self.at_term(1) {
            // `(type) term`: a type hint (a tuple's first element would be a term).
            self.advance();
            let ty = self.nested(|p| p.type_expr())?;
            self.expect(TokenKind::RightParen)?;
            let term = self.nested(|p| p.simple_term())?;
            return Ok(Term::TypeHint {
                ty,
                term: Box::new(term),
            });
        }
        self.value()
    }

    /// `value`: a constant, a collection, user type or tuple literal, `null` or a marker.
    fn value(&mut self) -> Result<Term> {
        if let Some(literal) = self.constant() {
            return Ok(Term::Literal(literal));
        }
        match self.peek().kind {
            TokenKind::QuestionMark | TokenKind::Colon => Ok(Term::Marker(self.marker()?)),
            TokenKind::LeftBracket => {
                self.advance();
                let items = self.term_list(TokenKind::RightBracket)?;
                Ok(Term::List(items))
            }
            TokenKind::LeftParen => {
                self.advance();
                // Not empty: `simple_term` takes `(` followed by a non-term as a type hint.
                let items = self.term_list(TokenKind::RightParen)?;
                Ok(Term::Tuple(items))
            }
            TokenKind::LeftBrace => self.brace_literal(),
            _ => Err(self.no_viable()),
        }
    }

    /// Terms separated by commas up to `close` (consumed); may be empty.
    pub(super) fn term_list(&mut self, close: TokenKind) -> Result<Vec<Term>> {
        let mut items = Vec::new();
        if self.eat(&close) {
            return Ok(items);
        }
        loop {
            items.push(self.term()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(close)?;
        Ok(items)
    }

    /// `{...}`: a set, a map or a user type literal; `{}` is an empty set.
    fn brace_literal(&mut self) -> Result<Term> {
        self.advance();
        if self.eat(&TokenKind::RightBrace) {
            return Ok(Term::Set(Vec::new()));
        }
        if self.is_name_at(0, NameRole::Any) && self.peek_nth(1) == &TokenKind::Colon {
            let mut fields = Vec::new();
            loop {
                let field = self.ident()?;
                self.expect(TokenKind::Colon)?;
                fields.push((field, self.term()?));
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RightBrace)?;
            return Ok(Term::UserType(fields));
        }
        let first = self.term()?;
        if self.eat(&TokenKind::Colon) {
            let mut entries = vec![(first, self.term()?)];
            while self.eat(&TokenKind::Comma) {
                let key = self.term()?;
                self.expect(TokenKind::Colon)?;
                entries.push((key, self.term()?));
            }
            self.expect(TokenKind::RightBrace)?;
            return Ok(Term::Map(entries));
        }
        let mut items = vec![first];
        while self.eat(&TokenKind::Comma) {
            items.push(self.term()?);
        }
        self.expect(TokenKind::RightBrace)?;
        Ok(Term::Set(items))
    }

    /// `constant` (and `null`), consumed if next.
    pub(super) fn constant(&mut self) -> Option<Literal> {
        let literal = match &self.peek().kind {
            TokenKind::String(s) => Literal::String(s.clone()),
            TokenKind::Integer(s) => Literal::Integer(s.clone()),
            TokenKind::Float(s) => Literal::Float(s.clone()),
            TokenKind::Boolean(b) => Literal::Boolean(*b),
            TokenKind::Duration(s) => Literal::Duration(s.clone()),
            TokenKind::Uuid(u) => Literal::Uuid(*u),
            TokenKind::Hex(s) => Literal::Hex(s.clone()),
            TokenKind::Word {
                keyword: Some(Keyword::Nan),
                ..
            } => Literal::NaN,
            TokenKind::Word {
                keyword: Some(Keyword::Infinity),
                ..
            } => Literal::Infinity,
            TokenKind::Word {
                keyword: Some(Keyword::Null),
                ..
            } => Literal::Null,
            _ => return None,
        };
        self.advance();
        Some(literal)
    }

    /// A constant with an optional leading `-` (for property values).
    pub(super) fn signed_constant(&mut self) -> Option<Literal> {
        if self.at(&TokenKind::Minus) {
            let checkpoint = self.checkpoint();
            self.advance();
            if let Some(literal) = self.constant()
                && let Term::Literal(negative) = negate(Term::Literal(literal))
            {
                return Some(negative);
            }
            self.restore(checkpoint);
            return None;
        }
        self.constant()
    }

    /// `marker`: `?` or `:name`.
    pub(super) fn marker(&mut self) -> Result<super::super::ast::BindMarker> {
        if self.eat(&TokenKind::QuestionMark) {
            return Ok(self.new_marker(None));
        }
        self.expect(TokenKind::Colon)?;
        let name: Name = self.ident()?;
        Ok(self.new_marker(Some(name)))
    }

    /// `intValue`: an integer (with an optional `-`) or a marker.
    pub(super) fn int_value(&mut self) -> Result<IntValue> {
        if matches!(self.peek().kind, TokenKind::QuestionMark | TokenKind::Colon) {
            return Ok(IntValue::Marker(self.marker()?));
        }
        Ok(IntValue::Literal(self.integer()?))
    }

    /// An integer literal (with an optional `-`) that fits an `i64`.
    pub(super) fn integer(&mut self) -> Result<i64> {
        let start = self.pos;
        let negative = self.eat(&TokenKind::Minus);
        let TokenKind::Integer(digits) = &self.peek().kind else {
            return Err(self.mismatched(&["INTEGER"]));
        };
        let text = if negative {
            format!("-{digits}")
        } else {
            digits.clone()
        };
        let value = text
            .parse::<i64>()
            .map_err(|_| self.invalid_at(start, format!("Invalid integer {text}: out of range")))?;
        self.advance();
        Ok(value)
    }
}

/// `-term`: a negative literal when the term is an unsigned number or duration.
pub(super) fn negate(term: Term) -> Term {
    let signed = |s: &String| !s.starts_with('-');
    match term {
        Term::Literal(Literal::Integer(s)) if signed(&s) => {
            Term::Literal(Literal::Integer(format!("-{s}")))
        }
        Term::Literal(Literal::Float(s)) if signed(&s) => {
            Term::Literal(Literal::Float(format!("-{s}")))
        }
        Term::Literal(Literal::Duration(s)) if signed(&s) => {
            Term::Literal(Literal::Duration(format!("-{s}")))
        }
        Term::Literal(Literal::NaN) => Term::Literal(Literal::NaN),
        Term::Literal(Literal::Infinity) => Term::Literal(Literal::NegativeInfinity),
        other => Term::Negation(Box::new(other)),
    }
}
