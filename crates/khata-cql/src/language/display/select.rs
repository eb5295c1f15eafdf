//! `Display` for `SELECT`, selectors and relations.

use std::fmt::{self, Display, Formatter};

use super::super::ast::{
    InValues, OrderDirection, Ordering, Relation, Select, Selectable, Selection, Selector,
};
use super::{FunctionNameDisplay, comma_separated, write_negation};

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        if self.json {
            f.write_str("JSON ")?;
        }
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        write!(f, "{} FROM {}", self.selection, self.table)?;
        write_where(f, &self.where_clause)?;
        if !self.group_by.is_empty() {
            f.write_str(" GROUP BY ")?;
            comma_separated(f, &self.group_by)?;
        }
        if !self.order_by.is_empty() {
            f.write_str(" ORDER BY ")?;
            comma_separated(f, &self.order_by)?;
        }
        if let Some(n) = &self.per_partition_limit {
            write!(f, " PER PARTITION LIMIT {n}")?;
        }
        if let Some(n) = &self.limit {
            write!(f, " LIMIT {n}")?;
        }
        if self.allow_filtering {
            f.write_str(" ALLOW FILTERING")?;
        }
        Ok(())
    }
}

/// ` WHERE r1 AND r2`, or nothing.
pub(crate) fn write_where(f: &mut Formatter<'_>, relations: &[Relation]) -> fmt::Result {
    for (i, relation) in relations.iter().enumerate() {
        f.write_str(if i == 0 { " WHERE " } else { " AND " })?;
        relation.fmt(f)?;
    }
    Ok(())
}

impl Display for Selection {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Selection::Wildcard => f.write_str("*"),
            Selection::Selectors(selectors) => comma_separated(f, selectors),
        }
    }
}

impl Display for Selector {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.selectable.fmt(f)?;
        if let Some(alias) = &self.alias {
            write!(f, " AS {alias}")?;
        }
        Ok(())
    }
}

impl Display for Selectable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Selectable::Column(name) => name.fmt(f),
            Selectable::Term(term) => term.fmt(f),
            Selectable::CountRows => f.write_str("count(*)"),
            Selectable::Writetime { kind, column } => write!(f, "{}({column})", kind.keyword()),
            Selectable::FunctionCall { name, args } => {
                write!(f, "{}(", FunctionNameDisplay(name))?;
                comma_separated(f, args)?;
                f.write_str(")")
            }
            Selectable::Cast { selectable, ty } => write!(f, "CAST({selectable} AS {ty})"),
            Selectable::Field { selectable, field } => write!(f, "{selectable}.{field}"),
            Selectable::Element { selectable, key } => write!(f, "{selectable}[{key}]"),
            Selectable::Slice {
                selectable,
                from,
                to,
            } => {
                write!(f, "{selectable}[")?;
                if let Some(from) = from {
                    write!(f, "{from} ")?;
                }
                f.write_str("..")?;
                if let Some(to) = to {
                    write!(f, " {to}")?;
                }
                f.write_str("]")
            }
            Selectable::TypeHint { ty, selectable } => write!(f, "({ty}){selectable}"),
            Selectable::Tuple(items) => {
                f.write_str("(")?;
                comma_separated(f, items)?;
                f.write_str(")")
            }
            Selectable::List(items) => {
                f.write_str("[")?;
                comma_separated(f, items)?;
                f.write_str("]")
            }
            Selectable::Set(items) => {
                f.write_str("{")?;
                comma_separated(f, items)?;
                f.write_str("}")
            }
            Selectable::Map(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key}: {value}")?;
                }
                f.write_str("}")
            }
            Selectable::Negation(inner) => write_negation(f, inner),
            Selectable::Arithmetic { op, left, right } => {
                write!(f, "{left} {} {right}", op.symbol())
            }
        }
    }
}

impl Display for Ordering {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.column.fmt(f)?;
        if let Some(vector) = &self.ann_of {
            write!(f, " ANN OF {vector}")?;
        }
        match self.direction {
            OrderDirection::Asc => f.write_str(" ASC"),
            OrderDirection::Desc => f.write_str(" DESC"),
        }
    }
}

impl Display for InValues {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            InValues::Terms(terms) => {
                f.write_str("(")?;
                comma_separated(f, terms)?;
                f.write_str(")")
            }
            InValues::Marker(marker) => marker.fmt(f),
        }
    }
}

impl Display for Relation {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let not = |negated: &bool| if *negated { "NOT " } else { "" };
        match self {
            Relation::Column { column, op, value } => {
                write!(f, "{column} {} {value}", op.symbol())
            }
            Relation::In {
                column,
                negated,
                values,
            } => write!(f, "{column} {}IN {values}", not(negated)),
            Relation::Between { column, low, high } => {
                write!(f, "{column} BETWEEN {low} AND {high}")
            }
            Relation::IsNotNull { column } => write!(f, "{column} IS NOT NULL"),
            Relation::MapElement {
                column,
                key,
                op,
                value,
            } => write!(f, "{column}[{key}] {} {value}", op.symbol()),
            Relation::Token { columns, op, value } => {
                f.write_str("token(")?;
                comma_separated(f, columns)?;
                write!(f, ") {} {value}", op.symbol())
            }
            Relation::MultiColumn { columns, op, value } => {
                f.write_str("(")?;
                comma_separated(f, columns)?;
                write!(f, ") {} {value}", op.symbol())
            }
            Relation::MultiColumnIn {
                columns,
                negated,
                values,
            } => {
                f.write_str("(")?;
                comma_separated(f, columns)?;
                write!(f, ") {}IN {values}", not(negated))
            }
        }
    }
}
