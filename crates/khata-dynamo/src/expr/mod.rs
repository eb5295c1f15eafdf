//! Expressions (to come).
