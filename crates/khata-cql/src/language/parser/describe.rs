//! `DESCRIBE` / `DESC` (Parser.g's `describeStatement`), in the forms cqlsh 6 sends to the
//! server.

use super::super::ast::{Describe, DescribeTarget, QualifiedName, Statement};
use super::super::keyword::Keyword;
use super::names::NameRole;
use super::{Parser, Result};

impl Parser<'_> {
    /// `DESCRIBE target [WITH INTERNALS]`
    pub(super) fn describe(&mut self) -> Result<Statement> {
        self.advance(); // DESCRIBE or DESC
        let target = self.describe_target()?;
        let with_internals = self.eat_keyword(Keyword::With);
        if with_internals {
            self.expect_keyword(Keyword::Internals)?;
        }
        Ok(Statement::Describe(Describe {
            target,
            with_internals,
        }))
    }

    fn describe_target(&mut self) -> Result<DescribeTarget> {
        let keyword = self.peek().kind.keyword();
        let simple = match keyword {
            Some(Keyword::Cluster) => Some(DescribeTarget::Cluster),
            Some(Keyword::Schema) => Some(DescribeTarget::Schema { full: false }),
            Some(Keyword::Keyspaces) => Some(DescribeTarget::Keyspaces),
            Some(Keyword::Tables | Keyword::ColumnFamilies) => Some(DescribeTarget::Tables),
            Some(Keyword::Types) => Some(DescribeTarget::Types),
            Some(Keyword::Functions) => Some(DescribeTarget::Functions),
            Some(Keyword::Aggregates) => Some(DescribeTarget::Aggregates),
            _ => None,
        };
        // `DESCRIBE types.t` names an object in a keyspace called `types`.
        if let Some(target) = simple
            && self.peek_nth(1) != &super::TokenKind::Dot
        {
            self.advance();
            return Ok(target);
        }
        match keyword {
            Some(Keyword::Full) => {
                self.advance();
                self.expect_keyword(Keyword::Schema)?;
                Ok(DescribeTarget::Schema { full: true })
            }
            Some(Keyword::Only) if self.nth_is_keyword(1, Keyword::Keyspace) => {
                self.advance();
                self.advance();
                Ok(DescribeTarget::Keyspace {
                    only: true,
                    name: self.optional_keyspace()?,
                })
            }
            Some(Keyword::Keyspace) => {
                self.advance();
                Ok(DescribeTarget::Keyspace {
                    only: false,
                    name: self.optional_keyspace()?,
                })
            }
            Some(Keyword::Table | Keyword::ColumnFamily) => {
                self.advance();
                Ok(DescribeTarget::Table(self.qualified_name()?))
            }
            Some(Keyword::Index) => {
                self.advance();
                Ok(DescribeTarget::Index(self.qualified_name()?))
            }
            Some(Keyword::Materialized) => {
                self.advance();
                self.expect_keyword(Keyword::View)?;
                Ok(DescribeTarget::MaterializedView(self.qualified_name()?))
            }
            Some(Keyword::Type) if self.is_name_at(1, NameRole::Any) => {
                self.advance();
                Ok(DescribeTarget::Type(self.user_type_name()?))
            }
            Some(Keyword::Function) if self.is_name_at(1, NameRole::Any) => {
                self.advance();
                Ok(DescribeTarget::Function(self.function_name()?))
            }
            Some(Keyword::Aggregate) if self.is_name_at(1, NameRole::Any) => {
                self.advance();
                Ok(DescribeTarget::Aggregate(self.function_name()?))
            }
            _ => Ok(DescribeTarget::Generic(self.generic_name()?)),
        }
    }

    fn optional_keyspace(&mut self) -> Result<Option<super::super::ast::Name>> {
        if self.is_name_at(0, NameRole::Any) {
            Ok(Some(self.ident()?))
        } else {
            Ok(None)
        }
    }

    fn generic_name(&mut self) -> Result<QualifiedName> {
        if !self.is_name_at(0, NameRole::Any) {
            return Err(self.no_viable());
        }
        self.qualified_name()
    }
}
