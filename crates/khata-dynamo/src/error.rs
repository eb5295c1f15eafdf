//! DynamoDB's errors: one enum, and the one place that maps each to its wire shape.
//!
//! DynamoDB answers an error with an HTTP status and a JSON body
//! `{"__type": "<namespace>#<Name>", "message": "..."}`. The namespace depends on the part of
//! the service that refused: request validation is `com.amazon.coral.validate`, the HTTP and
//! authentication layer `com.amazon.coral.service`, throttling `com.amazon.coral.availability`,
//! and DynamoDB's own errors `com.amazonaws.dynamodb.v20120810`. The SDKs keep only what
//! follows `#`, and read the text from either `message` or `Message`; DynamoDB itself writes
//! `Message` for its serialization (type) errors and `message` for the rest, and so do we.
//!
//! Status codes: 400 for everything the client can fix or retry (throttling included), 413
//! for a request body over the size limit, 500 for `InternalServerError`, 503 for
//! `ServiceUnavailable`.

use std::fmt;

/// What went wrong, by DynamoDB's exception name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A parameter is missing, malformed or inconsistent.
    Validation,
    /// The body is not JSON, or a member has the wrong JSON type.
    Serialization,
    /// `X-Amz-Target` names no operation we know.
    UnknownOperation,
    /// SigV4: the access key id is not one we know.
    UnrecognizedClient,
    /// SigV4: the signature does not match.
    InvalidSignature,
    /// SigV4: the `Authorization` header lacks a part.
    IncompleteSignature,
    /// SigV4: no `Authorization` header while keys are configured.
    MissingAuthenticationToken,
    /// The table (or index, or stream) does not exist.
    ResourceNotFound,
    /// The table exists already, or is busy.
    ResourceInUse,
    /// Too many tables, indexes or concurrent control-plane operations.
    LimitExceeded,
    /// A conditional write's condition was false.
    ConditionalCheckFailed,
    /// The request body is larger than the endpoint accepts.
    RequestEntityTooLarge,
    /// The node failed; the request may be retried.
    InternalServerError,
    /// The node cannot serve now (shutting down, replicas unavailable); retry later.
    ServiceUnavailable,
    /// A transaction was cancelled: the body lists one reason per action.
    TransactionCanceled,
    /// A `ClientRequestToken` was used again within 10 minutes for a different request.
    IdempotentParameterMismatch,
    /// A transaction with the same `ClientRequestToken` is still running.
    TransactionInProgress,
    /// Streams: a shard iterator older than 15 minutes.
    ExpiredIterator,
    /// Streams: a position past the 24-hour retention.
    TrimmedDataAccess,
    /// A write would grow an item collection of a table with LSIs past 10 GB.
    ItemCollectionSizeLimitExceeded,
    /// A PartiQL INSERT names an item that exists.
    DuplicateItem,
    /// The continuous-backup operations' missing table (others say `ResourceNotFound`).
    TableNotFound,
}

impl ErrorKind {
    /// The exception name, as SDKs show it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationException",
            ErrorKind::Serialization => "SerializationException",
            ErrorKind::UnknownOperation => "UnknownOperationException",
            ErrorKind::UnrecognizedClient => "UnrecognizedClientException",
            ErrorKind::InvalidSignature => "InvalidSignatureException",
            ErrorKind::IncompleteSignature => "IncompleteSignatureException",
            ErrorKind::MissingAuthenticationToken => "MissingAuthenticationTokenException",
            ErrorKind::ResourceNotFound => "ResourceNotFoundException",
            ErrorKind::ResourceInUse => "ResourceInUseException",
            ErrorKind::LimitExceeded => "LimitExceededException",
            ErrorKind::ConditionalCheckFailed => "ConditionalCheckFailedException",
            ErrorKind::RequestEntityTooLarge => "RequestEntityTooLarge",
            ErrorKind::InternalServerError => "InternalServerError",
            ErrorKind::ServiceUnavailable => "ServiceUnavailableException",
            ErrorKind::TransactionCanceled => "TransactionCanceledException",
            ErrorKind::IdempotentParameterMismatch => "IdempotentParameterMismatchException",
            ErrorKind::TransactionInProgress => "TransactionInProgressException",
            ErrorKind::ExpiredIterator => "ExpiredIteratorException",
            ErrorKind::TrimmedDataAccess => "TrimmedDataAccessException",
            ErrorKind::ItemCollectionSizeLimitExceeded => {
                "ItemCollectionSizeLimitExceededException"
            }
            ErrorKind::DuplicateItem => "DuplicateItemException",
            ErrorKind::TableNotFound => "TableNotFoundException",
        }
    }

    /// The namespace before `#` in `__type`.
    fn namespace(self) -> &'static str {
        match self {
            ErrorKind::Validation => "com.amazon.coral.validate",
            ErrorKind::Serialization
            | ErrorKind::UnknownOperation
            | ErrorKind::UnrecognizedClient
            | ErrorKind::InvalidSignature
            | ErrorKind::IncompleteSignature
            | ErrorKind::MissingAuthenticationToken
            | ErrorKind::RequestEntityTooLarge => "com.amazon.coral.service",
            ErrorKind::ServiceUnavailable => "com.amazon.coral.availability",
            ErrorKind::ResourceNotFound
            | ErrorKind::ResourceInUse
            | ErrorKind::LimitExceeded
            | ErrorKind::ConditionalCheckFailed
            | ErrorKind::InternalServerError
            | ErrorKind::TransactionCanceled
            | ErrorKind::IdempotentParameterMismatch
            | ErrorKind::TransactionInProgress
            | ErrorKind::ExpiredIterator
            | ErrorKind::TrimmedDataAccess
            | ErrorKind::ItemCollectionSizeLimitExceeded
            | ErrorKind::DuplicateItem
            | ErrorKind::TableNotFound => "com.amazonaws.dynamodb.v20120810",
        }
    }

    /// The full `__type`.
    pub fn type_name(self) -> String {
        format!("{}#{}", self.namespace(), self.name())
    }

    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            ErrorKind::RequestEntityTooLarge => 413,
            ErrorKind::InternalServerError => 500,
            ErrorKind::ServiceUnavailable => 503,
            _ => 400,
        }
    }

    /// The body member holding the text: DynamoDB capitalizes it for serialization errors.
    pub fn message_member(self) -> &'static str {
        match self {
            ErrorKind::Serialization | ErrorKind::TransactionCanceled => "Message",
            _ => "message",
        }
    }

    /// Whether the same request may succeed later (DynamoDB's "OK to retry?").
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::InternalServerError | ErrorKind::ServiceUnavailable
        )
    }
}

/// An error answered to a DynamoDB client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamoError {
    pub kind: ErrorKind,
    /// The text; `None` answers the type alone, as DynamoDB does for an unknown operation.
    pub message: Option<String>,
    /// The item a failed condition saw (`ReturnValuesOnConditionCheckFailure: ALL_OLD`).
    pub item: Option<Box<serde_json::Value>>,
    /// A cancelled transaction's `CancellationReasons` (one per action, in order).
    pub reasons: Option<Box<serde_json::Value>>,
}

impl DynamoError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        DynamoError {
            kind,
            message: Some(message.into()),
            item: None,
            reasons: None,
        }
    }

    /// An error with no text.
    pub fn bare(kind: ErrorKind) -> Self {
        DynamoError {
            kind,
            message: None,
            item: None,
            reasons: None,
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        DynamoError::new(ErrorKind::Validation, message)
    }

    pub fn serialization(message: impl Into<String>) -> Self {
        DynamoError::new(ErrorKind::Serialization, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        DynamoError::new(ErrorKind::InternalServerError, message)
    }

    /// `ResourceNotFoundException` for a table, in DynamoDB's words.
    pub fn table_not_found(name: &str) -> Self {
        DynamoError::new(
            ErrorKind::ResourceNotFound,
            format!("Requested resource not found: Table: {name} not found"),
        )
    }

    /// `ValidationException` for an operation khata does not implement yet.
    pub fn not_supported(what: &str) -> Self {
        DynamoError::validation(format!("{what} is not supported by khata yet"))
    }

    /// The JSON body of the answer.
    pub fn body(&self) -> serde_json::Value {
        let mut body = serde_json::Map::new();
        body.insert(
            "__type".into(),
            serde_json::Value::String(self.kind.type_name()),
        );
        if let Some(message) = &self.message {
            body.insert(
                self.kind.message_member().into(),
                serde_json::Value::String(message.clone()),
            );
        }
        if let Some(item) = &self.item {
            body.insert("Item".into(), (**item).clone());
        }
        if let Some(reasons) = &self.reasons {
            body.insert("CancellationReasons".into(), (**reasons).clone());
        }
        serde_json::Value::Object(body)
    }
}

impl fmt::Display for DynamoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{}: {m}", self.kind.name()),
            None => f.write_str(self.kind.name()),
        }
    }
}

impl std::error::Error for DynamoError {}

impl From<khata_coordinator::CoordinatorError> for DynamoError {
    /// The coordinator's failures: unavailability and timeouts are DynamoDB's
    /// `ServiceUnavailable` / `InternalServerError` (both retryable); anything else is the
    /// node's fault.
    fn from(e: khata_coordinator::CoordinatorError) -> Self {
        use khata_coordinator::CoordinatorError as C;
        match e {
            C::Unavailable { .. } => DynamoError::new(ErrorKind::ServiceUnavailable, e.to_string()),
            other => DynamoError::internal(other.to_string()),
        }
    }
}

/// `Result` with a [`DynamoError`].
pub type Result<T, E = DynamoError> = std::result::Result<T, E>;

impl From<crate::item_ops::OpError> for DynamoError {
    fn from(e: crate::item_ops::OpError) -> Self {
        use crate::item_ops::OpError;
        match e {
            OpError::Validation(m) => DynamoError::validation(m),
            OpError::Serialization(m) => DynamoError::serialization(m),
            OpError::ConditionalCheckFailed(item) => DynamoError {
                kind: ErrorKind::ConditionalCheckFailed,
                message: Some("The conditional request failed".into()),
                item: item
                    .filter(|i| !i.is_empty())
                    .map(|i| Box::new(i.to_json())),
                reasons: None,
            },
            OpError::CollectionSizeExceeded => DynamoError::new(
                ErrorKind::ItemCollectionSizeLimitExceeded,
                crate::collections::LIMIT_MESSAGE,
            ),
            OpError::Coordinator(e) => e.into(),
            OpError::Internal(m) => DynamoError::internal(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_dynamodb() {
        let e = DynamoError::table_not_found("t");
        assert_eq!(
            e.body().to_string(),
            r#"{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found: Table: t not found"}"#
        );
        assert_eq!(e.kind.status(), 400);
        let v = DynamoError::validation("x");
        assert_eq!(
            v.body()["__type"],
            "com.amazon.coral.validate#ValidationException"
        );
        let s = DynamoError::serialization("bad");
        assert_eq!(s.body()["Message"], "bad");
        let u = DynamoError::bare(ErrorKind::UnknownOperation);
        assert_eq!(
            u.body().to_string(),
            r#"{"__type":"com.amazon.coral.service#UnknownOperationException"}"#
        );
        assert_eq!(ErrorKind::InternalServerError.status(), 500);
        assert_eq!(ErrorKind::RequestEntityTooLarge.status(), 413);
        assert!(ErrorKind::InternalServerError.retryable());
        assert!(!ErrorKind::Validation.retryable());
    }
}
