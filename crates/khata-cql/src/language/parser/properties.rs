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
        // Cassandra's PropertyDefinitions.addProperty, once the value is parsed.
        if properties.iter().any(|p| p.name == name) {
            return Err(self.recognition_at(
                index,
                format!("Multiple definition for property '{}'", name.as_str()),
            ));
        }
        properties.push(Property { name, value });
        Ok(())
    }

    /// `fullMapLiteral` of constants, checked once read as Cassandra's `convertPropertyMap`
    /// checks it.
    fn property_map(&mut self) -> Result<Vec<(Literal, Literal)>> {
        self.expect(TokenKind::LeftBrace)?;
        let mut read: Vec<(usize, Term, Term)> = Vec::new();
        if !self.eat(&TokenKind::RightBrace) {
            loop {
                let key_index = self.pos;
                let key = self.term()?;
                self.expect(TokenKind::Colon)?;
                let value = self.term()?;
                read.push((key_index, key, value));
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RightBrace)?;
        }
        let mut entries: Vec<(Literal, Literal)> = Vec::new();
        for (key_index, key, value) in read {
            let key = property_literal(key).map_err(|(shown, why)| {
                self.recognition_at(key_index, format!("Invalid property name: {shown}{why}"))
            })?;
            let value = property_literal(value).map_err(|(shown, why)| {
                self.recognition_at(
                    key_index,
                    format!("Invalid property value: {shown} for property: {key}{why}"),
                )
            })?;
            if entries.iter().any(|(k, _)| k == &key) {
                // The key's text as written, unquoted (Cassandra's `getRawText`).
                let raw = match &key {
                    Literal::String(s) => s.clone(),
                    other => other.to_string(),
                };
                return Err(self
                    .recognition_at(key_index, format!("Multiple definition for property {raw}")));
            }
            entries.push((key, value));
        }
        Ok(entries)
    }
}

/// A property map's key or value: a literal other than null, or else the term as written for
/// the refusal, and the words that end it when the term is a bind marker.
fn property_literal(term: Term) -> std::result::Result<Literal, (String, &'static str)> {
    match term {
        Term::Literal(literal) if literal != Literal::Null => Ok(literal),
        marker @ Term::Marker(_) => Err((
            marker.to_string(),
            " (bind variables are not supported in DDL queries)",
        )),
        other => Err((other.to_string(), "")),
    }
}
