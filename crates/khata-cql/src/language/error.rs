//! The language's error: a statement that does not parse.
//!
//! Every error names the line and column of the offending input and is formatted the way
//! Cassandra's `SyntaxException` messages read, so that cqlsh users see what they are used to:
//!
//! ```text
//! line 1:9 no viable alternative at input 'FROM' (SELECT * [FROM]...)
//! line 1:14 mismatched input ';' expecting ')' (...(a, b [;])
//! ```
//!
//! The part in parentheses quotes the statement around the offending token, which is shown in
//! brackets. Cassandra sends both kinds to the client as a `SyntaxError` (code 0x2000), and so
//! the checks its parser makes as it goes (`addRecognitionError`), whose message is the text
//! alone ([`ParseErrorKind::Recognition`]); the [`ParseErrorKind::Invalid`] and
//! [`ParseErrorKind::Unsupported`] kinds are statements the grammar accepts but khata refuses,
//! which a front end reports as `Invalid` (0x2200).

use std::fmt;

use super::token::Position;

/// Why a statement did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A token other than the one the grammar needs here (`mismatched input 'X' expecting Y`).
    MismatchedInput,
    /// No rule of the grammar starts with this token (`no viable alternative at input 'X'`).
    NoViableAlternative,
    /// A character that starts no token (`no viable alternative at character 'X'`).
    InvalidCharacter,
    /// A string, quoted name or comment that is not closed before the end of the input.
    UnterminatedLiteral,
    /// A reserved keyword where a name is expected; quoting it makes it a name.
    ReservedKeyword,
    /// Nesting deeper than [`MAX_NESTING_DEPTH`](super::MAX_NESTING_DEPTH).
    TooDeep,
    /// Refused by a check of Cassandra's parser (`addRecognitionError`): a syntax error whose
    /// message is the check's text alone (`Multiple definition for property 'a'`, `SET a = b +
    /// 1`, a bind marker for a keyspace name).
    Recognition,
    /// Well-formed but refused while parsing, where Cassandra refuses it with an
    /// `InvalidRequest` when it prepares the statement (for example a missing PRIMARY KEY, or a
    /// number out of range).
    Invalid,
    /// A statement khata does not implement (roles, permissions, functions, views, triggers,
    /// `COMPACT STORAGE`).
    Unsupported,
}

/// A statement that does not parse, with where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The kind of failure.
    pub kind: ParseErrorKind,
    /// Where the offending token starts.
    pub position: Position,
    /// The offending token as written, or `<EOF>`.
    pub offending: String,
    /// What the grammar would have accepted there, as token names (`K_FROM`, `')'`, `IDENT`);
    /// empty when no single expectation can be named.
    pub expected: Vec<String>,
    /// The message after `line L:C ` (`mismatched input ';' expecting ')'`).
    pub message: String,
    /// The statement around the offending token, which is in brackets; may be empty.
    pub snippet: String,
}

impl ParseError {
    /// Whether a CQL front end reports this as a `SyntaxError` (rather than `Invalid`).
    pub fn is_syntax_error(&self) -> bool {
        !matches!(
            self.kind,
            ParseErrorKind::Invalid | ParseErrorKind::Unsupported
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ParseErrorKind::Recognition {
            return f.write_str(&self.message);
        }
        write!(f, "line {} {}", self.position, self.message)?;
        if !self.snippet.is_empty() {
            write!(f, " ({})", self.snippet)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}
