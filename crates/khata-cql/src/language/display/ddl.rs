//! `Display` for schema statements and `DESCRIBE`.

use std::fmt::{self, Display, Formatter};

use super::super::ast::{
    AlterKeyspace, AlterTable, AlterTableAction, AlterType, AlterTypeAction, ColumnDefinition,
    CreateIndex, CreateKeyspace, CreateTable, CreateType, Describe, DescribeTarget, DropIndex,
    DropKeyspace, DropTable, DropType, IndexTargetKind, Name, OrderDirection, Property,
    PropertyValue, Truncate,
};
use super::{FunctionNameDisplay, UserTypeNameDisplay, comma_separated};

fn if_exists(flag: bool) -> &'static str {
    if flag { "IF EXISTS " } else { "" }
}

fn if_not_exists(flag: bool) -> &'static str {
    if flag { "IF NOT EXISTS " } else { "" }
}

impl Display for Property {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} = ", self.name)?;
        match &self.value {
            PropertyValue::Constant(literal) => literal.fmt(f),
            PropertyValue::Word(word) => f.write_str(word),
            PropertyValue::Map(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key}: {value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// `p1 AND p2 ...`
fn write_properties(f: &mut Formatter<'_>, properties: &[Property]) -> fmt::Result {
    for (i, property) in properties.iter().enumerate() {
        if i > 0 {
            f.write_str(" AND ")?;
        }
        property.fmt(f)?;
    }
    Ok(())
}

impl Display for CreateKeyspace {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ine = if_not_exists(self.if_not_exists);
        write!(f, "CREATE KEYSPACE {ine}{} WITH ", self.name)?;
        write_properties(f, &self.properties)
    }
}

impl Display for AlterKeyspace {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ie = if_exists(self.if_exists);
        write!(f, "ALTER KEYSPACE {ie}{} WITH ", self.name)?;
        write_properties(f, &self.properties)
    }
}

impl Display for DropKeyspace {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DROP KEYSPACE {}{}",
            if_exists(self.if_exists),
            self.name
        )
    }
}

impl Display for ColumnDefinition {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.ty)?;
        if self.is_static {
            f.write_str(" STATIC")?;
        }
        Ok(())
    }
}

impl Display for CreateTable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ine = if_not_exists(self.if_not_exists);
        write!(f, "CREATE TABLE {ine}{} (", self.name)?;
        for column in &self.columns {
            write!(f, "{column}, ")?;
        }
        f.write_str("PRIMARY KEY (")?;
        let key = &self.primary_key;
        if key.partition_key.len() == 1 {
            key.partition_key[0].fmt(f)?;
        } else {
            f.write_str("(")?;
            comma_separated(f, &key.partition_key)?;
            f.write_str(")")?;
        }
        for column in &key.clustering {
            write!(f, ", {column}")?;
        }
        f.write_str("))")?;
        let mut first = true;
        let mut clause = |f: &mut Formatter<'_>| {
            let word = if first { " WITH " } else { " AND " };
            first = false;
            f.write_str(word)
        };
        if !self.clustering_order.is_empty() {
            clause(f)?;
            f.write_str("CLUSTERING ORDER BY (")?;
            for (i, (column, direction)) in self.clustering_order.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                let direction = match direction {
                    OrderDirection::Asc => "ASC",
                    OrderDirection::Desc => "DESC",
                };
                write!(f, "{column} {direction}")?;
            }
            f.write_str(")")?;
        }
        for property in &self.properties {
            clause(f)?;
            property.fmt(f)?;
        }
        Ok(())
    }
}

/// `a TO b AND c TO d`
fn write_renames(f: &mut Formatter<'_>, renames: &[(Name, Name)]) -> fmt::Result {
    for (i, (from, to)) in renames.iter().enumerate() {
        if i > 0 {
            f.write_str(" AND ")?;
        }
        write!(f, "{from} TO {to}")?;
    }
    Ok(())
}

impl Display for AlterTable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ALTER TABLE {}{} ",
            if_exists(self.if_exists),
            self.table
        )?;
        match &self.action {
            AlterTableAction::AlterColumnType { column, ty } => {
                write!(f, "ALTER {column} TYPE {ty}")
            }
            AlterTableAction::Add {
                if_not_exists: ine,
                columns,
            } => {
                write!(f, "ADD {}(", if_not_exists(*ine))?;
                comma_separated(f, columns)?;
                f.write_str(")")
            }
            AlterTableAction::Drop {
                if_exists: ie,
                columns,
                timestamp,
            } => {
                write!(f, "DROP {}(", if_exists(*ie))?;
                comma_separated(f, columns)?;
                f.write_str(")")?;
                if let Some(timestamp) = timestamp {
                    write!(f, " USING TIMESTAMP {timestamp}")?;
                }
                Ok(())
            }
            AlterTableAction::Rename {
                if_exists: ie,
                renames,
            } => {
                write!(f, "RENAME {}", if_exists(*ie))?;
                write_renames(f, renames)
            }
            AlterTableAction::DropCompactStorage => f.write_str("DROP COMPACT STORAGE"),
            AlterTableAction::With(properties) => {
                f.write_str("WITH ")?;
                write_properties(f, properties)
            }
        }
    }
}

impl Display for DropTable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "DROP TABLE {}{}", if_exists(self.if_exists), self.table)
    }
}

impl Display for Truncate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "TRUNCATE TABLE {}", self.table)
    }
}

impl Display for CreateType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ine = if_not_exists(self.if_not_exists);
        write!(f, "CREATE TYPE {ine}{} (", UserTypeNameDisplay(&self.name))?;
        for (i, (field, ty)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{field} {ty}")?;
        }
        f.write_str(")")
    }
}

impl Display for AlterType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ie = if_exists(self.if_exists);
        write!(f, "ALTER TYPE {ie}{} ", UserTypeNameDisplay(&self.name))?;
        match &self.action {
            AlterTypeAction::AlterField { field, ty } => write!(f, "ALTER {field} TYPE {ty}"),
            AlterTypeAction::Add {
                if_not_exists: ine,
                field,
                ty,
            } => write!(f, "ADD {}{field} {ty}", if_not_exists(*ine)),
            AlterTypeAction::Rename {
                if_exists: ie,
                renames,
            } => {
                write!(f, "RENAME {}", if_exists(*ie))?;
                write_renames(f, renames)
            }
        }
    }
}

impl Display for DropType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ie = if_exists(self.if_exists);
        write!(f, "DROP TYPE {ie}{}", UserTypeNameDisplay(&self.name))
    }
}

impl Display for CreateIndex {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE ")?;
        if self.custom {
            f.write_str("CUSTOM ")?;
        }
        write!(f, "INDEX {}", if_not_exists(self.if_not_exists))?;
        if let Some(name) = &self.name {
            write!(f, "{name} ")?;
        }
        write!(f, "ON {} (", self.table)?;
        for (i, target) in self.targets.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let c = &target.column;
            match target.kind {
                IndexTargetKind::Simple => write!(f, "{c}")?,
                IndexTargetKind::Keys => write!(f, "KEYS({c})")?,
                IndexTargetKind::Values => write!(f, "VALUES({c})")?,
                IndexTargetKind::Entries => write!(f, "ENTRIES({c})")?,
                IndexTargetKind::Full => write!(f, "FULL({c})")?,
            }
        }
        f.write_str(")")?;
        if let Some(class) = &self.using {
            write!(f, " USING '{}'", class.replace('\'', "''"))?;
        }
        if !self.properties.is_empty() {
            f.write_str(" WITH ")?;
            write_properties(f, &self.properties)?;
        }
        Ok(())
    }
}

impl Display for DropIndex {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "DROP INDEX {}{}", if_exists(self.if_exists), self.name)
    }
}

impl Display for Describe {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DESCRIBE ")?;
        match &self.target {
            DescribeTarget::Cluster => f.write_str("CLUSTER")?,
            DescribeTarget::Schema { full: false } => f.write_str("SCHEMA")?,
            DescribeTarget::Schema { full: true } => f.write_str("FULL SCHEMA")?,
            DescribeTarget::Keyspaces => f.write_str("KEYSPACES")?,
            DescribeTarget::Keyspace { only, name } => {
                if *only {
                    f.write_str("ONLY ")?;
                }
                f.write_str("KEYSPACE")?;
                if let Some(name) = name {
                    write!(f, " {name}")?;
                }
            }
            DescribeTarget::Tables => f.write_str("TABLES")?,
            DescribeTarget::Table(name) => write!(f, "TABLE {name}")?,
            DescribeTarget::Index(name) => write!(f, "INDEX {name}")?,
            DescribeTarget::MaterializedView(name) => write!(f, "MATERIALIZED VIEW {name}")?,
            DescribeTarget::Types => f.write_str("TYPES")?,
            DescribeTarget::Type(name) => write!(f, "TYPE {}", UserTypeNameDisplay(name))?,
            DescribeTarget::Functions => f.write_str("FUNCTIONS")?,
            DescribeTarget::Function(name) => write!(f, "FUNCTION {}", FunctionNameDisplay(name))?,
            DescribeTarget::Aggregates => f.write_str("AGGREGATES")?,
            DescribeTarget::Aggregate(name) => {
                write!(f, "AGGREGATE {}", FunctionNameDisplay(name))?
            }
            DescribeTarget::Generic(name) => name.fmt(f)?,
        }
        if self.with_internals {
            f.write_str(" WITH INTERNALS")?;
        }
        Ok(())
    }
}
