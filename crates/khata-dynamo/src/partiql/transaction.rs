//! ExecuteTransaction (filled in by a later step).

use serde_json::Value;

use crate::error::{DynamoError, Result};
use crate::ops::input::Object;
use crate::ops::{Operations, RequestInfo};

/// ExecuteTransaction.
pub async fn execute_transaction(
    _ops: &Operations,
    _body: &Object,
    _info: &RequestInfo,
) -> Result<Value> {
    Err(DynamoError::not_supported("operation ExecuteTransaction"))
}
