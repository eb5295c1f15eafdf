//! BatchExecuteStatement (filled in by the next step).

use serde_json::Value;

use crate::error::{DynamoError, Result};
use crate::ops::input::Object;
use crate::ops::{Operations, RequestInfo};

/// BatchExecuteStatement.
pub async fn batch_execute_statement(
    _ops: &Operations,
    _body: &Object,
    _info: &RequestInfo,
) -> Result<Value> {
    Err(DynamoError::not_supported(
        "operation BatchExecuteStatement",
    ))
}
