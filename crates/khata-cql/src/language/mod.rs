//! The CQL language: lexer and parser (being written).
