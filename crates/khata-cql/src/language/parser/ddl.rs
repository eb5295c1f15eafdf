//! Schema statements (Parser.g's `createKeyspaceStatement`, `createTableStatement`,
//! `alterTableStatement`, `createTypeStatement`, `createIndexStatement`, the `DROP`s,
//! `truncateStatement`, `properties`), and the refusal of statements khata does not implement.

use super::super::ast::{
    AlterKeyspace, AlterTable, AlterTableAction, AlterType, AlterTypeAction, ColumnDefinition,
    CreateIndex, CreateKeyspace, CreateTable, CreateType, DropIndex, DropKeyspace, DropTable,
    DropType, IndexTarget, IndexTargetKind, Name, OrderDirection, PrimaryKey, Statement, Truncate,
};
use super::super::error::ParseErrorKind;
use super::super::keyword::Keyword;
use super::super::token::TokenKind;
use super::{Parser, Result};

impl Parser<'_> {
    /// `CREATE ...`
    pub(super) fn create(&mut self) -> Result<Statement> {
        if self.at_keyspace_keyword(1) {
            self.advance();
            self.advance();
            let if_not_exists = self.if_not_exists()?;
            let name = self.keyspace_name()?;
            self.expect_keyword(Keyword::With)?;
            let properties = self.properties()?;
            return Ok(Statement::CreateKeyspace(CreateKeyspace {
                if_not_exists,
                name,
                properties,
            }));
        }
        if self.at_table_keyword(1) {
            self.advance();
            self.advance();
            return Ok(Statement::CreateTable(Box::new(self.create_table()?)));
        }
        match self.peek_nth(1).keyword() {
            Some(Keyword::Type) => {
                self.advance();
                self.advance();
                let if_not_exists = self.if_not_exists()?;
                let name = self.user_type_name()?;
                self.expect(TokenKind::LeftParen)?;
                let mut fields = Vec::new();
                loop {
                    let field = self.ident()?;
                    fields.push((field, self.type_expr()?));
                    if !self.eat(&TokenKind::Comma) || self.at(&TokenKind::RightParen) {
                        break;
                    }
                }
                self.expect(TokenKind::RightParen)?;
                Ok(Statement::CreateType(CreateType {
                    if_not_exists,
                    name,
                    fields,
                }))
            }
            Some(Keyword::Index | Keyword::Custom) => {
                Ok(Statement::CreateIndex(self.create_index()?))
            }
            Some(Keyword::Materialized) => Err(self.unsupported_statement(3)),
            Some(Keyword::Or) => Err(self.unsupported_statement(4)),
            Some(
                Keyword::Function
                | Keyword::Aggregate
                | Keyword::Trigger
                | Keyword::Role
                | Keyword::User,
            ) => Err(self.unsupported_statement(2)),
            _ => {
                self.advance();
                Err(self.no_viable())
            }
        }
    }

    /// What follows `CREATE TABLE`.
    fn create_table(&mut self) -> Result<CreateTable> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.qualified_name()?;
        let open = self.pos;
        self.expect(TokenKind::LeftParen)?;
        let mut columns = Vec::new();
        let mut primary_keys = Vec::new();
        loop {
            if self.at_keyword(Keyword::Primary) && self.nth_is_keyword(1, Keyword::Key) {
                self.advance();
                self.advance();
                primary_keys.push(self.primary_key_clause()?);
            } else {
                let column = self.column_definition()?;
                if self.eat_keyword(Keyword::Primary) {
                    self.expect_keyword(Keyword::Key)?;
                    primary_keys.push(PrimaryKey {
                        partition_key: vec![column.name.clone()],
                        clustering: Vec::new(),
                    });
                }
                columns.push(column);
            }
            // `'(' tableColumns ( ',' tableColumns? )* ')'`: an entry after a comma may be
            // empty, `(a int, , b int,)`.
            if !self.eat(&TokenKind::Comma) {
                break;
            }
            while self.eat(&TokenKind::Comma) {}
            if self.at(&TokenKind::RightParen) {
                break;
            }
        }
        self.expect(TokenKind::RightParen)?;
        if primary_keys.len() > 1 {
            return Err(self.invalid_at(
                open,
                "Multiple PRIMARY KEYs specified (exactly one required)".to_string(),
            ));
        }
        let Some(primary_key) = primary_keys.pop() else {
            return Err(self.invalid_at(
                open,
                format!(
                    "No PRIMARY KEY specified for table '{}' (exactly one required)",
                    name.name.as_str()
                ),
            ));
        };
        let mut clustering_order = Vec::new();
        let mut properties = Vec::new();
        if self.eat_keyword(Keyword::With) {
            loop {
                if self.at_keyword(Keyword::Compact) && self.nth_is_keyword(1, Keyword::Storage) {
                    let mut error = self.error_here(
                        ParseErrorKind::Unsupported,
                        "COMPACT STORAGE tables are not allowed starting with version 4.0"
                            .to_string(),
                    );
                    error.expected.clear();
                    return Err(error);
                }
                if self.at_keyword(Keyword::Clustering) && self.nth_is_keyword(1, Keyword::Order) {
                    self.advance();
                    self.advance();
                    self.expect_keyword(Keyword::By)?;
                    self.expect(TokenKind::LeftParen)?;
                    loop {
                        let column = self.ident()?;
                        let direction = if self.eat_keyword(Keyword::Asc) {
                            OrderDirection::Asc
                        } else if self.eat_keyword(Keyword::Desc) {
                            OrderDirection::Desc
                        } else {
                            return Err(self.mismatched(&["K_ASC", "K_DESC"]));
                        };
                        clustering_order.push((column, direction));
                        if !self.eat(&TokenKind::Comma) {
                            break;
                        }
                    }
                    self.expect(TokenKind::RightParen)?;
                } else {
                    self.property_into(&mut properties)?;
                }
                if !self.eat_keyword(Keyword::And) {
                    break;
                }
            }
        }
        Ok(CreateTable {
            if_not_exists,
            name,
            columns,
            primary_key,
            clustering_order,
            properties,
        })
    }

    /// `(pk, ck, ...)` or `((pk1, pk2), ck, ...)` after `PRIMARY KEY`.
    fn primary_key_clause(&mut self) -> Result<PrimaryKey> {
        self.expect(TokenKind::LeftParen)?;
        let partition_key = if self.eat(&TokenKind::LeftParen) {
            let mut names = vec![self.ident()?];
            while self.eat(&TokenKind::Comma) {
                names.push(self.ident()?);
            }
            self.expect(TokenKind::RightParen)?;
            names
        } else {
            vec![self.ident()?]
        };
        let mut clustering = Vec::new();
        while self.eat(&TokenKind::Comma) {
            clustering.push(self.ident()?);
        }
        self.expect(TokenKind::RightParen)?;
        Ok(PrimaryKey {
            partition_key,
            clustering,
        })
    }

    /// `name type [STATIC]`
    fn column_definition(&mut self) -> Result<ColumnDefinition> {
        let name = self.ident()?;
        let ty = self.type_expr()?;
        let is_static = self.eat_keyword(Keyword::Static);
        Ok(ColumnDefinition {
            name,
            ty,
            is_static,
        })
    }

    /// What follows `CREATE`, for `[CUSTOM] INDEX`.
    fn create_index(&mut self) -> Result<CreateIndex> {
        self.advance(); // CREATE
        let custom = self.eat_keyword(Keyword::Custom);
        self.expect_keyword(Keyword::Index)?;
        let if_not_exists = self.if_not_exists()?;
        let name = if self.at_keyword(Keyword::On) {
            None
        } else {
            self.refuse_marker_name("index")?;
            Some(self.ident()?)
        };
        self.expect_keyword(Keyword::On)?;
        let table = self.qualified_name()?;
        self.expect(TokenKind::LeftParen)?;
        let mut targets = Vec::new();
        if !self.eat(&TokenKind::RightParen) {
            loop {
                targets.push(self.index_target()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RightParen)?;
        }
        let using = if self.eat_keyword(Keyword::Using) {
            match &self.peek().kind {
                TokenKind::String(class) => {
                    let class = class.clone();
                    self.advance();
                    Some(class)
                }
                _ => return Err(self.mismatched(&["STRING_LITERAL"])),
            }
        } else {
            None
        };
        let properties = if self.eat_keyword(Keyword::With) {
            self.properties()?
        } else {
            Vec::new()
        };
        Ok(CreateIndex {
            custom,
            if_not_exists,
            name,
            table,
            targets,
            using,
            properties,
        })
    }

    /// `indexIdent`: `c`, `KEYS(c)`, `VALUES(c)`, `ENTRIES(c)`, `FULL(c)`.
    fn index_target(&mut self) -> Result<IndexTarget> {
        let kind = match self.peek().kind.keyword() {
            Some(Keyword::Keys) => IndexTargetKind::Keys,
            Some(Keyword::Values) => IndexTargetKind::Values,
            Some(Keyword::Entries) => IndexTargetKind::Entries,
            Some(Keyword::Full) => IndexTargetKind::Full,
            _ => IndexTargetKind::Simple,
        };
        if kind != IndexTargetKind::Simple && self.peek_nth(1) == &TokenKind::LeftParen {
            self.advance();
            self.advance();
            let column = self.cident()?;
            self.expect(TokenKind::RightParen)?;
            return Ok(IndexTarget { column, kind });
        }
        Ok(IndexTarget {
            column: self.cident()?,
            kind: IndexTargetKind::Simple,
        })
    }

    /// `ALTER ...`
    pub(super) fn alter(&mut self) -> Result<Statement> {
        if self.at_keyspace_keyword(1) {
            self.advance();
            self.advance();
            let if_exists = self.if_exists()?;
            let name = self.keyspace_name()?;
            self.expect_keyword(Keyword::With)?;
            let properties = self.properties()?;
            return Ok(Statement::AlterKeyspace(AlterKeyspace {
                if_exists,
                name,
                properties,
            }));
        }
        if self.at_table_keyword(1) {
            self.advance();
            self.advance();
            let if_exists = self.if_exists()?;
            let table = self.qualified_name()?;
            let action = self.alter_table_action()?;
            return Ok(Statement::AlterTable(AlterTable {
                if_exists,
                table,
                action,
            }));
        }
        match self.peek_nth(1).keyword() {
            Some(Keyword::Type) => {
                self.advance();
                self.advance();
                let if_exists = self.if_exists()?;
                let name = self.user_type_name()?;
                let action = self.alter_type_action()?;
                Ok(Statement::AlterType(AlterType {
                    if_exists,
                    name,
                    action,
                }))
            }
            Some(Keyword::Materialized) => Err(self.unsupported_statement(3)),
            Some(Keyword::Role | Keyword::User) => Err(self.unsupported_statement(2)),
            _ => {
                self.advance();
                Err(self.no_viable())
            }
        }
    }

    fn alter_table_action(&mut self) -> Result<AlterTableAction> {
        match self.peek().kind.keyword() {
            Some(Keyword::Alter) => {
                self.advance();
                let column = self.cident()?;
                self.expect_keyword(Keyword::Type)?;
                let ty = self.type_expr()?;
                Ok(AlterTableAction::AlterColumnType { column, ty })
            }
            Some(Keyword::Add) => {
                self.advance();
                let if_not_exists = self.if_not_exists()?;
                let mut columns = Vec::new();
                if self.eat(&TokenKind::LeftParen) {
                    loop {
                        columns.push(self.column_definition()?);
                        if !self.eat(&TokenKind::Comma) {
                            break;
                        }
                    }
                    self.expect(TokenKind::RightParen)?;
                } else {
                    columns.push(self.column_definition()?);
                }
                Ok(AlterTableAction::Add {
                    if_not_exists,
                    columns,
                })
            }
            Some(Keyword::Drop)
                if self.nth_is_keyword(1, Keyword::Compact)
                    && self.nth_is_keyword(2, Keyword::Storage) =>
            {
                self.advance();
                self.advance();
                self.advance();
                Ok(AlterTableAction::DropCompactStorage)
            }
            Some(Keyword::Drop) => {
                self.advance();
                let if_exists = self.if_exists()?;
                let columns = self.ident_or_list()?;
                let timestamp = if self.eat_keyword(Keyword::Using) {
                    self.expect_keyword(Keyword::Timestamp)?;
                    Some(self.integer()?)
                } else {
                    None
                };
                Ok(AlterTableAction::Drop {
                    if_exists,
                    columns,
                    timestamp,
                })
            }
            Some(Keyword::Rename) => {
                self.advance();
                let if_exists = self.if_exists()?;
                let renames = self.renames()?;
                Ok(AlterTableAction::Rename { if_exists, renames })
            }
            Some(Keyword::With) => {
                self.advance();
                Ok(AlterTableAction::With(self.properties()?))
            }
            _ => Err(self.mismatched(&["K_ALTER", "K_ADD", "K_DROP", "K_RENAME", "K_WITH"])),
        }
    }

    /// `c` or `(c, d, ...)`
    fn ident_or_list(&mut self) -> Result<Vec<Name>> {
        if !self.eat(&TokenKind::LeftParen) {
            return Ok(vec![self.ident()?]);
        }
        let mut names = vec![self.ident()?];
        while self.eat(&TokenKind::Comma) {
            names.push(self.ident()?);
        }
        self.expect(TokenKind::RightParen)?;
        Ok(names)
    }

    /// `a TO b [AND c TO d ...]`
    fn renames(&mut self) -> Result<Vec<(Name, Name)>> {
        let mut renames = Vec::new();
        loop {
            let from = self.ident()?;
            self.expect_keyword(Keyword::To)?;
            renames.push((from, self.ident()?));
            if !self.eat_keyword(Keyword::And) {
                return Ok(renames);
            }
        }
    }

    fn alter_type_action(&mut self) -> Result<AlterTypeAction> {
        match self.peek().kind.keyword() {
            Some(Keyword::Alter) => {
                self.advance();
                let field = self.ident()?;
                self.expect_keyword(Keyword::Type)?;
                let ty = self.type_expr()?;
                Ok(AlterTypeAction::AlterField { field, ty })
            }
            Some(Keyword::Add) => {
                self.advance();
                let if_not_exists = self.if_not_exists()?;
                let field = self.ident()?;
                let ty = self.type_expr()?;
                Ok(AlterTypeAction::Add {
                    if_not_exists,
                    field,
                    ty,
                })
            }
            Some(Keyword::Rename) => {
                self.advance();
                let if_exists = self.if_exists()?;
                let renames = self.renames()?;
                Ok(AlterTypeAction::Rename { if_exists, renames })
            }
            _ => Err(self.mismatched(&["K_ALTER", "K_ADD", "K_RENAME"])),
        }
    }

    /// `DROP ...`
    pub(super) fn drop(&mut self) -> Result<Statement> {
        if self.at_keyspace_keyword(1) {
            self.advance();
            self.advance();
            let if_exists = self.if_exists()?;
            let name = self.keyspace_name()?;
            return Ok(Statement::DropKeyspace(DropKeyspace { if_exists, name }));
        }
        if self.at_table_keyword(1) {
            self.advance();
            self.advance();
            let if_exists = self.if_exists()?;
            let table = self.qualified_name()?;
            return Ok(Statement::DropTable(DropTable { if_exists, table }));
        }
        match self.peek_nth(1).keyword() {
            Some(Keyword::Type) => {
                self.advance();
                self.advance();
                let if_exists = self.if_exists()?;
                let name = self.user_type_name()?;
                Ok(Statement::DropType(DropType { if_exists, name }))
            }
            Some(Keyword::Index) => {
                self.advance();
                self.advance();
                let if_exists = self.if_exists()?;
                let name = self.index_name()?;
                Ok(Statement::DropIndex(DropIndex { if_exists, name }))
            }
            Some(Keyword::Materialized) => Err(self.unsupported_statement(3)),
            Some(
                Keyword::Function
                | Keyword::Aggregate
                | Keyword::Trigger
                | Keyword::Role
                | Keyword::User
                | Keyword::Identity,
            ) => Err(self.unsupported_statement(2)),
            _ => {
                self.advance();
                Err(self.no_viable())
            }
        }
    }

    /// `TRUNCATE [TABLE] t`
    pub(super) fn truncate(&mut self) -> Result<Statement> {
        self.expect_keyword(Keyword::Truncate)?;
        if self.at_table_keyword(0) {
            self.advance();
        }
        let table = self.qualified_name()?;
        Ok(Statement::Truncate(Truncate { table }))
    }
}
