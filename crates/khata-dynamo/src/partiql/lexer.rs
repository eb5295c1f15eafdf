//! PartiQL's tokens, as DynamoDB's dialect uses them.
//!
//! Keywords are identifiers compared without case by the parser; `"quoted"` identifiers keep
//! their case and never are keywords; `'strings'` double a quote to escape it, as SQL does.
//! Numbers are kept as written (the item operations validate them). The lexer never fails on
//! a character it does not know: it answers an error the parser turns into DynamoDB's
//! "Statement wasn't well formed" refusal.

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    /// A bare identifier or keyword, as written.
    Ident(String),
    /// A `"double-quoted"` identifier, unescaped.
    Quoted(String),
    /// A `'single-quoted'` string, unescaped.
    Str(String),
    /// A number as written (digits, one `.`, an exponent).
    Number(String),
    /// `?`.
    Param,
    /// Punctuation and operators: `( ) [ ] { } , . : * + - = <> != < <= > >= << >>`.
    Symbol(&'static str),
}

impl Token {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Token::Ident(s) => s.clone(),
            Token::Quoted(s) => format!("\"{s}\""),
            Token::Str(s) => format!("'{s}'"),
            Token::Number(s) => s.clone(),
            Token::Param => "?".into(),
            Token::Symbol(s) => (*s).into(),
        }
    }
}

/// The symbols, longest first so `<=` is not read as `<` then `=`.
const SYMBOLS: &[&str] = &[
    "<<", ">>", "<>", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "*", "+", "-",
    "=", "<", ">",
];

/// The statement's tokens, or what stopped the lexer.
pub(crate) fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            // A `--` comment runs to the end of the line.
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '\'' || c == '"' {
            let (s, next) = quoted(&chars, i, c)?;
            out.push(if c == '\'' {
                Token::Str(s)
            } else {
                Token::Quoted(s)
            });
            i = next;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            out.push(Token::Number(chars[start..i].iter().collect()));
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c == '?' {
            out.push(Token::Param);
            i += 1;
        } else if let Some(s) = SYMBOLS.iter().find(|s| {
            let sc: Vec<char> = s.chars().collect();
            chars[i..].starts_with(&sc)
        }) {
            out.push(Token::Symbol(s));
            i += s.len();
        } else {
            return Err(format!("Unexpected character '{c}'"));
        }
    }
    Ok(out)
}

/// A quoted string or identifier starting at `start` (the quote), and the index after it.
fn quoted(chars: &[char], start: usize, quote: char) -> Result<(String, usize), String> {
    let mut s = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None => return Err("Unterminated quoted text".into()),
            Some(&c) if c == quote => {
                if chars.get(i + 1) == Some(&quote) {
                    s.push(quote);
                    i += 2;
                } else {
                    return Ok((s, i + 1));
                }
            }
            Some(&c) => {
                s.push(c);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_strings_identifiers_numbers_and_symbols() {
        let t = tokens(r#"SELECT "a""b", 'it''s' FROM t WHERE x<=-1.5e3 AND y <> ? -- c"#).unwrap();
        assert_eq!(t[1], Token::Quoted("a\"b".into()));
        assert_eq!(t[3], Token::Str("it's".into()));
        assert!(t.contains(&Token::Symbol("<=")));
        assert!(t.contains(&Token::Number("1.5e3".into())));
        assert_eq!(t.last(), Some(&Token::Param));
        assert!(tokens("'open").is_err());
        assert!(tokens("a # b").is_err());
    }
}
