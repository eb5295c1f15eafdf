//! The expression lexer: identifiers, `#name` and `:value` placeholders, list indexes and
//! punctuation, each with its byte span for DynamoDB's `token: "...", near: "..."` messages.

/// One token of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A bare word: an attribute name, a keyword (`AND`, `SET`, ...) or a function name.
    Word(String),
    /// `#name`
    Name(String),
    /// `:value`
    Value(String),
    /// Decimal digits (list indexes).
    Digits(String),
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Plus,
    Minus,
    Eof,
}

impl Tok {
    /// True for a word equal to `keyword` in any letter case.
    pub(crate) fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self, Tok::Word(w) if w.eq_ignore_ascii_case(keyword))
    }
}

/// A token and its byte span in the expression.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// A character no token starts with, at this byte offset.
#[derive(Debug)]
pub(crate) struct BadChar {
    pub start: usize,
    pub end: usize,
}

fn is_word_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Splits `text` into tokens, ending with [`Tok::Eof`].
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, BadChar> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b' ' || b == b'\t' || b == b'\n' || b == b'\r' {
            i += 1;
            continue;
        }
        let start = i;
        let run = |from: usize| {
            let mut j = from;
            while j < bytes.len() && is_word_char(bytes[j]) {
                j += 1;
            }
            j
        };
        let tok = match b {
            b'a'..=b'z' | b'A'..=b'Z' => {
                i = run(i);
                Tok::Word(text[start..i].to_owned())
            }
            b'0'..=b'9' => {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                Tok::Digits(text[start..i].to_owned())
            }
            b'#' | b':' => {
                i = run(i + 1);
                if i == start + 1 {
                    return Err(BadChar {
                        start,
                        end: start + 1,
                    });
                }
                let s = text[start..i].to_owned();
                if b == b'#' {
                    Tok::Name(s)
                } else {
                    Tok::Value(s)
                }
            }
            _ => {
                let two = bytes.get(i + 1).copied();
                let (tok, len) = match (b, two) {
                    (b'<', Some(b'>')) => (Tok::Ne, 2),
                    (b'<', Some(b'=')) => (Tok::Le, 2),
                    (b'>', Some(b'=')) => (Tok::Ge, 2),
                    (b'<', _) => (Tok::Lt, 1),
                    (b'>', _) => (Tok::Gt, 1),
                    (b'=', _) => (Tok::Eq, 1),
                    (b'(', _) => (Tok::LParen, 1),
                    (b')', _) => (Tok::RParen, 1),
                    (b'[', _) => (Tok::LBracket, 1),
                    (b']', _) => (Tok::RBracket, 1),
                    (b',', _) => (Tok::Comma, 1),
                    (b'.', _) => (Tok::Dot, 1),
                    (b'+', _) => (Tok::Plus, 1),
                    (b'-', _) => (Tok::Minus, 1),
                    _ => {
                        let width = text[start..].chars().next().map_or(1, char::len_utf8);
                        return Err(BadChar {
                            start,
                            end: start + width,
                        });
                    }
                };
                i += len;
                tok
            }
        };
        tokens.push(Token { tok, start, end: i });
    }
    tokens.push(Token {
        tok: Tok::Eof,
        start: text.len(),
        end: text.len(),
    });
    Ok(tokens)
}

/// The `near` text of a syntax error at token `at`: from the previous token's start to the
/// next token's end, as DynamoDB quotes it.
pub(crate) fn near(text: &str, tokens: &[Token], at: usize) -> String {
    let from = if at > 0 {
        tokens[at - 1].start
    } else {
        tokens[at].start
    };
    let to = match tokens.get(at + 1) {
        Some(t) if t.tok != Tok::Eof => t.end,
        _ => tokens[at].end,
    };
    text[from..to].to_owned()
}

/// The `near` text around a character no token starts with.
pub(crate) fn near_bad_char(text: &str, bad: &BadChar) -> String {
    // The previous token (scanning back over one word), the character, and what follows up
    // to the next separator.
    let before = text[..bad.start].trim_end();
    let prev_start = before
        .rfind(|c: char| c.is_whitespace())
        .map_or(0, |p| p + 1);
    let after = &text[bad.end..];
    let next_len = after
        .find(|c: char| c.is_whitespace())
        .unwrap_or(after.len());
    text[prev_start..bad.end + next_len].to_owned()
}
