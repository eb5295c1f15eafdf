//! Column types as the protocol describes them: the [option] of spec §4.2.5.2, used in result
//! and bind-marker metadata.
//!
//! Native types are option ids with no value; list/set/map/tuple/UDT nest further [option]s;
//! anything else is a Custom type named by its Cassandra marshal class. Vectors have no option
//! id of their own: they travel as Custom `org.apache.cassandra.db.marshal.VectorType(<element
//! class>, <dimensions>)`, which is what Cassandra 5 sends and what drivers parse
//! ([`ColumnType::vector`] builds it).
//!
//! Decoding bounds the nesting to [`MAX_TYPE_DEPTH`] so a hostile body cannot exhaust the stack.

use bytes::{BufMut, BytesMut};

use super::error::{EncodeError, WireError};
use super::header::ProtocolVersion;
use super::wire::{WireReader, put_count, put_string};

/// The deepest type nesting accepted when decoding an [option].
pub const MAX_TYPE_DEPTH: usize = 64;

const MARSHAL: &str = "org.apache.cassandra.db.marshal.";

/// A CQL type as an [option].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// 0x0000: a custom type, by fully qualified class name.
    Custom(String),
    /// 0x0001
    Ascii,
    /// 0x0002
    Bigint,
    /// 0x0003
    Blob,
    /// 0x0004
    Boolean,
    /// 0x0005
    Counter,
    /// 0x0006
    Decimal,
    /// 0x0007
    Double,
    /// 0x0008
    Float,
    /// 0x0009
    Int,
    /// 0x000B
    Timestamp,
    /// 0x000C
    Uuid,
    /// 0x000D (text is varchar)
    Varchar,
    /// 0x000E
    Varint,
    /// 0x000F
    Timeuuid,
    /// 0x0010
    Inet,
    /// 0x0011 (v4+)
    Date,
    /// 0x0012 (v4+)
    Time,
    /// 0x0013 (v4+)
    Smallint,
    /// 0x0014 (v4+)
    Tinyint,
    /// 0x0015 (v5; sent as Custom `DurationType` to older clients by Cassandra)
    Duration,
    /// 0x0020
    List(Box<ColumnType>),
    /// 0x0021
    Map(Box<ColumnType>, Box<ColumnType>),
    /// 0x0022
    Set(Box<ColumnType>),
    /// 0x0030
    Udt {
        /// The keyspace the type is defined in.
        keyspace: String,
        /// The type's name.
        name: String,
        /// Field names and types, in definition order.
        fields: Vec<(String, ColumnType)>,
    },
    /// 0x0031
    Tuple(Vec<ColumnType>),
}

impl ColumnType {
    /// A `vector<element, dimensions>` as the Custom type Cassandra sends.
    pub fn vector(element: &ColumnType, dimensions: u32) -> ColumnType {
        ColumnType::Custom(format!(
            "{MARSHAL}VectorType({}, {dimensions})",
            element.marshal_class()
        ))
    }

    /// The Cassandra marshal class name of this type (as used inside Custom type names).
    pub fn marshal_class(&self) -> String {
        let simple = match self {
            ColumnType::Custom(name) => return name.clone(),
            ColumnType::Ascii => "AsciiType",
            ColumnType::Bigint => "LongType",
            ColumnType::Blob => "BytesType",
            ColumnType::Boolean => "BooleanType",
            ColumnType::Counter => "CounterColumnType",
            ColumnType::Decimal => "DecimalType",
            ColumnType::Double => "DoubleType",
            ColumnType::Float => "FloatType",
            ColumnType::Int => "Int32Type",
            ColumnType::Timestamp => "TimestampType",
            ColumnType::Uuid => "UUIDType",
            ColumnType::Varchar => "UTF8Type",
            ColumnType::Varint => "IntegerType",
            ColumnType::Timeuuid => "TimeUUIDType",
            ColumnType::Inet => "InetAddressType",
            ColumnType::Date => "SimpleDateType",
            ColumnType::Time => "TimeType",
            ColumnType::Smallint => "ShortType",
            ColumnType::Tinyint => "ByteType",
            ColumnType::Duration => "DurationType",
            ColumnType::List(e) => return format!("{MARSHAL}ListType({})", e.marshal_class()),
            ColumnType::Set(e) => return format!("{MARSHAL}SetType({})", e.marshal_class()),
            ColumnType::Map(k, v) => {
                return format!(
                    "{MARSHAL}MapType({},{})",
                    k.marshal_class(),
                    v.marshal_class()
                );
            }
            ColumnType::Tuple(items) => {
                let inner: Vec<String> = items.iter().map(ColumnType::marshal_class).collect();
                return format!("{MARSHAL}TupleType({})", inner.join(","));
            }
            ColumnType::Udt {
                keyspace,
                name,
                fields,
            } => {
                let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
                let inner: Vec<String> = fields
                    .iter()
                    .map(|(f, t)| {
                        let fhex: String = f.bytes().map(|b| format!("{b:02x}")).collect();
                        format!("{fhex}:{}", t.marshal_class())
                    })
                    .collect();
                return format!("{MARSHAL}UserType({keyspace},{hex},{})", inner.join(","));
            }
        };
        format!("{MARSHAL}{simple}")
    }

    /// Reads an [option].
    pub fn read(r: &mut WireReader) -> Result<ColumnType, WireError> {
        Self::read_depth(r, 0)
    }

    fn read_depth(r: &mut WireReader, depth: usize) -> Result<ColumnType, WireError> {
        if depth >= MAX_TYPE_DEPTH {
            return Err(WireError::TypeTooDeep(MAX_TYPE_DEPTH));
        }
        let id = r.short("type option id")?;
        let d = depth + 1;
        Ok(match id {
            // The native types an older protocol version sends as Custom come back as
            // themselves, as drivers read them.
            0x0000 => {
                let name = r.string("custom type name")?;
                match name.strip_prefix(MARSHAL) {
                    Some("SimpleDateType") => ColumnType::Date,
                    Some("TimeType") => ColumnType::Time,
                    Some("ShortType") => ColumnType::Smallint,
                    Some("ByteType") => ColumnType::Tinyint,
                    Some("DurationType") => ColumnType::Duration,
                    _ => ColumnType::Custom(name),
                }
            }
            0x0001 => ColumnType::Ascii,
            0x0002 => ColumnType::Bigint,
            0x0003 => ColumnType::Blob,
            0x0004 => ColumnType::Boolean,
            0x0005 => ColumnType::Counter,
            0x0006 => ColumnType::Decimal,
            0x0007 => ColumnType::Double,
            0x0008 => ColumnType::Float,
            0x0009 => ColumnType::Int,
            0x000B => ColumnType::Timestamp,
            0x000C => ColumnType::Uuid,
            0x000D => ColumnType::Varchar,
            0x000E => ColumnType::Varint,
            0x000F => ColumnType::Timeuuid,
            0x0010 => ColumnType::Inet,
            0x0011 => ColumnType::Date,
            0x0012 => ColumnType::Time,
            0x0013 => ColumnType::Smallint,
            0x0014 => ColumnType::Tinyint,
            0x0015 => ColumnType::Duration,
            0x0020 => ColumnType::List(Box::new(Self::read_depth(r, d)?)),
            0x0021 => {
                let k = Self::read_depth(r, d)?;
                let v = Self::read_depth(r, d)?;
                ColumnType::Map(Box::new(k), Box::new(v))
            }
            0x0022 => ColumnType::Set(Box::new(Self::read_depth(r, d)?)),
            0x0030 => {
                let keyspace = r.string("udt keyspace")?;
                let name = r.string("udt name")?;
                let n = usize::from(r.short("udt field count")?);
                let mut fields = Vec::with_capacity(n.min(r.remaining() / 4));
                for _ in 0..n {
                    let f = r.string("udt field name")?;
                    fields.push((f, Self::read_depth(r, d)?));
                }
                ColumnType::Udt {
                    keyspace,
                    name,
                    fields,
                }
            }
            0x0031 => {
                let n = usize::from(r.short("tuple size")?);
                let mut items = Vec::with_capacity(n.min(r.remaining() / 2));
                for _ in 0..n {
                    items.push(Self::read_depth(r, d)?);
                }
                ColumnType::Tuple(items)
            }
            other => {
                return Err(WireError::Invalid {
                    what: "type option id",
                    detail: format!("0x{other:04X}"),
                });
            }
        })
    }

    /// The option id of this type.
    pub fn option_id(&self) -> u16 {
        match self {
            ColumnType::Custom(_) => 0x0000,
            ColumnType::Ascii => 0x0001,
            ColumnType::Bigint => 0x0002,
            ColumnType::Blob => 0x0003,
            ColumnType::Boolean => 0x0004,
            ColumnType::Counter => 0x0005,
            ColumnType::Decimal => 0x0006,
            ColumnType::Double => 0x0007,
            ColumnType::Float => 0x0008,
            ColumnType::Int => 0x0009,
            ColumnType::Timestamp => 0x000B,
            ColumnType::Uuid => 0x000C,
            ColumnType::Varchar => 0x000D,
            ColumnType::Varint => 0x000E,
            ColumnType::Timeuuid => 0x000F,
            ColumnType::Inet => 0x0010,
            ColumnType::Date => 0x0011,
            ColumnType::Time => 0x0012,
            ColumnType::Smallint => 0x0013,
            ColumnType::Tinyint => 0x0014,
            ColumnType::Duration => 0x0015,
            ColumnType::List(_) => 0x0020,
            ColumnType::Map(_, _) => 0x0021,
            ColumnType::Set(_) => 0x0022,
            ColumnType::Udt { .. } => 0x0030,
            ColumnType::Tuple(_) => 0x0031,
        }
    }

    /// The first protocol version with an option id for this type: `date`, `time`,
    /// `smallint` and `tinyint` came with v4, `duration` with v5.
    fn first_version(&self) -> ProtocolVersion {
        match self {
            ColumnType::Date | ColumnType::Time | ColumnType::Smallint | ColumnType::Tinyint => {
                ProtocolVersion::V4
            }
            ColumnType::Duration => ProtocolVersion::V5,
            _ => ProtocolVersion::V3,
        }
    }

    /// Writes this type as an [option] of the newest protocol version.
    pub fn write(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.write_for(out, ProtocolVersion::V5)
    }

    /// Writes this type as an [option] of protocol `version`: a type the version has no id
    /// for goes as Custom, named by its marshal class, as Cassandra's `DataType` sends it
    /// (`duration` on v4 as `org.apache.cassandra.db.marshal.DurationType`, which drivers
    /// read as a duration).
    pub fn write_for(
        &self,
        out: &mut BytesMut,
        version: ProtocolVersion,
    ) -> Result<(), EncodeError> {
        if self.first_version() > version {
            out.put_u16(0x0000);
            return put_string(out, "custom type name", &self.marshal_class());
        }
        out.put_u16(self.option_id());
        match self {
            ColumnType::Custom(name) => put_string(out, "custom type name", name)?,
            ColumnType::List(e) | ColumnType::Set(e) => e.write_for(out, version)?,
            ColumnType::Map(k, v) => {
                k.write_for(out, version)?;
                v.write_for(out, version)?;
            }
            ColumnType::Udt {
                keyspace,
                name,
                fields,
            } => {
                put_string(out, "udt keyspace", keyspace)?;
                put_string(out, "udt name", name)?;
                put_count(out, "udt fields", fields.len())?;
                for (f, t) in fields {
                    put_string(out, "udt field name", f)?;
                    t.write_for(out, version)?;
                }
            }
            ColumnType::Tuple(items) => {
                put_count(out, "tuple items", items.len())?;
                for t in items {
                    t.write_for(out, version)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}
