//! Why bytes or a literal are not a value of a type.
//!
//! Messages are Cassandra's (its `MarshalException`s from `org.apache.cassandra.serializers`
//! and the `InvalidRequestException`s of `cql3.Constants`, `Lists`, `Sets`, `Maps`, `Tuples`,
//! `UserTypes`, `Vectors`, `Duration`), so that drivers and tests that match on them see what
//! Cassandra would say. The front end sends both kinds as an `Invalid` error (code 0x2200).
//! None is retryable: the same bytes or text fail the same way again.

use thiserror::Error;

/// Why bytes from the network (a bound value) are not a value of the type.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ValueError {
    /// A fixed-size type with a wrong number of bytes; `expected` is Cassandra's wording of the
    /// sizes it accepts (`4 or 0 byte int`).
    #[error("Expected {expected} ({len})")]
    Length { expected: &'static str, len: usize },
    /// A `uuid` or `timeuuid` neither 16 nor 0 bytes long.
    #[error("UUID should be 16 or 0 bytes ({0})")]
    UuidLength(usize),
    /// An `inet` neither 4 nor 16 bytes long (the bytes in hex).
    #[error("Expected 4 or 16 byte inetaddress; got {0}")]
    InetLength(String),
    /// A `decimal` of 1 to 3 bytes (less than its scale).
    #[error("Expected 0 or at least 4 bytes ({0})")]
    DecimalLength(usize),
    /// A `decimal` of exactly its scale, without an unscaled value.
    #[error("Zero length BigInteger")]
    DecimalWithoutUnscaled,
    /// `text` that is not UTF-8.
    #[error("String didn't validate.")]
    InvalidUtf8,
    /// `ascii` with a byte above 127 (shown as Java's signed byte).
    #[error("Invalid byte for ascii: {0}")]
    InvalidAscii(i8),
    /// A `time` outside a day.
    #[error("Time value out of range: {0} is not in 0..86399999999999 nanoseconds")]
    TimeOutOfRange(i64),
    /// A `timeuuid` that is not a version 1 UUID.
    #[error("Invalid version for TimeUUID type.")]
    TimeuuidVersion,
    /// A `duration` shorter than its three variable-length integers.
    #[error("Expected at least 3 bytes for a duration ({0})")]
    DurationLength(usize),
    /// A `duration` whose variable-length integers are cut short.
    #[error("Not enough bytes to read a duration")]
    DurationTruncated,
    /// A `duration` with bytes after its three integers.
    #[error("Unexpected extraneous bytes after duration value")]
    DurationExtraneous,
    /// A duration's months or days beyond 32 bits.
    #[error("The duration {part} must be a 32 bits integer but was: {value}")]
    DurationOverflow { part: &'static str, value: i64 },
    /// A duration's parts of different signs.
    #[error(
        "The duration months, days and nanoseconds must be all of the same sign ({months}, {days}, {nanos})"
    )]
    DurationSigns { months: i64, days: i64, nanos: i64 },
    /// A collection (or vector) cut short; `kind` is `list`, `set`, `map` or `vector`.
    #[error("Not enough bytes to read a {kind}")]
    CollectionTruncated { kind: &'static str },
    /// A collection with a negative element count.
    #[error("The data cannot be deserialized as a {kind}")]
    NegativeCount { kind: &'static str },
    /// Bytes after the last element of a collection or vector.
    #[error("Unexpected extraneous bytes after {kind} value")]
    CollectionExtraneous { kind: &'static str },
    /// A null element in a list, set, map or vector.
    #[error("null is not supported inside collections")]
    NullInCollection,
    /// A tuple cut short in the length of field `index`.
    #[error("Not enough bytes to read size of {index}th component")]
    TupleFieldSize { index: usize },
    /// A tuple cut short in field `index`.
    #[error("Not enough bytes to read {index}th component")]
    TupleField { index: usize },
    /// A tuple with more fields than its type.
    #[error("Invalid remaining data after end of tuple value")]
    TupleExtraneous,
    /// A UDT value cut short in the length of a field.
    #[error("Not enough bytes to read size of {index}th field {name}")]
    UdtFieldSize { index: usize, name: String },
    /// A UDT value cut short in a field.
    #[error("Not enough bytes to read {index}th field {name}")]
    UdtField { index: usize, name: String },
    /// A UDT value with more fields than its type.
    #[error("Invalid remaining data after end of UDT value")]
    UdtExtraneous,
    /// A vector cut short; `ty` is the vector's type (`vector<int, 2>`).
    #[error("Not enough bytes to read a {ty}")]
    VectorTruncated { ty: String },
    /// A vector with `extra` bytes after its last element.
    #[error("Unexpected {extra} extraneous bytes after {ty} value")]
    VectorExtraneous { ty: String, extra: usize },
    /// A vector with an empty element (a null, to Cassandra's vectors).
    #[error("Element at index {index} is null (expected type {ty})")]
    NullInVector { index: usize, ty: String },
    /// Zero bytes for a type with no empty value (a collection).
    #[error("Not enough bytes to read a {kind}")]
    EmptyCollection { kind: &'static str },
}

impl ValueError {
    /// Whether sending the same bytes again could succeed: never.
    pub fn is_retryable(&self) -> bool {
        false
    }
}

/// Why a literal term cannot be a value of the receiving column (or element, or field).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LiteralError {
    /// A constant of a kind the type does not take (`'abc'` for an `int`). `kind` is Cassandra's
    /// name for the constant's kind: `STRING`, `INTEGER`, `FLOAT`, `BOOLEAN`, `UUID`, `HEX`,
    /// `DURATION`.
    #[error("Invalid {kind} constant ({text}) for \"{receiver}\" of type {ty}")]
    NotAssignable {
        kind: &'static str,
        text: String,
        receiver: String,
        ty: String,
    },
    /// A constant of the right kind whose text is not a value of the type (out of range,
    /// malformed): the message of the type's `fromString`, such as
    /// `Unable to make byte from '300'`.
    #[error("{0}")]
    InvalidConstant(String),
    /// A collection, tuple, UDT or vector literal that does not fit the receiver, or with an
    /// element that does not: the message says which (`Invalid list literal for l of type int`,
    /// `Invalid map literal for m: key 'a' is not of type int`).
    #[error("{0}")]
    InvalidLiteral(String),
    /// `null` inside a list, set, map or vector literal.
    #[error("null is not supported inside collections")]
    NullInCollection,
    /// `null` for a counter.
    #[error("Invalid null value for counter increment/decrement")]
    NullCounter,
    /// A type hint (`(int) ?`) that does not match the receiver.
    #[error("Cannot assign value {term} to {receiver} of type {ty}")]
    TypeHint {
        term: String,
        receiver: String,
        ty: String,
    },
    /// A term that is not a literal: a bind marker, a function call, arithmetic. The executor
    /// evaluates those.
    #[error("{0} is not a literal")]
    NotALiteral(String),
    /// An unset bind value where a value is needed, for the receiver named; a tuple or UDT
    /// literal says which of its fields instead.
    #[error("Invalid unset value for {0}")]
    Unset(String),
    /// `fromJson()` on text that is not JSON of the receiver's type: Cassandra's function
    /// failure (`execution of 'system.fromjson[text]' failed: ...`).
    #[error("{0}")]
    FromJsonFailed(String),
    /// An arithmetic operation that failed on its values (`the operation 'int / int' failed:
    /// / by zero`): Cassandra's `OperationExecutionException`, a function failure.
    #[error("{0}")]
    OperationFailed(String),
}

impl LiteralError {
    /// Whether sending the same statement again could succeed: never.
    pub fn is_retryable(&self) -> bool {
        false
    }
}
