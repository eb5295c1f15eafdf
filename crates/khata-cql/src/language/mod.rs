//! The CQL language: a hand-written lexer and recursive-descent parser producing a typed
//! syntax tree.
//!
//! The grammar is Cassandra 4/5's (apache/cassandra `src/antlr/Lexer.g` and `Parser.g`), so
//! that every statement cqlsh and the drivers send parses as Cassandra parses it; the code is
//! written here, not generated, because CQL's many unreserved keywords (`key`, `type`, `ttl`,
//! `values`, `json` are all column names) are easiest to get right, and errors clearest, by
//! hand (DESIGN.md §9).
//!
//! - [`parse_statement`] parses one statement (a trailing `;` is allowed);
//!   [`parse_statements`] parses cqlsh-style input of statements separated by `;`.
//! - [`ast`] is the tree; each node's `Display` is canonical CQL that parses back to the same
//!   tree.
//! - [`ParseError`] carries the line, column, offending token and expected tokens, and formats
//!   like Cassandra's `SyntaxException` (`line 1:9 no viable alternative at input 'FROM'`).
//!
//! What this layer does not do: resolve names against the schema, type-check values, or
//! validate restrictions (which columns a `WHERE` may restrict, and how). Statements khata does
//! not implement (roles, permissions, user functions and aggregates, materialized views,
//! triggers, `COMPACT STORAGE`) are refused with [`ParseErrorKind::Unsupported`].
//!
//! Nothing here panics on any input: the lexer and parser are fuzzed
//! (`tests/language_fuzz.rs`), and nesting is bounded by [`MAX_NESTING_DEPTH`].

pub mod ast;
mod display;
mod error;
mod keyword;
mod lexer;
mod parser;
mod token;

pub use ast::{ParsedStatement, Statement};
pub use error::{ParseError, ParseErrorKind};
pub use keyword::{Keyword, KeywordClass};
pub use lexer::tokenize;
pub use parser::{parse_statement, parse_statements};
pub use token::{Position, Token, TokenKind};

/// The deepest nesting of terms, selectors, types and relations a statement may have.
/// Deeper input is refused with [`ParseErrorKind::TooDeep`], so no input can exhaust the
/// parser's stack.
pub const MAX_NESTING_DEPTH: usize = 100;
