//! Names: identifiers, qualified names, user type and function names (Parser.g's `ident`,
//! `cident`, `noncol_ident`, `columnFamilyName`, `userTypeName`, `functionName`).

use super::super::ast::{Name, QualifiedName};
use super::super::error::ParseErrorKind;
use super::super::keyword::{Keyword, KeywordClass};
use super::super::token::TokenKind;
use super::{Parser, Result};

/// Unquoted names that are not keywords but may not name a user type (Parser.g's
/// `reservedTypeNames`).
const RESERVED_TYPE_NAMES: &[&str] = &[
    "byte",
    "complex",
    "enum",
    "date",
    "interval",
    "macaddr",
    "bitstring",
];

/// Which names a position accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum NameRole {
    /// Columns, tables, keyspaces, fields, aliases: any unreserved keyword.
    Any,
    /// Function names: basic unreserved keywords, native type names, `token`, `count`.
    Function,
    /// User type names: basic unreserved keywords and `key`.
    UserType,
}

impl Parser<'_> {
    /// Whether the token `n` ahead can be a name in `role`.
    pub(super) fn is_name_at(&self, n: usize, role: NameRole) -> bool {
        match self.peek_nth(n) {
            TokenKind::QuotedName(name) => !name.is_empty(),
            TokenKind::Word { keyword: None, .. } => true,
            TokenKind::Word {
                keyword: Some(k), ..
            } => match role {
                NameRole::Any => k.class() != KeywordClass::Reserved,
                NameRole::Function => k.is_function_name(),
                NameRole::UserType => k.is_user_type_name(),
            },
            _ => false,
        }
    }

    /// A name in `role`, or an error saying a name was expected.
    pub(super) fn name(&mut self, role: NameRole) -> Result<Name> {
        if self.is_name_at(0, role)
            && let TokenKind::QuotedName(name) | TokenKind::Word { text: name, .. } =
                &self.peek().kind
        {
            let name = Name(name.clone());
            self.advance();
            return Ok(name);
        }
        if let TokenKind::Word {
            keyword: Some(keyword),
            text,
        } = &self.peek().kind
        {
            let mut error = self.mismatched(&["IDENT"]);
            error.kind = ParseErrorKind::ReservedKeyword;
            let reason = if keyword.is_reserved() {
                "is a reserved keyword"
            } else {
                "cannot be used as a name here"
            };
            error.message = format!(
                "{}: '{text}' {reason}; quote it (\"{text}\") to use it as a name",
                error.message
            );
            return Err(error);
        }
        if self.at(&TokenKind::QuotedName(String::new())) {
            let mut error = self.mismatched(&["IDENT"]);
            error.message = format!("{}: a name cannot be empty", error.message);
            return Err(error);
        }
        Err(self.mismatched(&["IDENT", "QUOTED_NAME"]))
    }

    /// Cassandra's refusal of a bind marker where a keyspace, table or index name goes
    /// (`ksName`, `cfName`, `idxName`: `what` is "keyspace", "table" or "index").
    pub(super) fn refuse_marker_name(&self, what: &str) -> Result<()> {
        if self.at(&TokenKind::QuestionMark) {
            return Err(self.recognition_at(
                self.pos,
                format!("Bind variables cannot be used for {what} names"),
            ));
        }
        Ok(())
    }

    /// `keyspaceName`.
    pub(super) fn keyspace_name(&mut self) -> Result<Name> {
        self.refuse_marker_name("keyspace")?;
        self.ident()
    }

    /// `ident`: a column, keyspace, table, field or alias name.
    pub(super) fn ident(&mut self) -> Result<Name> {
        self.name(NameRole::Any)
    }

    /// `cident`: a column name, which may also be the empty quoted name `""`.
    pub(super) fn cident(&mut self) -> Result<Name> {
        if self.eat(&TokenKind::QuotedName(String::new())) {
            return Ok(Name(String::new()));
        }
        self.ident()
    }

    /// `columnFamilyName`: `[ks.]table`.
    pub(super) fn qualified_name(&mut self) -> Result<QualifiedName> {
        self.keyspace_qualified("table")
    }

    /// `indexName`: `[ks.]index`.
    pub(super) fn index_name(&mut self) -> Result<QualifiedName> {
        self.keyspace_qualified("index")
    }

    /// `[ks.]name`, the name being of a `what` ("table" or "index").
    fn keyspace_qualified(&mut self, what: &str) -> Result<QualifiedName> {
        let keyspace_next = self.peek_nth(1) == &TokenKind::Dot;
        self.refuse_marker_name(if keyspace_next { "keyspace" } else { what })?;
        let first = self.ident()?;
        if self.eat(&TokenKind::Dot) {
            self.refuse_marker_name(what)?;
            let name = self.ident()?;
            return Ok(QualifiedName {
                keyspace: Some(first),
                name,
            });
        }
        Ok(QualifiedName {
            keyspace: None,
            name: first,
        })
    }

    /// `userTypeName`: `[ks.]name`, where the name may not be a native type or one of the
    /// reserved type names.
    pub(super) fn user_type_name(&mut self) -> Result<QualifiedName> {
        let keyspace = if self.is_name_at(0, NameRole::Any) && self.peek_nth(1) == &TokenKind::Dot {
            let keyspace = self.ident()?;
            self.advance();
            Some(keyspace)
        } else {
            None
        };
        let index = self.pos;
        let unquoted = matches!(self.peek().kind, TokenKind::Word { .. });
        let name = self.name(NameRole::UserType)?;
        if unquoted && RESERVED_TYPE_NAMES.contains(&name.as_str()) {
            return Err(self.recognition_at(
                index,
                format!("Invalid (reserved) user type name {}", name.as_str()),
            ));
        }
        Ok(QualifiedName { keyspace, name })
    }

    /// Whether a function call starts here: `name(` or `ks.name(`.
    pub(super) fn at_function_call(&self, n: usize) -> bool {
        if !self.is_name_at(n, NameRole::Function) {
            return false;
        }
        match self.peek_nth(n + 1) {
            TokenKind::LeftParen => true,
            TokenKind::Dot => {
                self.is_name_at(n + 2, NameRole::Function)
                    && self.peek_nth(n + 3) == &TokenKind::LeftParen
            }
            _ => false,
        }
    }

    /// `functionName`: `[ks.]name`.
    pub(super) fn function_name(&mut self) -> Result<QualifiedName> {
        let first = if self.peek_nth(1) == &TokenKind::Dot {
            self.ident()?
        } else {
            self.name(NameRole::Function)?
        };
        if self.eat(&TokenKind::Dot) {
            let name = self.name(NameRole::Function)?;
            return Ok(QualifiedName {
                keyspace: Some(first),
                name,
            });
        }
        Ok(QualifiedName {
            keyspace: None,
            name: first,
        })
    }

    /// The keyspace keyword: `KEYSPACE` or its alias `SCHEMA`.
    pub(super) fn at_keyspace_keyword(&self, n: usize) -> bool {
        matches!(
            self.peek_nth(n).keyword(),
            Some(Keyword::Keyspace | Keyword::Schema)
        )
    }

    /// The table keyword: `TABLE` or its alias `COLUMNFAMILY`.
    pub(super) fn at_table_keyword(&self, n: usize) -> bool {
        matches!(
            self.peek_nth(n).keyword(),
            Some(Keyword::Table | Keyword::ColumnFamily)
        )
    }
}
