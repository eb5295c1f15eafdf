//! CQL types as written in DDL, casts and type hints (Parser.g's `comparatorType`).

use khata_types::schema::CqlType;

use super::QualifiedName;

/// A native (non-parameterised) CQL type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeType {
    /// `ascii`
    Ascii,
    /// `bigint`
    Bigint,
    /// `blob`
    Blob,
    /// `boolean`
    Boolean,
    /// `counter`
    Counter,
    /// `date`
    Date,
    /// `decimal`
    Decimal,
    /// `double`
    Double,
    /// `duration`
    Duration,
    /// `float`
    Float,
    /// `inet`
    Inet,
    /// `int`
    Int,
    /// `smallint`
    Smallint,
    /// `text` (also spelt `varchar`)
    Text,
    /// `time`
    Time,
    /// `timestamp`
    Timestamp,
    /// `timeuuid`
    Timeuuid,
    /// `tinyint`
    Tinyint,
    /// `uuid`
    Uuid,
    /// `varint`
    Varint,
}

impl NativeType {
    /// The type's CQL name.
    pub fn name(self) -> &'static str {
        match self {
            NativeType::Ascii => "ascii",
            NativeType::Bigint => "bigint",
            NativeType::Blob => "blob",
            NativeType::Boolean => "boolean",
            NativeType::Counter => "counter",
            NativeType::Date => "date",
            NativeType::Decimal => "decimal",
            NativeType::Double => "double",
            NativeType::Duration => "duration",
            NativeType::Float => "float",
            NativeType::Inet => "inet",
            NativeType::Int => "int",
            NativeType::Smallint => "smallint",
            NativeType::Text => "text",
            NativeType::Time => "time",
            NativeType::Timestamp => "timestamp",
            NativeType::Timeuuid => "timeuuid",
            NativeType::Tinyint => "tinyint",
            NativeType::Uuid => "uuid",
            NativeType::Varint => "varint",
        }
    }

    /// The type in khata's schema vocabulary.
    pub fn cql_type(self) -> CqlType {
        match self {
            NativeType::Ascii => CqlType::Ascii,
            NativeType::Bigint => CqlType::Bigint,
            NativeType::Blob => CqlType::Blob,
            NativeType::Boolean => CqlType::Boolean,
            NativeType::Counter => CqlType::Counter,
            NativeType::Date => CqlType::Date,
            NativeType::Decimal => CqlType::Decimal,
            NativeType::Double => CqlType::Double,
            NativeType::Duration => CqlType::Duration,
            NativeType::Float => CqlType::Float,
            NativeType::Inet => CqlType::Inet,
            NativeType::Int => CqlType::Int,
            NativeType::Smallint => CqlType::Smallint,
            NativeType::Text => CqlType::Text,
            NativeType::Time => CqlType::Time,
            NativeType::Timestamp => CqlType::Timestamp,
            NativeType::Timeuuid => CqlType::Timeuuid,
            NativeType::Tinyint => CqlType::Tinyint,
            NativeType::Uuid => CqlType::Uuid,
            NativeType::Varint => CqlType::Varint,
        }
    }
}

/// A type as written. User types are names here; the next layer resolves them against the
/// keyspace's types (which [`TypeExpr::to_cql_type`] takes as a function).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeExpr {
    /// A native type.
    Native(NativeType),
    /// `list<t>`
    List(Box<TypeExpr>),
    /// `set<t>`
    Set(Box<TypeExpr>),
    /// `map<k, v>`
    Map(Box<TypeExpr>, Box<TypeExpr>),
    /// `tuple<a, b, ...>`
    Tuple(Vec<TypeExpr>),
    /// `vector<t, n>`
    Vector {
        /// The element type.
        element: Box<TypeExpr>,
        /// The number of elements, as written (a type of zero or fewer is refused when it is
        /// resolved).
        dimension: i32,
    },
    /// `frozen<t>`
    Frozen(Box<TypeExpr>),
    /// A user-defined type, `ks.name` or `name`.
    UserType(QualifiedName),
    /// `'class.Name'`: a custom type given by its Java class, accepted by the grammar (and
    /// refused by khata when used).
    Custom(String),
}

/// Finds a user type for [`TypeExpr::to_cql_type`]: given the keyspace as written (`None`
/// when unqualified) and the type's name, answers the type's keyspace and its fields.
pub type UserTypeResolver<'a> =
    dyn Fn(Option<&str>, &str) -> Option<(String, Vec<(String, CqlType)>)> + 'a;

/// Why a [`TypeExpr`] has no [`CqlType`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// The user type does not exist.
    #[error("Unknown type {0}")]
    UnknownType(String),
    /// A custom (Java class) type.
    #[error("Custom types are not supported: {0}")]
    CustomType(String),
    /// A non-frozen collection or user type inside a collection.
    #[error("Non-frozen {0}")]
    NonFrozenNested(NonFrozenNested),
    /// `frozen<>` around a native type.
    #[error("frozen<> is only allowed on collections, tuples, and user-defined types")]
    FrozenNative,
    /// `counter` inside a collection, tuple or vector.
    #[error("Counters are not allowed inside collections: {0}")]
    NestedCounter(String),
    /// A vector of no elements.
    #[error("vectors may only have positive dimensions; given {0}")]
    VectorDimension(i32),
}

/// What [`TypeError::NonFrozenNested`] found: a non-frozen user type (`udt`) or collection
/// inside the collection `outer`. Displayed in Cassandra's words, which name which it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NonFrozenNested {
    /// Whether the nested type is a user type (else a collection).
    pub udt: bool,
    /// The collection holding it, as written.
    pub outer: String,
}

impl std::fmt::Display for NonFrozenNested {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.udt { "UDTs" } else { "collections" };
        write!(
            f,
            "{what} are not allowed inside collections: {}",
            self.outer
        )
    }
}

impl TypeExpr {
    /// The type in khata's schema vocabulary, resolving user types with `user_type`, which
    /// is given the keyspace (as written, or `None`) and the type's name and answers the
    /// type's fields. Applies CQL's rules: elements of collections and tuples must be frozen
    /// if they are collections or user types, and everything under `frozen<>` is frozen.
    pub fn to_cql_type(&self, user_type: &UserTypeResolver<'_>) -> Result<CqlType, TypeError> {
        self.resolve(user_type, false)
    }

    fn resolve(
        &self,
        user_type: &UserTypeResolver<'_>,
        frozen: bool,
    ) -> Result<CqlType, TypeError> {
        // Tuple elements are always frozen; collection elements are frozen under `frozen<>`.
        let element = |t: &TypeExpr, frozen: bool| -> Result<Box<CqlType>, TypeError> {
            let resolved = t.resolve(user_type, frozen)?;
            if resolved.is_multi_cell() {
                return Err(TypeError::NonFrozenNested(NonFrozenNested {
                    udt: matches!(resolved, CqlType::Udt { .. }),
                    outer: self.to_string(),
                }));
            }
            if resolved == CqlType::Counter {
                return Err(TypeError::NestedCounter(self.to_string()));
            }
            Ok(Box::new(resolved))
        };
        Ok(match self {
            TypeExpr::Native(n) => n.cql_type(),
            TypeExpr::List(e) => CqlType::List {
                element: element(e, frozen)?,
                frozen,
            },
            TypeExpr::Set(e) => CqlType::Set {
                element: element(e, frozen)?,
                frozen,
            },
            TypeExpr::Map(k, v) => CqlType::Map {
                key: element(k, frozen)?,
                value: element(v, frozen)?,
                frozen,
            },
            TypeExpr::Tuple(items) => CqlType::Tuple(
                items
                    .iter()
                    .map(|t| element(t, true).map(|b| *b))
                    .collect::<Result<_, _>>()?,
            ),
            TypeExpr::Vector {
                element: e,
                dimension,
            } => {
                if *dimension <= 0 {
                    return Err(TypeError::VectorDimension(*dimension));
                }
                // A vector's elements are frozen, whatever they are written as (Cassandra 5.0
                // takes `vector<list<int>, 2>`).
                CqlType::Vector {
                    element: element(e, true)?,
                    dimension: dimension.unsigned_abs(),
                }
            }
            TypeExpr::Frozen(inner) => {
                if matches!(**inner, TypeExpr::Native(_)) {
                    return Err(TypeError::FrozenNative);
                }
                inner.resolve(user_type, true)?
            }
            TypeExpr::UserType(name) => {
                let keyspace = name.keyspace.as_ref().map(|k| k.as_str());
                let (keyspace, fields) = user_type(keyspace, name.name.as_str())
                    .ok_or_else(|| TypeError::UnknownType(name.to_string()))?;
                CqlType::Udt {
                    keyspace,
                    name: name.name.0.clone(),
                    fields,
                    frozen,
                }
            }
            TypeExpr::Custom(class) => match marshal_native(class) {
                Some(native) => native.cql_type(),
                None => return Err(TypeError::CustomType(class.clone())),
            },
        })
    }
}

/// The native type a quoted marshal class names (`'org.apache.cassandra.db.marshal.BytesType'`,
/// or without the package, as `TypeParser` reads it): Cassandra makes such a column the native
/// type itself (`blob`), reported and sent as one.
fn marshal_native(class: &str) -> Option<NativeType> {
    let simple = class
        .trim()
        .strip_prefix("org.apache.cassandra.db.marshal.")
        .unwrap_or(class.trim());
    Some(match simple {
        "AsciiType" => NativeType::Ascii,
        "LongType" => NativeType::Bigint,
        "BytesType" => NativeType::Blob,
        "BooleanType" => NativeType::Boolean,
        "CounterColumnType" => NativeType::Counter,
        "SimpleDateType" => NativeType::Date,
        "DecimalType" => NativeType::Decimal,
        "DoubleType" => NativeType::Double,
        "DurationType" => NativeType::Duration,
        "FloatType" => NativeType::Float,
        "InetAddressType" => NativeType::Inet,
        "Int32Type" => NativeType::Int,
        "ShortType" => NativeType::Smallint,
        "UTF8Type" => NativeType::Text,
        "TimeType" => NativeType::Time,
        "TimestampType" => NativeType::Timestamp,
        "TimeUUIDType" => NativeType::Timeuuid,
        "ByteType" => NativeType::Tinyint,
        "UUIDType" => NativeType::Uuid,
        "IntegerType" => NativeType::Varint,
        _ => return None,
    })
}
