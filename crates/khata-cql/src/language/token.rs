//! Tokens: what the lexer produces and the parser consumes.
//!
//! Every token carries its [`Position`] (line and column, as Cassandra's error messages count
//! them) and its byte span in the statement text, so errors can point at it and quote it.

use std::fmt;
use std::ops::Range;

use super::keyword::Keyword;

/// Where a token starts. Lines count from 1 and columns from 0, in characters, as ANTLR (and so
/// Cassandra's `SyntaxException` messages, `line 1:7 ...`) counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    /// Line, from 1.
    pub line: u32,
    /// Column within the line, from 0, in characters.
    pub column: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What a token is, with its decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An unquoted word: an identifier or a keyword. `text` is lower-cased (CQL folds unquoted
    /// names); `keyword` is set when the word is one of CQL's keywords.
    Word {
        /// The word, lower-cased.
        text: String,
        /// The keyword it spells, if any.
        keyword: Option<Keyword>,
    },
    /// A double-quoted name, with `""` unescaped and case kept.
    QuotedName(String),
    /// A string literal (`'...'` with `''` unescaped, or `$$...$$`).
    String(String),
    /// An unsigned integer literal, as written.
    Integer(String),
    /// An unsigned floating-point literal, as written (`1.5`, `2e10`, `3.`).
    Float(String),
    /// A `true` or `false` literal.
    Boolean(bool),
    /// An unsigned duration literal, as written (`1h30m`, `P1DT2H`, `P0001-02-03T04:05:06`).
    Duration(String),
    /// A UUID literal.
    Uuid(uuid::Uuid),
    /// A blob literal `0x...`: the hex digits after `0x`, as written.
    Hex(String),
    /// `?`
    QuestionMark,
    /// `:`
    Colon,
    /// `;`
    Semicolon,
    /// `,`
    Comma,
    /// `.`
    Dot,
    /// `..`
    Range,
    /// `(`
    LeftParen,
    /// `)`
    RightParen,
    /// `[`
    LeftBracket,
    /// `]`
    RightBracket,
    /// `{`
    LeftBrace,
    /// `}`
    RightBrace,
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `<`
    Less,
    /// `<=`
    LessEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterEqual,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `+=`
    PlusEqual,
    /// `-=`
    MinusEqual,
    /// The end of the input.
    Eof,
}

impl TokenKind {
    /// The keyword this token spells, if it is an unquoted keyword.
    pub fn keyword(&self) -> Option<Keyword> {
        match self {
            TokenKind::Word { keyword, .. } => *keyword,
            _ => None,
        }
    }

    /// The text of a punctuation token, if it is one.
    pub fn punctuation(&self) -> Option<&'static str> {
        Some(match self {
            TokenKind::QuestionMark => "?",
            TokenKind::Colon => ":",
            TokenKind::Semicolon => ";",
            TokenKind::Comma => ",",
            TokenKind::Dot => ".",
            TokenKind::Range => "..",
            TokenKind::LeftParen => "(",
            TokenKind::RightParen => ")",
            TokenKind::LeftBracket => "[",
            TokenKind::RightBracket => "]",
            TokenKind::LeftBrace => "{",
            TokenKind::RightBrace => "}",
            TokenKind::Equal => "=",
            TokenKind::NotEqual => "!=",
            TokenKind::Less => "<",
            TokenKind::LessEqual => "<=",
            TokenKind::Greater => ">",
            TokenKind::GreaterEqual => ">=",
            TokenKind::Plus => "+",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::Percent => "%",
            TokenKind::PlusEqual => "+=",
            TokenKind::MinusEqual => "-=",
            _ => return None,
        })
    }
}

/// One token of a statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Where it starts.
    pub position: Position,
    /// Its bytes in the input.
    pub span: Range<usize>,
}
