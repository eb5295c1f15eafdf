//! The recursive-descent parser: tokens to [`Statement`]s.
//!
//! One method per rule of apache/cassandra `src/antlr/Parser.g`, in files by statement
//! family. The parser works on the whole token vector, so where the grammar needs more than
//! one token of lookahead (is `json` the `SELECT JSON` flag or a column? is `(a, b)` a tuple
//! of columns or a parenthesised relation?) it looks ahead or backtracks to a checkpoint,
//! as ANTLR's syntactic predicates do.
//!
//! Limits: nesting (of terms, selectors, types, relations) is bounded by
//! [`MAX_NESTING_DEPTH`], so no input can exhaust the stack; the parser never panics.

mod ddl;
mod describe;
mod modify;
mod names;
mod properties;
mod select;
mod term;
mod types;

use super::MAX_NESTING_DEPTH;
use super::ast::{BindMarker, Name, ParsedStatement, Statement};
use super::error::{ParseError, ParseErrorKind};
use super::keyword::Keyword;
use super::lexer::tokenize;
use super::token::{Position, Token, TokenKind};

type Result<T> = std::result::Result<T, ParseError>;

/// Tokens shown before the offending one in an error's snippet (as Cassandra's
/// `ErrorCollector` does).
const SNIPPET_TOKENS_BEFORE: usize = 10;
/// Tokens shown after it.
const SNIPPET_TOKENS_AFTER: usize = 2;

/// Parses `text` as one statement, optionally ended by `;`.
pub fn parse_statement(text: &str) -> Result<ParsedStatement> {
    let mut parser = Parser::new(text)?;
    let statement = parser.statement_with_source()?;
    parser.eat(&TokenKind::Semicolon);
    if !parser.at(&TokenKind::Eof) {
        return Err(parser.mismatched(&["EOF"]));
    }
    Ok(statement)
}

/// Parses `text` as statements separated (and optionally ended) by `;`, as cqlsh reads a
/// file. Empty statements (`;;`) are skipped.
pub fn parse_statements(text: &str) -> Result<Vec<ParsedStatement>> {
    let mut parser = Parser::new(text)?;
    let mut statements = Vec::new();
    loop {
        while parser.eat(&TokenKind::Semicolon) {}
        if parser.at(&TokenKind::Eof) {
            return Ok(statements);
        }
        statements.push(parser.statement_with_source()?);
        if !parser.eat(&TokenKind::Semicolon) && !parser.at(&TokenKind::Eof) {
            return Err(parser.mismatched(&["';'", "EOF"]));
        }
    }
}

/// A saved parser state to backtrack to.
#[derive(Clone, Copy)]
struct Checkpoint {
    pos: usize,
    markers: usize,
}

pub(crate) struct Parser<'a> {
    text: &'a str,
    /// The tokens; the last is always `Eof`.
    tokens: Vec<Token>,
    pos: usize,
    /// The bind markers seen so far in the current statement.
    markers: Vec<Option<Name>>,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        let tokens = tokenize(text).map_err(|mut e| {
            e.snippet = lexer_snippet(text, e.position);
            e
        })?;
        Ok(Parser {
            text,
            tokens,
            pos: 0,
            markers: Vec::new(),
            depth: 0,
        })
    }

    fn statement_with_source(&mut self) -> Result<ParsedStatement> {
        self.markers.clear();
        let start = self.peek().span.start;
        let statement = self.statement()?;
        let end = self.tokens[self.pos.saturating_sub(1)].span.end.max(start);
        Ok(ParsedStatement {
            statement,
            bind_markers: std::mem::take(&mut self.markers),
            source: start..end,
        })
    }

    /// `cqlStatement`: dispatch on the first keyword(s).
    fn statement(&mut self) -> Result<Statement> {
        let Some(keyword) = self.peek().kind.keyword() else {
            return Err(self.no_viable());
        };
        match keyword {
            Keyword::Select => Ok(Statement::Select(Box::new(self.select()?))),
            Keyword::Insert => Ok(Statement::Insert(Box::new(self.insert()?))),
            Keyword::Update => Ok(Statement::Update(Box::new(self.update()?))),
            Keyword::Delete => Ok(Statement::Delete(Box::new(self.delete()?))),
            Keyword::Begin => Ok(Statement::Batch(Box::new(self.batch()?))),
            Keyword::Use => {
                self.advance();
                Ok(Statement::Use(self.keyspace_name()?))
            }
            Keyword::Truncate => self.truncate(),
            Keyword::Create => self.create(),
            Keyword::Alter => self.alter(),
            Keyword::Drop => self.drop(),
            Keyword::Describe | Keyword::Desc => self.describe(),
            Keyword::Grant | Keyword::Revoke | Keyword::List | Keyword::Add => {
                Err(self.unsupported_statement(2))
            }
            _ => Err(self.no_viable()),
        }
    }

    // ---- the token cursor ----

    fn peek(&self) -> &Token {
        &self.tokens[self.pos]
    }

    /// The token `n` places ahead (the `Eof` token past the end).
    fn peek_nth(&self, n: usize) -> &TokenKind {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)].kind
    }

    fn advance(&mut self) -> &Token {
        let token = self.pos;
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        &self.tokens[token]
    }

    fn at(&self, kind: &TokenKind) -> bool {
        &self.peek().kind == kind
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.at(kind) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, kind: TokenKind) -> Result<()> {
        if self.eat(&kind) {
            return Ok(());
        }
        let name = format!("'{}'", kind.punctuation().unwrap_or("?"));
        Err(self.mismatched(&[&name]))
    }

    fn at_keyword(&self, keyword: Keyword) -> bool {
        self.peek().kind.keyword() == Some(keyword)
    }

    fn nth_is_keyword(&self, n: usize, keyword: Keyword) -> bool {
        self.peek_nth(n).keyword() == Some(keyword)
    }

    fn eat_keyword(&mut self, keyword: Keyword) -> bool {
        if self.at_keyword(keyword) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, keyword: Keyword) -> Result<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.mismatched(&[keyword.token_name()]))
        }
    }

    /// `IF NOT EXISTS`, if next.
    fn if_not_exists(&mut self) -> Result<bool> {
        if !self.at_keyword(Keyword::If) {
            return Ok(false);
        }
        self.advance();
        self.expect_keyword(Keyword::Not)?;
        self.expect_keyword(Keyword::Exists)?;
        Ok(true)
    }

    /// `IF EXISTS`, if next.
    fn if_exists(&mut self) -> Result<bool> {
        if !self.at_keyword(Keyword::If) {
            return Ok(false);
        }
        self.advance();
        self.expect_keyword(Keyword::Exists)?;
        Ok(true)
    }

    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            pos: self.pos,
            markers: self.markers.len(),
        }
    }

    fn restore(&mut self, checkpoint: Checkpoint) {
        self.pos = checkpoint.pos;
        self.markers.truncate(checkpoint.markers);
    }

    /// One more operator of a left-nested chain (`a + b + c ...`): each makes the tree one
    /// level deeper, so a chain counts against [`MAX_NESTING_DEPTH`] like nesting does (a flat
    /// chain of thousands of operators would otherwise overflow the stack when the tree is
    /// walked or dropped). The caller restores `depth` when the chain ends.
    fn chain_operator(&mut self) -> Result<()> {
        if self.depth >= MAX_NESTING_DEPTH {
            let mut error = self.error_here(
                ParseErrorKind::TooDeep,
                format!("statement nested more than {MAX_NESTING_DEPTH} levels deep"),
            );
            error.expected.clear();
            return Err(error);
        }
        self.depth += 1;
        Ok(())
    }

    /// Runs `f` one nesting level deeper, refusing to go past [`MAX_NESTING_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING_DEPTH {
            let mut error = self.error_here(
                ParseErrorKind::TooDeep,
                format!("statement nested more than {MAX_NESTING_DEPTH} levels deep"),
            );
            error.expected.clear();
            return Err(error);
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Registers a bind marker and returns it.
    fn new_marker(&mut self, name: Option<Name>) -> BindMarker {
        let index = self.markers.len();
        self.markers.push(name.clone());
        BindMarker { index, name }
    }

    // ---- errors ----

    fn offending(&self, index: usize) -> String {
        let token = &self.tokens[index];
        match token.kind {
            TokenKind::Eof => "<EOF>".to_string(),
            _ => self.text[token.span.clone()].to_string(),
        }
    }

    /// The statement around token `index`, that token in brackets.
    fn snippet(&self, index: usize) -> String {
        let last = self.tokens.len() - 1;
        let first = index.saturating_sub(SNIPPET_TOKENS_BEFORE);
        let end = (index + SNIPPET_TOKENS_AFTER).min(last);
        let token = &self.tokens[index];
        let mut snippet = String::new();
        if first > 0 {
            snippet.push_str("...");
        }
        snippet.push_str(&self.text[self.tokens[first].span.start..token.span.start]);
        snippet.push('[');
        snippet.push_str(&self.text[token.span.clone()]);
        snippet.push(']');
        let end_offset = self.tokens[end].span.end.max(token.span.end);
        snippet.push_str(&self.text[token.span.end..end_offset]);
        if end < last && self.tokens[end + 1].kind != TokenKind::Eof {
            snippet.push_str("...");
        }
        snippet
    }

    fn error_at(&self, index: usize, kind: ParseErrorKind, message: String) -> ParseError {
        ParseError {
            kind,
            position: self.tokens[index].position,
            offending: self.offending(index),
            expected: Vec::new(),
            message,
            snippet: self.snippet(index),
        }
    }

    fn error_here(&self, kind: ParseErrorKind, message: String) -> ParseError {
        self.error_at(self.pos, kind, message)
    }

    /// `mismatched input 'X' expecting Y`, or a clearer word for a reserved keyword where a
    /// name was expected.
    fn mismatched(&self, expected: &[&str]) -> ParseError {
        let offending = self.offending(self.pos);
        let list = expected.join(", ");
        let mut error = self.error_here(
            ParseErrorKind::MismatchedInput,
            format!("mismatched input '{offending}' expecting {list}"),
        );
        error.expected = expected.iter().map(|s| s.to_string()).collect();
        error
    }

    /// `no viable alternative at input 'X'`
    fn no_viable(&self) -> ParseError {
        let offending = self.offending(self.pos);
        self.error_here(
            ParseErrorKind::NoViableAlternative,
            format!("no viable alternative at input '{offending}'"),
        )
    }

    /// A refusal of something the grammar accepts, pointing at token `index`.
    fn invalid_at(&self, index: usize, message: String) -> ParseError {
        self.error_at(index, ParseErrorKind::Invalid, message)
    }

    /// A check of Cassandra's parser failing at token `index` (its `addRecognitionError`).
    fn recognition_at(&self, index: usize, message: String) -> ParseError {
        self.error_at(index, ParseErrorKind::Recognition, message)
    }

    /// A statement khata does not implement, named by its first `words` words.
    fn unsupported_statement(&self, words: usize) -> ParseError {
        let end = (self.pos + words).min(self.tokens.len() - 1);
        let name: Vec<String> = (self.pos..end)
            .filter(|&i| self.tokens[i].kind != TokenKind::Eof)
            .map(|i| self.offending(i).to_uppercase())
            .collect();
        self.error_here(
            ParseErrorKind::Unsupported,
            format!("{} statements are not supported by khata", name.join(" ")),
        )
    }
}

/// The snippet for a lexer error: the line up to the offending character, bracketed.
fn lexer_snippet(text: &str, position: Position) -> String {
    let Some(line) = text.split('\n').nth(position.line as usize - 1) else {
        return String::new();
    };
    let column = position.column as usize;
    let before: String = line.chars().take(column).collect();
    let mut rest = line.chars().skip(column);
    match rest.next() {
        Some(c) => {
            let after: String = rest.take(20).collect();
            format!("{before}[{c}]{after}")
        }
        None => format!("{before}[]"),
    }
}
