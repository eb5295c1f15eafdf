//! `Display` for `INSERT`, `UPDATE`, `DELETE` and `BATCH`.

use std::fmt::{self, Display, Formatter};

use super::super::ast::{
    Assignment, AssignmentOp, Batch, BatchKind, BatchStatement, Condition, ConditionPredicate,
    Delete, DeleteTarget, ElementSelector, IfClause, Insert, InsertValues, Update, Using,
};
use super::comma_separated;
use super::select::write_where;

impl Display for Using {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(ttl) = &self.ttl {
            parts.push(format!("TTL {ttl}"));
        }
        if let Some(timestamp) = &self.timestamp {
            parts.push(format!("TIMESTAMP {timestamp}"));
        }
        if !parts.is_empty() {
            write!(f, "USING {}", parts.join(" AND "))?;
        }
        Ok(())
    }
}

impl Display for Insert {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "INSERT INTO {} ", self.table)?;
        match &self.values {
            InsertValues::Columns { columns, values } => {
                f.write_str("(")?;
                comma_separated(f, columns)?;
                f.write_str(") VALUES (")?;
                comma_separated(f, values)?;
                f.write_str(")")?;
            }
            InsertValues::Json {
                value,
                default_unset,
            } => {
                write!(f, "JSON {value}")?;
                if *default_unset {
                    f.write_str(" DEFAULT UNSET")?;
                }
            }
        }
        if self.if_not_exists {
            f.write_str(" IF NOT EXISTS")?;
        }
        if !self.using.is_empty() {
            write!(f, " {}", self.using)?;
        }
        Ok(())
    }
}

impl Display for ElementSelector {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ElementSelector::Element(key) => write!(f, "[{key}]"),
            ElementSelector::Field(field) => write!(f, ".{field}"),
        }
    }
}

impl Display for Condition {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.column.fmt(f)?;
        if let Some(selector) = &self.selector {
            selector.fmt(f)?;
        }
        match &self.predicate {
            ConditionPredicate::Compare(op, value) => write!(f, " {} {value}", op.symbol()),
            ConditionPredicate::In(values) => write!(f, " IN {values}"),
        }
    }
}

impl Display for IfClause {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            IfClause::Exists => f.write_str("IF EXISTS"),
            IfClause::Conditions(conditions) => {
                f.write_str("IF ")?;
                for (i, condition) in conditions.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" AND ")?;
                    }
                    condition.fmt(f)?;
                }
                Ok(())
            }
        }
    }
}

impl Display for Assignment {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let c = &self.column;
        match &self.op {
            AssignmentOp::Set(value) => write!(f, "{c} = {value}"),
            AssignmentOp::Add(value) => write!(f, "{c} = {c} + {value}"),
            AssignmentOp::Subtract(value) => write!(f, "{c} = {c} - {value}"),
            AssignmentOp::Prepend(value) => write!(f, "{c} = {value} + {c}"),
            AssignmentOp::SetElement { key, value } => write!(f, "{c}[{key}] = {value}"),
            AssignmentOp::SetField { field, value } => write!(f, "{c}.{field} = {value}"),
        }
    }
}

impl Display for Update {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "UPDATE {}", self.table)?;
        if !self.using.is_empty() {
            write!(f, " {}", self.using)?;
        }
        f.write_str(" SET ")?;
        comma_separated(f, &self.assignments)?;
        write_where(f, &self.where_clause)?;
        if let Some(if_clause) = &self.if_clause {
            write!(f, " {if_clause}")?;
        }
        Ok(())
    }
}

impl Display for DeleteTarget {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.column.fmt(f)?;
        if let Some(selector) = &self.selector {
            selector.fmt(f)?;
        }
        Ok(())
    }
}

impl Display for Delete {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DELETE ")?;
        if !self.targets.is_empty() {
            comma_separated(f, &self.targets)?;
            f.write_str(" ")?;
        }
        write!(f, "FROM {}", self.table)?;
        if let Some(timestamp) = &self.timestamp {
            write!(f, " USING TIMESTAMP {timestamp}")?;
        }
        write_where(f, &self.where_clause)?;
        if let Some(if_clause) = &self.if_clause {
            write!(f, " {if_clause}")?;
        }
        Ok(())
    }
}

impl Display for BatchStatement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            BatchStatement::Insert(s) => s.fmt(f),
            BatchStatement::Update(s) => s.fmt(f),
            BatchStatement::Delete(s) => s.fmt(f),
        }
    }
}

impl Display for Batch {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            BatchKind::Logged => "BEGIN BATCH",
            BatchKind::Unlogged => "BEGIN UNLOGGED BATCH",
            BatchKind::Counter => "BEGIN COUNTER BATCH",
        })?;
        if !self.using.is_empty() {
            write!(f, " {}", self.using)?;
        }
        for statement in &self.statements {
            write!(f, " {statement};")?;
        }
        f.write_str(" APPLY BATCH")
    }
}
