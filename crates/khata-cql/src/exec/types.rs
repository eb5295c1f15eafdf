//! Column types as the native protocol describes them in result and prepared metadata.

use khata_types::schema::CqlType;

use crate::frame::ColumnType;

/// The protocol's description of a CQL type.
pub(crate) fn column_type(ty: &CqlType) -> ColumnType {
    match ty {
        CqlType::Ascii => ColumnType::Ascii,
        CqlType::Bigint => ColumnType::Bigint,
        CqlType::Blob => ColumnType::Blob,
        CqlType::Boolean => ColumnType::Boolean,
        CqlType::Counter => ColumnType::Counter,
        CqlType::Date => ColumnType::Date,
        CqlType::Decimal => ColumnType::Decimal,
        CqlType::Double => ColumnType::Double,
        CqlType::Duration => ColumnType::Duration,
        CqlType::Float => ColumnType::Float,
        CqlType::Inet => ColumnType::Inet,
        CqlType::Int => ColumnType::Int,
        CqlType::Smallint => ColumnType::Smallint,
        CqlType::Text => ColumnType::Varchar,
        CqlType::Time => ColumnType::Time,
        CqlType::Timestamp => ColumnType::Timestamp,
        CqlType::Timeuuid => ColumnType::Timeuuid,
        CqlType::Tinyint => ColumnType::Tinyint,
        CqlType::Uuid => ColumnType::Uuid,
        CqlType::Varint => ColumnType::Varint,
        CqlType::List { element, .. } => ColumnType::List(Box::new(column_type(element))),
        CqlType::Set { element, .. } => ColumnType::Set(Box::new(column_type(element))),
        CqlType::Map { key, value, .. } => {
            ColumnType::Map(Box::new(column_type(key)), Box::new(column_type(value)))
        }
        CqlType::Tuple(elements) => ColumnType::Tuple(elements.iter().map(column_type).collect()),
        CqlType::Udt {
            keyspace,
            name,
            fields,
            ..
        } => ColumnType::Udt {
            keyspace: keyspace.clone(),
            name: name.clone(),
            fields: fields
                .iter()
                .map(|(n, t)| (n.clone(), column_type(t)))
                .collect(),
        },
        CqlType::Vector { element, dimension } => {
            ColumnType::vector(&column_type(element), *dimension)
        }
    }
}
