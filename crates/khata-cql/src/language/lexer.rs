//! The CQL lexer: statement text to [`Token`]s.
//!
//! Follows apache/cassandra `src/antlr/Lexer.g`: unquoted words are case-insensitive and folded
//! to lower case, `"quoted names"` keep their case (`""` is a quote), strings are `'...'` (`''`
//! is a quote) or `$$...$$`, numbers, `0x` blobs, UUIDs, booleans, durations (`1h30m`,
//! `P1DT2H`, `P0001-02-03T04:05:06`), markers, operators and punctuation; whitespace and
//! comments (`--` and `//` to the end of the line, `/* ... */`) are skipped.
//!
//! A `-` right before a duration is part of its token, as in Cassandra's `DURATION` rule, so
//! `1y-2mo` is two durations (a syntax error) and `-1h` one literal.
//!
//! One deliberate difference: Cassandra's lexer also folds a leading `-` into integer and float
//! literals (`-1`), which makes `x-1` two integers. Here `-` before a number is its own token
//! and the parser folds `-` followed by a literal into a negative literal, so `c = c - 1` and
//! `c = c -1` both parse as a subtraction.
//!
//! The lexer never panics: any byte sequence yields tokens or a positioned error.

use super::error::{ParseError, ParseErrorKind};
use super::keyword::Keyword;
use super::token::{Position, Token, TokenKind};

/// Splits `text` into tokens, ending with [`TokenKind::Eof`].
pub fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer {
        text,
        offset: 0,
        position: Position { line: 1, column: 0 },
        tokens: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    text: &'a str,
    offset: usize,
    position: Position,
    tokens: Vec<Token>,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.offset..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.text[self.offset..].chars().nth(n)
    }

    fn rest(&self) -> &str {
        &self.text[self.offset..]
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.offset += c.len_utf8();
        if c == '\n' {
            self.position.line += 1;
            self.position.column = 0;
        } else {
            self.position.column += 1;
        }
        Some(c)
    }

    /// Advances over `n` ASCII bytes (callers have checked they are ASCII and not newlines).
    fn bump_ascii(&mut self, n: usize) {
        self.offset += n;
        self.position.column += n as u32;
    }

    fn error(&self, kind: ParseErrorKind, position: Position, offending: String) -> ParseError {
        let message = match kind {
            ParseErrorKind::UnterminatedLiteral => {
                format!("mismatched character '<EOF>' expecting {offending}")
            }
            _ => format!("no viable alternative at character '{offending}'"),
        };
        ParseError {
            kind,
            position,
            offending,
            expected: Vec::new(),
            message,
            snippet: String::new(),
        }
    }

    fn run(&mut self) -> Result<(), ParseError> {
        loop {
            self.skip_blanks()?;
            let start = self.offset;
            let position = self.position;
            let Some(c) = self.peek() else {
                self.tokens.push(Token {
                    kind: TokenKind::Eof,
                    position,
                    span: start..start,
                });
                return Ok(());
            };
            let kind = self.token(c, position)?;
            self.tokens.push(Token {
                kind,
                position,
                span: start..self.offset,
            });
        }
    }

    fn skip_blanks(&mut self) -> Result<(), ParseError> {
        loop {
            let rest = self.rest();
            if rest.starts_with("--") || rest.starts_with("//") {
                while let Some(c) = self.peek() {
                    if c == '\n' || c == '\r' {
                        break;
                    }
                    self.bump();
                }
            } else if rest.starts_with("/*") {
                let position = self.position;
                self.bump_ascii(2);
                loop {
                    if self.rest().starts_with("*/") {
                        self.bump_ascii(2);
                        break;
                    }
                    if self.bump().is_none() {
                        return Err(self.error(
                            ParseErrorKind::UnterminatedLiteral,
                            position,
                            "'*/'".to_string(),
                        ));
                    }
                }
            } else if matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
                self.bump();
            } else {
                return Ok(());
            }
        }
    }

    fn token(&mut self, c: char, position: Position) -> Result<TokenKind, ParseError> {
        if let Some(uuid) = self.uuid() {
            return Ok(uuid);
        }
        match c {
            '\'' => self.quoted_string(position),
            '$' if self.peek_at(1) == Some('$') => self.dollar_string(position),
            '"' => self.quoted_name(position),
            '0'..='9' => Ok(self.number()),
            'P' => Ok(self.iso_duration().unwrap_or_else(|| self.word())),
            'a'..='z' | 'A'..='Z' => Ok(self.word()),
            '-' => match self.negative_duration() {
                Some(duration) => Ok(duration),
                None => self.punctuation(c, position),
            },
            _ => self.punctuation(c, position),
        }
    }

    fn punctuation(&mut self, c: char, position: Position) -> Result<TokenKind, ParseError> {
        let next = self.peek_at(1);
        let (kind, len) = match (c, next) {
            ('.', Some('.')) => (TokenKind::Range, 2),
            ('!', Some('=')) => (TokenKind::NotEqual, 2),
            ('<', Some('=')) => (TokenKind::LessEqual, 2),
            ('>', Some('=')) => (TokenKind::GreaterEqual, 2),
            ('+', Some('=')) => (TokenKind::PlusEqual, 2),
            ('-', Some('=')) => (TokenKind::MinusEqual, 2),
            ('?', _) => (TokenKind::QuestionMark, 1),
            (':', _) => (TokenKind::Colon, 1),
            (';', _) => (TokenKind::Semicolon, 1),
            (',', _) => (TokenKind::Comma, 1),
            ('.', _) => (TokenKind::Dot, 1),
            ('(', _) => (TokenKind::LeftParen, 1),
            (')', _) => (TokenKind::RightParen, 1),
            ('[', _) => (TokenKind::LeftBracket, 1),
            (']', _) => (TokenKind::RightBracket, 1),
            ('{', _) => (TokenKind::LeftBrace, 1),
            ('}', _) => (TokenKind::RightBrace, 1),
            ('=', _) => (TokenKind::Equal, 1),
            ('<', _) => (TokenKind::Less, 1),
            ('>', _) => (TokenKind::Greater, 1),
            ('+', _) => (TokenKind::Plus, 1),
            ('-', _) => (TokenKind::Minus, 1),
            ('*', _) => (TokenKind::Star, 1),
            ('/', _) => (TokenKind::Slash, 1),
            ('%', _) => (TokenKind::Percent, 1),
            _ => {
                return Err(self.error(ParseErrorKind::InvalidCharacter, position, c.to_string()));
            }
        };
        self.bump_ascii(len);
        Ok(kind)
    }

    /// `'...'` with `''` standing for one quote.
    fn quoted_string(&mut self, position: Position) -> Result<TokenKind, ParseError> {
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('\'') if self.peek() == Some('\'') => {
                    self.bump();
                    value.push('\'');
                }
                Some('\'') => return Ok(TokenKind::String(value)),
                Some(c) => value.push(c),
                None => {
                    return Err(self.error(
                        ParseErrorKind::UnterminatedLiteral,
                        position,
                        "'''".to_string(),
                    ));
                }
            }
        }
    }

    /// `$$...$$`: everything up to the next `$$`, taken as is.
    fn dollar_string(&mut self, position: Position) -> Result<TokenKind, ParseError> {
        self.bump_ascii(2);
        let mut value = String::new();
        loop {
            if self.rest().starts_with("$$") {
                self.bump_ascii(2);
                return Ok(TokenKind::String(value));
            }
            match self.bump() {
                Some(c) => value.push(c),
                None => {
                    return Err(self.error(
                        ParseErrorKind::UnterminatedLiteral,
                        position,
                        "'$$'".to_string(),
                    ));
                }
            }
        }
    }

    /// `"..."` with `""` standing for one double quote; `""` alone is the empty name.
    fn quoted_name(&mut self, position: Position) -> Result<TokenKind, ParseError> {
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('"') if self.peek() == Some('"') => {
                    self.bump();
                    value.push('"');
                }
                Some('"') => return Ok(TokenKind::QuotedName(value)),
                Some(c) => value.push(c),
                None => {
                    return Err(self.error(
                        ParseErrorKind::UnterminatedLiteral,
                        position,
                        "'\"'".to_string(),
                    ));
                }
            }
        }
    }

    /// A UUID (8-4-4-4-12 hex digits) here, which wins over numbers and words.
    fn uuid(&mut self) -> Option<TokenKind> {
        let bytes = self.rest().as_bytes();
        if bytes.len() < 36 {
            return None;
        }
        for (i, &b) in bytes[..36].iter().enumerate() {
            let ok = match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => b.is_ascii_hexdigit(),
            };
            if !ok {
                return None;
            }
        }
        let text = &self.rest()[..36];
        let uuid = uuid::Uuid::parse_str(text).ok()?;
        self.bump_ascii(36);
        Some(TokenKind::Uuid(uuid))
    }

    fn take_digits(&mut self) -> usize {
        let n = self
            .rest()
            .bytes()
            .take_while(|b| b.is_ascii_digit())
            .count();
        self.bump_ascii(n);
        n
    }

    /// Integers, floats, `0x` blobs and unit durations (`1h30m`).
    fn number(&mut self) -> TokenKind {
        let start = self.offset;
        let rest = self.rest().as_bytes();
        if rest.len() >= 2 && rest[0] == b'0' && (rest[1] == b'x' || rest[1] == b'X') {
            self.bump_ascii(2);
            let n = self
                .rest()
                .bytes()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            self.bump_ascii(n);
            return TokenKind::Hex(self.text[start + 2..self.offset].to_string());
        }
        self.take_digits();
        let rest = self.rest();
        // `0...3.` is the float `0.` then a range (Cassandra's `(INTEGER '.' RANGE) =>
        // INTEGER '.'`), as in a slice of doubles `m[0...3.]`.
        if rest.starts_with("...") {
            self.bump_ascii(1);
            return TokenKind::Float(self.text[start..self.offset].to_string());
        }
        // `1..2` is an integer then a range, as in a slice `c[1..2]`.
        if rest.starts_with("..") {
            return TokenKind::Integer(self.text[start..self.offset].to_string());
        }
        let mut is_float = false;
        if rest.starts_with('.') {
            self.bump_ascii(1);
            self.take_digits();
            is_float = true;
        }
        if self.exponent_len() > 0 {
            let n = self.exponent_len();
            self.bump_ascii(n);
            is_float = true;
        }
        if is_float {
            return TokenKind::Float(self.text[start..self.offset].to_string());
        }
        if self.duration_unit_len() > 0 {
            loop {
                let unit = self.duration_unit_len();
                self.bump_ascii(unit);
                let digits = self
                    .rest()
                    .bytes()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                if digits == 0 {
                    break;
                }
                let save = (self.offset, self.position);
                self.bump_ascii(digits);
                if self.duration_unit_len() == 0 {
                    (self.offset, self.position) = save;
                    break;
                }
            }
            return TokenKind::Duration(self.text[start..self.offset].to_string());
        }
        TokenKind::Integer(self.text[start..self.offset].to_string())
    }

    /// A duration with its leading `-` (`-2mo`, `-P1D`), if one starts here: Cassandra's
    /// `DURATION` takes an optional `-`, which its `INTEGER` and `FLOAT` share.
    fn negative_duration(&mut self) -> Option<TokenKind> {
        let save = (self.offset, self.position);
        self.bump_ascii(1);
        let duration = match self.peek() {
            Some('0'..='9') => match self.number() {
                TokenKind::Duration(text) => Some(TokenKind::Duration(format!("-{text}"))),
                _ => None,
            },
            Some('P') => match self.iso_duration() {
                Some(TokenKind::Duration(text)) => Some(TokenKind::Duration(format!("-{text}"))),
                _ => None,
            },
            _ => None,
        };
        if duration.is_none() {
            (self.offset, self.position) = save;
        }
        duration
    }

    /// The length of an exponent (`e10`, `E-3`) here, or 0.
    fn exponent_len(&self) -> usize {
        let b = self.rest().as_bytes();
        if b.is_empty() || (b[0] != b'e' && b[0] != b'E') {
            return 0;
        }
        let sign = usize::from(b.len() > 1 && (b[1] == b'+' || b[1] == b'-'));
        let digits = b[1 + sign..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 { 0 } else { 1 + sign + digits }
    }

    /// The byte length of a duration unit here (`y mo w d h m s ms us µs ns`), or 0.
    fn duration_unit_len(&self) -> usize {
        let rest = self.rest();
        let lower: String = rest.chars().take(2).collect::<String>().to_lowercase();
        if rest.starts_with("µs") || rest.starts_with("µS") {
            return "µs".len();
        }
        if ["mo", "ms", "us", "ns"].contains(&lower.as_str()) {
            return 2;
        }
        match lower.chars().next() {
            Some('y' | 'w' | 'd' | 'h' | 'm' | 's') => 1,
            _ => 0,
        }
    }

    /// An ISO 8601 duration (`P1Y2M3DT4H5M6S`, `P2W`, `P0001-02-03T04:05:06`) if one starts
    /// here and is not the start of a longer word.
    fn iso_duration(&mut self) -> Option<TokenKind> {
        let len = iso_duration_len(self.rest().as_bytes())?;
        let next = self.rest()[len..].chars().next();
        if next.is_some_and(is_word_char) {
            return None;
        }
        let text = self.rest()[..len].to_string();
        self.bump_ascii(len);
        Some(TokenKind::Duration(text))
    }

    fn word(&mut self) -> TokenKind {
        let n = self.rest().chars().take_while(|&c| is_word_char(c)).count();
        let text = self.rest()[..n].to_ascii_lowercase();
        self.bump_ascii(n);
        match text.as_str() {
            "true" => TokenKind::Boolean(true),
            "false" => TokenKind::Boolean(false),
            _ => {
                let keyword = Keyword::from_lowercase(&text);
                TokenKind::Word { text, keyword }
            }
        }
    }
}

/// The length of the ISO 8601 duration at the start of `b` (which starts with `P`), if any.
fn iso_duration_len(b: &[u8]) -> Option<usize> {
    let digits_at = |i: usize| {
        b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    // The alternative format: P0001-02-03T04:05:06.
    let alternative = b"P0000-00-00T00:00:00";
    if b.len() >= alternative.len()
        && alternative.iter().zip(b).all(|(pattern, c)| {
            if *pattern == b'0' {
                c.is_ascii_digit()
            } else {
                pattern == c
            }
        })
    {
        return Some(alternative.len());
    }
    // Designators in order; each is digits followed by its letter.
    let mut i = 1;
    let take = |i: &mut usize, letters: &[u8]| -> usize {
        let mut found = 0;
        for &letter in letters {
            let d = digits_at(*i);
            if d > 0 && b.get(*i + d) == Some(&letter) {
                *i += d + 1;
                found += 1;
            }
        }
        found
    };
    let d = digits_at(1);
    if d > 0 && b.get(1 + d) == Some(&b'W') {
        return Some(2 + d);
    }
    let date = take(&mut i, b"YMD");
    let mut time = 0;
    if b.get(i) == Some(&b'T') {
        let mut j = i + 1;
        time = take(&mut j, b"HMS");
        if time > 0 {
            i = j;
        }
    }
    (date + time > 0).then_some(i)
}
