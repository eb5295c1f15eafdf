//! The lexer: every kind of token, with its line and column.

use khata_cql::language::{Keyword, Position, TokenKind, tokenize};

fn kinds(text: &str) -> Vec<TokenKind> {
    tokenize(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .into_iter()
        .map(|t| t.kind)
        .collect()
}

fn word(text: &str) -> TokenKind {
    TokenKind::Word {
        text: text.to_string(),
        keyword: Keyword::from_lowercase(text),
    }
}

#[test]
fn words_fold_case_and_quoted_names_keep_it() {
    assert_eq!(
        kinds(r#"SeLeCt MyCol "MyCol" "a""b" """#),
        vec![
            word("select"),
            word("mycol"),
            TokenKind::QuotedName("MyCol".into()),
            TokenKind::QuotedName("a\"b".into()),
            TokenKind::QuotedName(String::new()),
            TokenKind::Eof,
        ]
    );
    assert_eq!(kinds("SELECT")[0].keyword(), Some(Keyword::Select));
    assert_eq!(
        kinds("columnfamily")[0].keyword(),
        Some(Keyword::ColumnFamily)
    );
    assert_eq!(
        kinds("TRUE false"),
        vec![
            TokenKind::Boolean(true),
            TokenKind::Boolean(false),
            TokenKind::Eof
        ]
    );
}

#[test]
fn strings() {
    assert_eq!(
        kinds("'it''s' $$a 'b' $ c$$ ''"),
        vec![
            TokenKind::String("it's".into()),
            TokenKind::String("a 'b' $ c".into()),
            TokenKind::String(String::new()),
            TokenKind::Eof,
        ]
    );
}

#[test]
fn numbers_blobs_uuids_durations() {
    let uuid: uuid::Uuid = "123e4567-e89b-12d3-a456-426614174000".parse().unwrap();
    assert_eq!(
        kinds(
            "42 1.5 2. 3e10 4.5E-3 0xCAFE 0x 123e4567-e89b-12d3-a456-426614174000 \
             1h30m 2d 3mo 4ms 5us 6µs 7ns 1y2mo3w4d5h6m7s8ms P1Y2M3DT4H5M6S PT1H P2W \
             P0001-02-03T04:05:06 NaN Infinity"
        ),
        vec![
            TokenKind::Integer("42".into()),
            TokenKind::Float("1.5".into()),
            TokenKind::Float("2.".into()),
            TokenKind::Float("3e10".into()),
            TokenKind::Float("4.5E-3".into()),
            TokenKind::Hex("CAFE".into()),
            TokenKind::Hex(String::new()),
            TokenKind::Uuid(uuid),
            TokenKind::Duration("1h30m".into()),
            TokenKind::Duration("2d".into()),
            TokenKind::Duration("3mo".into()),
            TokenKind::Duration("4ms".into()),
            TokenKind::Duration("5us".into()),
            TokenKind::Duration("6µs".into()),
            TokenKind::Duration("7ns".into()),
            TokenKind::Duration("1y2mo3w4d5h6m7s8ms".into()),
            TokenKind::Duration("P1Y2M3DT4H5M6S".into()),
            TokenKind::Duration("PT1H".into()),
            TokenKind::Duration("P2W".into()),
            TokenKind::Duration("P0001-02-03T04:05:06".into()),
            word("nan"),
            word("infinity"),
            TokenKind::Eof,
        ]
    );
    // `P1Dx` is a word, not a duration; `1..3` is a slice, not a float.
    assert_eq!(kinds("P1Dx")[0], word("p1dx"));
    assert_eq!(
        kinds("1..3"),
        vec![
            TokenKind::Integer("1".into()),
            TokenKind::Range,
            TokenKind::Integer("3".into()),
            TokenKind::Eof,
        ]
    );
    // A minus before a number is its own token; the parser folds it into literals.
    assert_eq!(
        kinds("c-1"),
        vec![
            word("c"),
            TokenKind::Minus,
            TokenKind::Integer("1".into()),
            TokenKind::Eof
        ]
    );
}

#[test]
fn a_minus_right_before_a_duration_is_part_of_it() {
    // Cassandra's DURATION rule starts with `'-'?`: `1y-2mo` is two durations.
    assert_eq!(
        kinds("1y-2mo -P1D -P2W -1h30m - 1h -1 -1.5 -x -Px"),
        vec![
            TokenKind::Duration("1y".into()),
            TokenKind::Duration("-2mo".into()),
            TokenKind::Duration("-P1D".into()),
            TokenKind::Duration("-P2W".into()),
            TokenKind::Duration("-1h30m".into()),
            TokenKind::Minus,
            TokenKind::Duration("1h".into()),
            TokenKind::Minus,
            TokenKind::Integer("1".into()),
            TokenKind::Minus,
            TokenKind::Float("1.5".into()),
            TokenKind::Minus,
            word("x"),
            TokenKind::Minus,
            word("px"),
            TokenKind::Eof,
        ]
    );
    // `-=` stays one operator.
    assert_eq!(kinds("-=1h")[0], TokenKind::MinusEqual);
}

#[test]
fn operators_markers_and_punctuation() {
    assert_eq!(
        kinds("= != < <= > >= + - * / % += -= ? :name , ; . .. ( ) [ ] { }"),
        vec![
            TokenKind::Equal,
            TokenKind::NotEqual,
            TokenKind::Less,
            TokenKind::LessEqual,
            TokenKind::Greater,
            TokenKind::GreaterEqual,
            TokenKind::Plus,
            TokenKind::Minus,
            TokenKind::Star,
            TokenKind::Slash,
            TokenKind::Percent,
            TokenKind::PlusEqual,
            TokenKind::MinusEqual,
            TokenKind::QuestionMark,
            TokenKind::Colon,
            word("name"),
            TokenKind::Comma,
            TokenKind::Semicolon,
            TokenKind::Dot,
            TokenKind::Range,
            TokenKind::LeftParen,
            TokenKind::RightParen,
            TokenKind::LeftBracket,
            TokenKind::RightBracket,
            TokenKind::LeftBrace,
            TokenKind::RightBrace,
            TokenKind::Eof,
        ]
    );
}

#[test]
fn comments_are_skipped_and_positions_count_lines_and_characters() {
    let tokens =
        tokenize("-- one\nSELECT /* two\nlines */ é_col, 'é' // three\n  FROM t").unwrap_err();
    // `é` starts no token: reported where it is.
    assert_eq!(tokens.position, Position { line: 3, column: 9 });

    let tokens = tokenize("-- one\nSELECT /* two\nlines */ 'é', x // three\n  FROM t").unwrap();
    let positions: Vec<(u32, u32)> = tokens
        .iter()
        .map(|t| (t.position.line, t.position.column))
        .collect();
    assert_eq!(
        positions,
        vec![(2, 0), (3, 9), (3, 12), (3, 14), (4, 2), (4, 7), (4, 8)]
    );
    let text = "SELECT 'é'";
    let tokens = tokenize(text).unwrap();
    assert_eq!(&text[tokens[1].span.clone()], "'é'");
}

#[test]
fn unterminated_input_is_an_error_at_its_start() {
    for (text, column) in [
        ("SELECT 'abc", 7),
        ("SELECT \"abc", 7),
        ("x $$abc", 2),
        ("a /* b", 2),
    ] {
        let error = tokenize(text).unwrap_err();
        assert_eq!(error.position, Position { line: 1, column }, "{text}");
    }
}
