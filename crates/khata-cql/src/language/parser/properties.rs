//! `WITH` properties of schema statements (Parser.g's `properties`, `property`,
//! `propertyValue`, `fullMapLiteral`): constants, unreserved words, or maps of constants.

use super::super::ast::{Literal, Property, PropertyValue, Term};
use super::super::keyword::{Keyword, KeywordClass};
use super::super::token::TokenKind;
use super::{Parser, Result};

impl Parser<'_> {
    /// `properties`: `name = value AND ...`, refusing a name given twice.
    pub(super) fn properties(&mut self) -> Result<Vec<Property>> {
        let mut properties = Vec::new();
        loop {
            self.property_into(&mut properties)?;
            if !self.eat_keyword(Keyword::And) {
                return Ok(properties);
            }
        }
    }

    /// `property`, appended to `properties`.
    pub(super) fn property_into(&mut self, properties: &mut Vec<Property>) -> Result<()> {
        let index = self.pos;
        let name = self.ident()?;
        if properties.iter().any(|p| p.name == name) {
            return Err(self.invalid_at(
                index,
                format!("Multiple definition for property {}", name.as_str()),
            ));
        }
        self.expect(TokenKind::Equal)?;
        let value = if self.at(&TokenKind::LeftBrace) {
            PropertyValue::Map(self.property_map()?)
        } else if let Some(literal) = self.signed_constant() {
            PropertyValue::Constant(literal)
        } else if let TokenKind::Word {
            keyword: Some(keyword),
            text,
        } = &self.peek().kind
            && keyword.class() != KeywordClass::Reserved
        {
            let text = text.clone();
            self.advance();
            PropertyValue::Word(text)
        } else {
            return Err(self.no_viable());
        };
        properties.push(Property { name, value });
        Ok(())
    }

    /// `fullMapLiteral` of constants.
    fn property_map(&mut self) -> Result<Vec<(Literal, Literal)>> {
        self.expect(TokenKind::LeftBrace)?;
        let mut entries: Vec<(Literal, Literal)> = Vec::new();
        if self.eat(&TokenKind::RightBrace) {
            return Ok(entries);
        }
        loop {
            let key_index = self.pos;
            let key = self.term()?;
            self.expect(TokenKind::Colon)?;
            let value_index = self.pos;
            let value = self.term()?;
            let key = match key {
                Term::Literal(literal) if literal != Literal::Null => literal,
                _ => return Err(self.invalid_at(key_index, "Invalid property name".to_string())),
            };
            let value = match value {
                Term::Literal(literal) if literal != Literal::Null => literal,
                Term::Marker(_) => {
                    return Err(self.invalid_at(
                        value_index,
                        "Invalid property value (bind variables are not supported in DDL queries)"
                            .to_string(),
                    ));
                }
                _ => {
                    return Err(self.invalid_at(value_index, "Invalid property value".to_string()));
                }
            };
            if entries.iter().any(|(k, _)| k == &key) {
                return Err(self.invalid_at(
                    key_index,
                    format!(
                        "Multiple definition for property {}",
                        self.offending(key_index)
                    ),
                ));
            }
            entries.push((key, value));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RightBrace)?;
        Ok(entries)
    }
}
