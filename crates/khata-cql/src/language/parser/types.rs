//! Types (Parser.g's `comparatorType`, `native_type`, `collection_type`, `tuple_type`,
//! `vector_type`).

use super::super::ast::{NativeType, TypeExpr};
use super::super::keyword::Keyword;
use super::super::token::TokenKind;
use super::{Parser, Result};

/// The native type a keyword names.
fn native(keyword: Keyword) -> Option<NativeType> {
    Some(match keyword {
        Keyword::Ascii => NativeType::Ascii,
        Keyword::Bigint => NativeType::Bigint,
        Keyword::Blob => NativeType::Blob,
        Keyword::Boolean => NativeType::Boolean,
        Keyword::Counter => NativeType::Counter,
        Keyword::Date => NativeType::Date,
        Keyword::Decimal => NativeType::Decimal,
        Keyword::Double => NativeType::Double,
        Keyword::Duration => NativeType::Duration,
        Keyword::Float => NativeType::Float,
        Keyword::Inet => NativeType::Inet,
        Keyword::Int => NativeType::Int,
        Keyword::Smallint => NativeType::Smallint,
        Keyword::Text | Keyword::Varchar => NativeType::Text,
        Keyword::Time => NativeType::Time,
        Keyword::Timestamp => NativeType::Timestamp,
        Keyword::Timeuuid => NativeType::Timeuuid,
        Keyword::Tinyint => NativeType::Tinyint,
        Keyword::Uuid => NativeType::Uuid,
        Keyword::Varint => NativeType::Varint,
        _ => return None,
    })
}

impl Parser<'_> {
    /// `native_type`
    pub(super) fn native_type(&mut self) -> Result<NativeType> {
        match self.peek().kind.keyword().and_then(native) {
            Some(ty) => {
                self.advance();
                Ok(ty)
            }
            None => Err(self.no_viable()),
        }
    }

    /// `comparatorType`
    pub(super) fn type_expr(&mut self) -> Result<TypeExpr> {
        if let TokenKind::String(class) = &self.peek().kind {
            let class = class.clone();
            self.advance();
            return Ok(TypeExpr::Custom(class));
        }
        let keyword = self.peek().kind.keyword();
        if let Some(ty) = keyword.and_then(native) {
            self.advance();
            return Ok(TypeExpr::Native(ty));
        }
        let parameterised = self.peek_nth(1) == &TokenKind::Less;
        match keyword {
            Some(Keyword::Map) if parameterised => {
                self.advance();
                self.advance();
                let key = self.nested(|p| p.type_expr())?;
                self.expect(TokenKind::Comma)?;
                let value = self.nested(|p| p.type_expr())?;
                self.expect(TokenKind::Greater)?;
                Ok(TypeExpr::Map(Box::new(key), Box::new(value)))
            }
            Some(Keyword::List | Keyword::Set | Keyword::Frozen) if parameterised => {
                self.advance();
                self.advance();
                let element = Box::new(self.nested(|p| p.type_expr())?);
                self.expect(TokenKind::Greater)?;
                Ok(match keyword {
                    Some(Keyword::List) => TypeExpr::List(element),
                    Some(Keyword::Set) => TypeExpr::Set(element),
                    _ => TypeExpr::Frozen(element),
                })
            }
            Some(Keyword::Tuple) if parameterised => {
                self.advance();
                self.advance();
                let mut items = vec![self.nested(|p| p.type_expr())?];
                while self.eat(&TokenKind::Comma) {
                    items.push(self.nested(|p| p.type_expr())?);
                }
                self.expect(TokenKind::Greater)?;
                Ok(TypeExpr::Tuple(items))
            }
            Some(Keyword::Vector) if parameterised => {
                self.advance();
                self.advance();
                let element = Box::new(self.nested(|p| p.type_expr())?);
                self.expect(TokenKind::Comma)?;
                let index = self.pos;
                // Cassandra's lexer reads `-18` as one INTEGER, which its type then refuses.
                let negative = self.at(&TokenKind::Minus) && {
                    let next = &self.tokens[(self.pos + 1).min(self.tokens.len() - 1)];
                    matches!(next.kind, TokenKind::Integer(_))
                        && next.span.start == self.peek().span.end
                };
                if negative {
                    self.advance();
                }
                let TokenKind::Integer(digits) = &self.peek().kind else {
                    return Err(self.mismatched(&["INTEGER"]));
                };
                let text = if negative {
                    format!("-{digits}")
                } else {
                    digits.clone()
                };
                // `Integer.parseInt` of the token: beyond an int it is Java's
                // NumberFormatException, in the parser.
                let dimension = text.parse::<i32>().map_err(|_| {
                    self.recognition_at(index, format!("For input string: \"{text}\""))
                })?;
                self.advance();
                self.expect(TokenKind::Greater)?;
                Ok(TypeExpr::Vector { element, dimension })
            }
            _ => Ok(TypeExpr::UserType(self.user_type_name()?)),
        }
    }
}
