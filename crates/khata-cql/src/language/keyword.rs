//! CQL's keywords and which of them may also serve as identifiers.
//!
//! The list follows apache/cassandra `src/antlr/Lexer.g` (the `K_*` rules); the split between
//! reserved and unreserved keywords follows `Parser.g`'s `basic_unreserved_keyword`,
//! `unreserved_function_keyword` and `unreserved_keyword`. Keywords are case-insensitive.
//!
//! An unreserved keyword is a keyword only where the grammar expects it (a column may be named
//! `key`, `type`, `ttl` or `values`); a reserved keyword must be double-quoted to be a name.

/// How a keyword may be used outside its own syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeywordClass {
    /// Never an identifier (`SELECT`, `FROM`, `TABLE`, ...).
    Reserved,
    /// Any identifier, user type names and function names included
    /// (`basic_unreserved_keyword`).
    Basic,
    /// A native type name: a column, keyspace or function name, but not a user type name.
    NativeType,
    /// A column, table or keyspace name, but neither a function nor a user type name
    /// (`TTL`, `COUNT`, `WRITETIME`, `MAXWRITETIME`, `KEY`, `CAST`, `JSON`, `DISTINCT`).
    Special,
}

macro_rules! keywords {
    ($($variant:ident => $text:literal, $token:literal, $class:ident;)*) => {
        /// A CQL keyword.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Keyword {
            $(
                #[doc = concat!("`", $text, "`")]
                $variant,
            )*
        }

        impl Keyword {
            /// Every keyword.
            pub const ALL: &[Keyword] = &[$(Keyword::$variant,)*];

            /// The keyword for a lower-cased word, if it is one.
            pub fn from_lowercase(word: &str) -> Option<Keyword> {
                match word {
                    $($text => Some(Keyword::$variant),)*
                    _ => None,
                }
            }

            /// The keyword as written in lower case (`TABLE` and `COLUMNFAMILY` share one).
            pub fn text(self) -> &'static str {
                match self {
                    $(Keyword::$variant => $text,)*
                }
            }

            /// The grammar's token name (`K_FROM`), as Cassandra's error messages show it.
            pub fn token_name(self) -> &'static str {
                match self {
                    $(Keyword::$variant => $token,)*
                }
            }

            /// Where the keyword may also be an identifier.
            pub fn class(self) -> KeywordClass {
                match self {
                    $(Keyword::$variant => KeywordClass::$class,)*
                }
            }
        }
    };
}

keywords! {
    Select => "select", "K_SELECT", Reserved;
    From => "from", "K_FROM", Reserved;
    As => "as", "K_AS", Basic;
    Where => "where", "K_WHERE", Reserved;
    And => "and", "K_AND", Reserved;
    Key => "key", "K_KEY", Special;
    Keys => "keys", "K_KEYS", Basic;
    Entries => "entries", "K_ENTRIES", Reserved;
    Full => "full", "K_FULL", Reserved;
    Insert => "insert", "K_INSERT", Reserved;
    Update => "update", "K_UPDATE", Reserved;
    With => "with", "K_WITH", Reserved;
    Limit => "limit", "K_LIMIT", Reserved;
    Per => "per", "K_PER", Basic;
    Partition => "partition", "K_PARTITION", Basic;
    Using => "using", "K_USING", Reserved;
    Use => "use", "K_USE", Reserved;
    Distinct => "distinct", "K_DISTINCT", Special;
    Count => "count", "K_COUNT", Special;
    Set => "set", "K_SET", Reserved;
    Begin => "begin", "K_BEGIN", Reserved;
    Unlogged => "unlogged", "K_UNLOGGED", Reserved;
    Batch => "batch", "K_BATCH", Reserved;
    Apply => "apply", "K_APPLY", Reserved;
    Truncate => "truncate", "K_TRUNCATE", Reserved;
    Delete => "delete", "K_DELETE", Reserved;
    In => "in", "K_IN", Reserved;
    Create => "create", "K_CREATE", Reserved;
    Schema => "schema", "K_SCHEMA", Reserved;
    Keyspace => "keyspace", "K_KEYSPACE", Reserved;
    Keyspaces => "keyspaces", "K_KEYSPACES", Basic;
    Table => "table", "K_COLUMNFAMILY", Reserved;
    ColumnFamily => "columnfamily", "K_COLUMNFAMILY", Reserved;
    Tables => "tables", "K_TABLES", Basic;
    ColumnFamilies => "columnfamilies", "K_TABLES", Basic;
    Materialized => "materialized", "K_MATERIALIZED", Reserved;
    View => "view", "K_VIEW", Reserved;
    Index => "index", "K_INDEX", Reserved;
    Custom => "custom", "K_CUSTOM", Basic;
    On => "on", "K_ON", Reserved;
    To => "to", "K_TO", Reserved;
    Drop => "drop", "K_DROP", Reserved;
    Primary => "primary", "K_PRIMARY", Reserved;
    Into => "into", "K_INTO", Reserved;
    Values => "values", "K_VALUES", Basic;
    Timestamp => "timestamp", "K_TIMESTAMP", NativeType;
    Ttl => "ttl", "K_TTL", Special;
    Cast => "cast", "K_CAST", Special;
    Alter => "alter", "K_ALTER", Reserved;
    Rename => "rename", "K_RENAME", Reserved;
    Add => "add", "K_ADD", Reserved;
    Type => "type", "K_TYPE", Basic;
    Types => "types", "K_TYPES", Basic;
    Compact => "compact", "K_COMPACT", Basic;
    Storage => "storage", "K_STORAGE", Basic;
    Order => "order", "K_ORDER", Reserved;
    By => "by", "K_BY", Reserved;
    Asc => "asc", "K_ASC", Reserved;
    Desc => "desc", "K_DESC", Reserved;
    Allow => "allow", "K_ALLOW", Reserved;
    Filtering => "filtering", "K_FILTERING", Basic;
    If => "if", "K_IF", Reserved;
    Is => "is", "K_IS", Reserved;
    Contains => "contains", "K_CONTAINS", Basic;
    Between => "between", "K_BETWEEN", Basic;
    Group => "group", "K_GROUP", Basic;
    Cluster => "cluster", "K_CLUSTER", Basic;
    Internals => "internals", "K_INTERNALS", Basic;
    Only => "only", "K_ONLY", Basic;
    Grant => "grant", "K_GRANT", Reserved;
    All => "all", "K_ALL", Basic;
    Permission => "permission", "K_PERMISSION", Basic;
    Permissions => "permissions", "K_PERMISSIONS", Basic;
    Of => "of", "K_OF", Reserved;
    Revoke => "revoke", "K_REVOKE", Reserved;
    Modify => "modify", "K_MODIFY", Reserved;
    Authorize => "authorize", "K_AUTHORIZE", Reserved;
    Describe => "describe", "K_DESCRIBE", Reserved;
    Execute => "execute", "K_EXECUTE", Reserved;
    Norecursive => "norecursive", "K_NORECURSIVE", Reserved;
    Mbean => "mbean", "K_MBEAN", Basic;
    Mbeans => "mbeans", "K_MBEANS", Basic;
    User => "user", "K_USER", Basic;
    Users => "users", "K_USERS", Basic;
    Role => "role", "K_ROLE", Basic;
    Roles => "roles", "K_ROLES", Basic;
    Superusers => "superusers", "K_SUPERUSERS", Basic;
    Superuser => "superuser", "K_SUPERUSER", Basic;
    Nosuperuser => "nosuperuser", "K_NOSUPERUSER", Basic;
    Generated => "generated", "K_GENERATED", Basic;
    Password => "password", "K_PASSWORD", Basic;
    Hashed => "hashed", "K_HASHED", Basic;
    Login => "login", "K_LOGIN", Basic;
    Nologin => "nologin", "K_NOLOGIN", Basic;
    Options => "options", "K_OPTIONS", Basic;
    Access => "access", "K_ACCESS", Basic;
    Datacenters => "datacenters", "K_DATACENTERS", Basic;
    Cidrs => "cidrs", "K_CIDRS", Basic;
    Identity => "identity", "K_IDENTITY", Basic;
    Clustering => "clustering", "K_CLUSTERING", Basic;
    Ascii => "ascii", "K_ASCII", NativeType;
    Bigint => "bigint", "K_BIGINT", NativeType;
    Blob => "blob", "K_BLOB", NativeType;
    Boolean => "boolean", "K_BOOLEAN", NativeType;
    Counter => "counter", "K_COUNTER", NativeType;
    Decimal => "decimal", "K_DECIMAL", NativeType;
    Double => "double", "K_DOUBLE", NativeType;
    Duration => "duration", "K_DURATION", NativeType;
    Float => "float", "K_FLOAT", NativeType;
    Inet => "inet", "K_INET", NativeType;
    Int => "int", "K_INT", NativeType;
    Smallint => "smallint", "K_SMALLINT", NativeType;
    Tinyint => "tinyint", "K_TINYINT", NativeType;
    Text => "text", "K_TEXT", NativeType;
    Uuid => "uuid", "K_UUID", NativeType;
    Varchar => "varchar", "K_VARCHAR", NativeType;
    Varint => "varint", "K_VARINT", NativeType;
    Timeuuid => "timeuuid", "K_TIMEUUID", NativeType;
    Token => "token", "K_TOKEN", Reserved;
    Writetime => "writetime", "K_WRITETIME", Special;
    Maxwritetime => "maxwritetime", "K_MAXWRITETIME", Special;
    Date => "date", "K_DATE", NativeType;
    Time => "time", "K_TIME", NativeType;
    Null => "null", "K_NULL", Reserved;
    Not => "not", "K_NOT", Reserved;
    Exists => "exists", "K_EXISTS", Basic;
    Map => "map", "K_MAP", Basic;
    List => "list", "K_LIST", Basic;
    Nan => "nan", "K_POSITIVE_NAN", Reserved;
    Infinity => "infinity", "K_POSITIVE_INFINITY", Reserved;
    Tuple => "tuple", "K_TUPLE", Basic;
    Trigger => "trigger", "K_TRIGGER", Basic;
    Static => "static", "K_STATIC", Basic;
    Frozen => "frozen", "K_FROZEN", Basic;
    Function => "function", "K_FUNCTION", Basic;
    Functions => "functions", "K_FUNCTIONS", Basic;
    Aggregate => "aggregate", "K_AGGREGATE", Basic;
    Aggregates => "aggregates", "K_AGGREGATES", Basic;
    Sfunc => "sfunc", "K_SFUNC", Basic;
    Stype => "stype", "K_STYPE", Basic;
    Finalfunc => "finalfunc", "K_FINALFUNC", Basic;
    Initcond => "initcond", "K_INITCOND", Basic;
    Returns => "returns", "K_RETURNS", Basic;
    Called => "called", "K_CALLED", Basic;
    Input => "input", "K_INPUT", Basic;
    Language => "language", "K_LANGUAGE", Basic;
    Or => "or", "K_OR", Reserved;
    Replace => "replace", "K_REPLACE", Basic;
    Json => "json", "K_JSON", Special;
    Default => "default", "K_DEFAULT", Basic;
    Unset => "unset", "K_UNSET", Basic;
    Like => "like", "K_LIKE", Basic;
    Masked => "masked", "K_MASKED", Basic;
    Unmask => "unmask", "K_UNMASK", Basic;
    SelectMasked => "select_masked", "K_SELECT_MASKED", Basic;
    Vector => "vector", "K_VECTOR", Basic;
    Ann => "ann", "K_ANN", Basic;
    Check => "check", "K_CHECK", Basic;
    Indexes => "indexes", "K_INDEXES", Basic;
}

impl Keyword {
    /// Whether the keyword must be quoted to be used as a name.
    pub fn is_reserved(self) -> bool {
        self.class() == KeywordClass::Reserved
    }

    /// Whether the keyword may name a function (`allowedFunctionName`: the basic unreserved
    /// keywords, the native type names, `token` and `count`).
    pub fn is_function_name(self) -> bool {
        matches!(self.class(), KeywordClass::Basic | KeywordClass::NativeType)
            || matches!(self, Keyword::Token | Keyword::Count)
    }

    /// Whether the keyword may name a user type (`non_type_ident`: the basic unreserved
    /// keywords and `key`).
    pub fn is_user_type_name(self) -> bool {
        self.class() == KeywordClass::Basic || self == Keyword::Key
    }
}

#[cfg(test)]
mod tests {
    use super::Keyword;

    #[test]
    fn the_reserved_keywords_agree_with_khata_types() {
        let mut here: Vec<&str> = Keyword::ALL
            .iter()
            .filter(|k| k.is_reserved())
            .map(|k| k.text())
            .collect();
        here.sort();
        here.dedup();
        assert_eq!(here, khata_types::type_text::RESERVED_KEYWORDS);
    }
}
