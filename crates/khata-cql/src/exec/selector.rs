//! Computed selectors: the scalar functions, field selections and element and slice selections
//! a SELECT evaluates per row, nested as the query writes them
//! (`system.blobasint(system.intasblob(v))`, `toTimestamp(now())`, `addr.street`, `toJson(m)`,
//! `m['k']['a'..'c']`).
//!
//! The plain shapes (a column, `WRITETIME`, `TTL`, aggregates, `token()`, `CAST` and element
//! selection of a column) keep their own outputs in `select.rs`; anything else that is a function
//! call, a cast or a field selection compiles here into a [`Computed`] tree with its result type,
//! checked against the argument types once per statement as Cassandra checks them.
//!
//! A selector over aggregates (`toDate(min(b))`, `CAST(sum(v) AS text)`, `max(v) - min(v)`)
//! compiles with [`compile_over`]: its aggregates and the columns it reads become inputs
//! (`select.rs` folds them per group), and the tree computes the group's value from them.

use bytes::Bytes;
use khata_types::schema::{ColumnDef, CqlType, TableDef};

use khata_coordinator::Coordinator;

use super::arith::{Fit, Side, failure, hint_type, literal_fit, resolve, resolve_negation};
use super::bind::Bound;
use super::error::ExecError;
use super::functions::{date_millis, days, uuid_millis};
use crate::frame::{ErrorBody, ErrorKind};
use crate::language::ast::{ArithmeticOp, Selectable, Term};
use crate::value::{CqlValue, apply_arithmetic, negate_number};

/// What the functions of a statement read besides the row: the statement's time and the node's
/// generators of time-based and random UUIDs.
#[derive(Clone, Copy)]
pub(super) struct Env<'a> {
    pub coordinator: &'a Coordinator,
    /// Microseconds since the epoch.
    pub now_micros: i64,
    /// The values of a computation's inputs ([`compile_over`]): a group's aggregates.
    pub inputs: &'a [Option<Bytes>],
}

/// A computed selector and its result type.
#[derive(Clone, Debug)]
pub(super) struct Computed {
    node: Node,
    /// The type of the value it yields.
    pub ty: CqlType,
}

#[derive(Clone, Debug)]
enum Node {
    Column(ColumnDef),
    Call(Scalar, Vec<Computed>),
    /// Field `index` of a user type value.
    Field(Box<Computed>, usize),
    /// `s[key]`: an element of a map (its value) or set (the element, if present).
    Element(Box<Computed>, Box<Arg>),
    /// `s[from..to]`: the elements of a map or set between two keys, both inclusive; an
    /// absent bound is open.
    Slice(Box<Computed>, Box<[Option<Arg>; 2]>),
    /// A literal or bind marker of the selector's type (`(int) 1`, the `1` of `a + 1`): its
    /// value, bound per execution, `None` for null.
    Term(Box<Arg>),
    /// `left op right`, the operands of the overload's types (`exec::arith`).
    Op(ArithmeticOp, Box<[Computed; 2]>),
    /// `-s`
    Negate(Box<Computed>),
    /// `CAST(s AS type)`, to the type of the selector.
    Cast(Box<Computed>),
    /// Input `i` of a computation over aggregates ([`compile_over`]).
    Input(usize),
    /// A list, set, map or tuple of selectors (`[min(c), max(c)]`, `(a, b)`,
    /// `{'k': v}`), of the type [`Computed::ty`]; a map's keys and values alternate.
    Compose(Vec<Computed>),
}

/// The inputs of a computation over aggregates: given a selector, the index and type of the
/// input that stands for it (an aggregate, or a column whose value the group's first row
/// gives), or `None` to compile it as usual.
pub(super) type Inputs<'a> =
    dyn FnMut(&Selectable) -> Result<Option<(usize, CqlType)>, ExecError> + 'a;

/// The name Cassandra gives the bind markers of a selection (`SELECT (int) ? ...`).
const SELECTION_MARKER: &str = "[selection]";

/// What binds an element key, slice bound or term for an execution: its term, type and
/// receiver name to its value.
pub(super) type BindArg<'a> = dyn FnMut(&Term, &CqlType, &str) -> Result<Bound, ExecError> + 'a;

/// The key of an element selection or a bound of a slice: the statement's term, bound to a
/// value for each execution ([`Computed::bind`]).
#[derive(Clone, Debug)]
struct Arg {
    term: Term,
    /// The key type of the collection.
    ty: CqlType,
    /// The name bind markers and errors give it: `key(m)` for a map, `value(s)` for a set, as
    /// Cassandra names them.
    receiver: String,
    /// The bound value; `None` until bound, for a slice bound given as unset (open), or for a
    /// term bound to null.
    value: Option<Bytes>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    Now,
    Uuid,
    CurrentTimestamp,
    CurrentDate,
    CurrentTime,
    ToTimestamp,
    ToDate,
    ToUnixTimestamp,
    MinTimeuuid,
    MaxTimeuuid,
    /// `<type>AsBlob`: the value's bytes as a blob.
    AsBlob,
    /// `blobAs<type>`: a blob's bytes as a value of the type (checked).
    BlobAs,
    ToJson,
    /// `token(...)` of values (not of the row's own key: `select.rs` answers that): the
    /// token of the partition key they make, for the table's partitioner.
    Token,
    /// A function Cassandra 5.0 added (`native_scalars`).
    Native(super::native_scalars::Native),
}

/// The native types by the names the blob conversion functions use.
pub(super) fn native(name: &str) -> Option<CqlType> {
    Some(match name {
        "ascii" => CqlType::Ascii,
        "bigint" => CqlType::Bigint,
        "blob" => CqlType::Blob,
        "boolean" => CqlType::Boolean,
        "counter" => CqlType::Counter,
        "date" => CqlType::Date,
        "decimal" => CqlType::Decimal,
        "double" => CqlType::Double,
        "duration" => CqlType::Duration,
        "float" => CqlType::Float,
        "inet" => CqlType::Inet,
        "int" => CqlType::Int,
        "smallint" => CqlType::Smallint,
        "text" | "varchar" => CqlType::Text,
        "time" => CqlType::Time,
        "timestamp" => CqlType::Timestamp,
        "timeuuid" => CqlType::Timeuuid,
        "tinyint" => CqlType::Tinyint,
        "uuid" => CqlType::Uuid,
        "varint" => CqlType::Varint,
        _ => return None,
    })
}

fn type_text(ty: &CqlType) -> String {
    khata_types::type_text::type_text(ty)
}

/// Whether a selector is one this module computes: a function call, a field selection, a
/// slice, or an element selection of anything but a plain column (`select.rs` reads `m[k]` of a
/// column from its cells).
pub(super) fn handles(s: &Selectable) -> bool {
    match s {
        Selectable::Cast { selectable, .. } => {
            !matches!(selectable.as_ref(), Selectable::Column(_))
        }
        Selectable::FunctionCall { .. }
        | Selectable::Field { .. }
        | Selectable::Slice { .. }
        | Selectable::Term(_)
        | Selectable::TypeHint { .. }
        | Selectable::Arithmetic { .. }
        | Selectable::Negation(_)
        | Selectable::Tuple(_)
        | Selectable::List(_)
        | Selectable::Set(_)
        | Selectable::Map(_) => true,
        Selectable::Element { selectable, .. } => {
            !matches!(selectable.as_ref(), Selectable::Column(_))
        }
        _ => false,
    }
}

/// The key type of a collection selected by element or slice, and the name Cassandra gives its
/// bind markers; `what` is "Element" or "Slice" for the refusal of anything else.
pub(super) fn element_key(
    of: &Selectable,
    ty: &CqlType,
    what: &str,
) -> Result<(CqlType, String), ExecError> {
    let name = column_name(of);
    match ty {
        CqlType::Map { key, .. } => Ok((key.as_ref().clone(), format!("key({name})"))),
        CqlType::Set { element, .. } => Ok((element.as_ref().clone(), format!("value({name})"))),
        CqlType::List { .. } => Err(ExecError::invalid(format!(
            "{what} selection is only allowed on sets and maps, but {name} is a list"
        ))),
        other => Err(ExecError::invalid(format!(
            "Invalid {} selection: {name} of type {} is not a collection",
            what.to_ascii_lowercase(),
            type_text(other)
        ))),
    }
}

/// The bind markers of element keys and slice bounds in a selector, with the name and type of
/// each, for a prepared statement's metadata.
pub(super) fn selector_markers(
    def: &TableDef,
    s: &Selectable,
    out: &mut Vec<(Term, String, CqlType)>,
) {
    match s {
        Selectable::Element { selectable, key } => {
            selector_markers(def, selectable, out);
            if let Ok(of) = compile_typed(def, selectable)
                && let Ok((ty, name)) = element_key(selectable, &of.ty, "Element")
            {
                out.push((key.clone(), name, ty));
            }
        }
        Selectable::Slice {
            selectable,
            from,
            to,
        } => {
            selector_markers(def, selectable, out);
            if let Ok(of) = compile_typed(def, selectable)
                && let Ok((ty, name)) = element_key(selectable, &of.ty, "Slice")
            {
                for bound in [from, to].into_iter().flatten() {
                    out.push((bound.clone(), name.clone(), ty.clone()));
                }
            }
        }
        Selectable::Field { selectable, .. } | Selectable::Cast { selectable, .. } => {
            selector_markers(def, selectable, out)
        }
        // `WRITETIME(s[?])`: the element's key.
        Selectable::Writetime { column, .. } => selector_markers(def, column, out),
        Selectable::FunctionCall { name, args } => {
            for a in args {
                selector_markers(def, a, out);
            }
            // A marker argument of a function typed by its other arguments
            // (`similarity_cosine(v, ?)`) or by the table (`token(?)`).
            let lower = super::functions::native_name(&name.name.0);
            if (lower == "token" || super::native_scalars::lookup(&lower).is_some())
                && let Ok(Computed {
                    node: Node::Call(_, compiled),
                    ..
                }) = compile_typed(def, s)
            {
                for (a, c) in args.iter().zip(&compiled) {
                    if matches!(a, Selectable::Term(_)) {
                        c.term_markers(out);
                    }
                }
            }
        }
        Selectable::Term(_)
        | Selectable::TypeHint { .. }
        | Selectable::Arithmetic { .. }
        | Selectable::Negation(_)
        | Selectable::Tuple(_)
        | Selectable::List(_)
        | Selectable::Set(_)
        | Selectable::Map(_) => {
            if let Ok(c) = compile_typed(def, s) {
                c.term_markers(out);
            }
        }
        _ => {}
    }
}

/// `s` compiled for the types of its markers: an aggregate or `WRITETIME`/`TTL` in it stands
/// for a value of its result type.
fn compile_typed(def: &TableDef, s: &Selectable) -> Result<Computed, ExecError> {
    compile_over(def, s, &mut |s| Ok(leaf_type(def, s).map(|ty| (0, ty))))
}

/// The result type of an aggregate call or of `WRITETIME`/`TTL`, which [`compile`] leaves
/// to `select.rs`.
fn leaf_type(def: &TableDef, s: &Selectable) -> Option<CqlType> {
    use super::aggregate::AggKind;
    match s {
        Selectable::CountRows => Some(CqlType::Bigint),
        Selectable::Writetime { kind, .. } => Some(match kind {
            crate::language::ast::WritetimeKind::Ttl => CqlType::Int,
            _ => CqlType::Bigint,
        }),
        Selectable::FunctionCall { name, args } if args.len() == 1 => {
            match AggKind::from_name(&name.name.0)? {
                AggKind::Count | AggKind::CountRows => Some(CqlType::Bigint),
                _ => compile_typed(def, &args[0]).ok().map(|c| c.ty),
            }
        }
        _ => None,
    }
}

/// A selector as an operand of an operation: how it fits a parameter type. Literals, bind
/// markers and `null` fit as terms do; anything else has the type it computes.
fn side<'s>(
    def: &TableDef,
    s: &'s Selectable,
    inputs: &mut Option<&mut Inputs<'_>>,
) -> Result<Side<'s>, ExecError> {
    Ok(match s {
        Selectable::Term(Term::Literal(lit)) => Side {
            text: s.to_string(),
            marker: false,
            fit: Box::new(move |p| literal_fit(lit, p)),
        },
        Selectable::Term(Term::Marker(_)) => Side {
            text: s.to_string(),
            marker: true,
            fit: Box::new(|_| Fit::Weak),
        },
        Selectable::Tuple(items) if items.len() == 1 => {
            let inner = side(def, &items[0], inputs)?;
            Side {
                text: s.to_string(),
                ..inner
            }
        }
        other => {
            let ty = compile_as(def, other, None, inputs)?.ty;
            Side::typed(column_name(other), ty)
        }
    })
}

/// An operation's failure on its values, as Cassandra's `OperationExecutionException` reaches
/// the client: a function failure.
pub(super) fn operation_failed(message: String) -> ExecError {
    ExecError::Body(ErrorBody::new(
        ErrorKind::FunctionFailure {
            keyspace: "system".into(),
            function: "operation".into(),
            arg_types: Vec::new(),
        },
        message,
    ))
}

/// Compile `s` over the columns of `def`.
pub(super) fn compile(def: &TableDef, s: &Selectable) -> Result<Computed, ExecError> {
    compile_as(def, s, None, &mut None)
}

/// Compile `s`, a selector over aggregates, whose aggregates and columns `inputs` makes
/// inputs of the computation: its value for a group is [`Computed::eval`] with the inputs'
/// values in [`Env::inputs`].
pub(super) fn compile_over(
    def: &TableDef,
    s: &Selectable,
    inputs: &mut Inputs<'_>,
) -> Result<Computed, ExecError> {
    compile_as(def, s, None, &mut Some(inputs))
}

/// Compile `s` where a value of type `expected` is wanted (an operand of an operation, a type
/// hint): a literal or bind marker takes that type; without one it has none.
fn compile_as(
    def: &TableDef,
    s: &Selectable,
    expected: Option<&CqlType>,
    inputs: &mut Option<&mut Inputs<'_>>,
) -> Result<Computed, ExecError> {
    if let Some(input) = inputs.as_deref_mut()
        && let Some((index, ty)) = input(s)?
    {
        return Ok(Computed {
            ty,
            node: Node::Input(index),
        });
    }
    match s {
        Selectable::Term(term) => {
            let Some(ty) = expected else {
                return Err(ExecError::invalid(format!(
                    "Cannot infer type for term {term} in selection clause (try using a cast to force a type)"
                )));
            };
            let fits = match term {
                Term::Literal(lit) => literal_fit(lit, ty) != Fit::No,
                Term::Marker(_) => true,
                _ => false,
            };
            if !fits {
                return Err(ExecError::invalid(format!(
                    "{term} is not of the expected type: {}",
                    type_text(ty)
                )));
            }
            Ok(Computed {
                ty: ty.clone(),
                node: Node::Term(Box::new(Arg {
                    term: term.clone(),
                    ty: ty.clone(),
                    receiver: SELECTION_MARKER.to_string(),
                    value: None,
                })),
            })
        }
        Selectable::TypeHint { ty, selectable } => {
            // Collection and tuple hints too (Cassandra 4.0's `(list<int>)[1, 2]`); user
            // types are not resolved here.
            let Some(hinted) = hint_type(ty).or_else(|| ty.to_cql_type(&|_, _| None).ok()) else {
                return Err(ExecError::invalid(format!(
                    "selector {s} is not supported by khata yet"
                )));
            };
            let inner = compile_as(def, selectable, Some(&hinted), inputs)?;
            if inner.ty != hinted {
                return Err(ExecError::invalid(format!(
                    "{selectable} is not of the expected type: {}",
                    type_text(&hinted)
                )));
            }
            Ok(inner)
        }
        Selectable::Tuple(items) if items.len() == 1 => {
            compile_as(def, &items[0], expected, inputs)
        }
        Selectable::Tuple(_) | Selectable::List(_) | Selectable::Set(_) | Selectable::Map(_) => {
            compile_composite(def, s, expected, inputs)
        }
        Selectable::Arithmetic { op, left, right } => {
            let l = side(def, left, inputs)?;
            let r = side(def, right, inputs)?;
            let sig = resolve(*op, &l, &r, None).map_err(ExecError::invalid)?;
            let l = compile_as(def, left, Some(&sig.left), inputs)?;
            let r = compile_as(def, right, Some(&sig.right), inputs)?;
            Ok(Computed {
                ty: sig.result,
                node: Node::Op(*op, Box::new([l, r])),
            })
        }
        Selectable::Negation(inner) => {
            let (p, result) =
                resolve_negation(&side(def, inner, inputs)?, None).map_err(ExecError::invalid)?;
            let inner = compile_as(def, inner, Some(&p), inputs)?;
            Ok(Computed {
                ty: result,
                node: Node::Negate(Box::new(inner)),
            })
        }
        Selectable::Column(n) => {
            let c = def
                .column(&n.0)
                .ok_or_else(|| ExecError::invalid(format!("Undefined column name {}", n.0)))?;
            Ok(Computed {
                ty: c.ty.clone(),
                node: Node::Column(c.clone()),
            })
        }
        Selectable::Cast { selectable, ty } => {
            let of = compile_as(def, selectable, None, inputs)?;
            let to = ty.cql_type();
            if !super::select::castable(&of.ty, &to) {
                let mut read = Vec::new();
                of.columns(&mut read);
                let name = read
                    .first()
                    .map_or_else(|| column_name(selectable), |c| c.name.clone());
                return Err(ExecError::invalid(format!(
                    "{name} cannot be cast to {}",
                    type_text(&to)
                )));
            }
            if of.ty == to {
                // A cast to the value's own type is the value (Cassandra's `WithCast`).
                return Ok(of);
            }
            Ok(Computed {
                ty: to,
                node: Node::Cast(Box::new(of)),
            })
        }
        Selectable::Field { selectable, field } => {
            let of = compile_as(def, selectable, None, inputs)?;
            let CqlType::Udt { fields, .. } = &of.ty else {
                return Err(ExecError::invalid(format!(
                    "Invalid field selection: {selectable} of type {} is not a user type",
                    type_text(&of.ty)
                )));
            };
            let Some(index) = fields.iter().position(|(n, _)| *n == field.0) else {
                return Err(ExecError::invalid(format!(
                    "{} of type {} has no field {}",
                    selectable,
                    type_text(&of.ty),
                    field.0
                )));
            };
            Ok(Computed {
                ty: fields[index].1.clone(),
                node: Node::Field(Box::new(of), index),
            })
        }
        Selectable::Element { selectable, key } => {
            let of = compile_as(def, selectable, None, inputs)?;
            let (key_ty, receiver) = element_key(selectable, &of.ty, "Element")?;
            let ty = match &of.ty {
                CqlType::Map { value, .. } => value.as_ref().clone(),
                _ => key_ty.clone(),
            };
            Ok(Computed {
                ty,
                node: Node::Element(
                    Box::new(of),
                    Box::new(Arg {
                        term: key.clone(),
                        ty: key_ty,
                        receiver,
                        value: None,
                    }),
                ),
            })
        }
        Selectable::Slice {
            selectable,
            from,
            to,
        } => {
            let of = compile_as(def, selectable, None, inputs)?;
            let (key_ty, receiver) = element_key(selectable, &of.ty, "Slice")?;
            let arg = |t: &Option<Term>| {
                t.as_ref().map(|term| Arg {
                    term: term.clone(),
                    ty: key_ty.clone(),
                    receiver: receiver.clone(),
                    value: None,
                })
            };
            let bounds = Box::new([arg(from), arg(to)]);
            Ok(Computed {
                ty: of.ty.clone(),
                node: Node::Slice(Box::new(of), bounds),
            })
        }
        Selectable::FunctionCall { name, args } => {
            let lower = super::functions::native_name(&name.name.0);
            if lower == "token" {
                return compile_token(def, args, inputs);
            }
            if let Some(f) = super::native_scalars::lookup(&lower) {
                let (args, ty) = super::native_scalars::compile(f, args, &mut |a: &Selectable,
                                                                               want: Option<
                    &CqlType,
                >| {
                    compile_as(def, a, want, inputs)
                })?;
                return Ok(Computed {
                    ty,
                    node: Node::Call(Scalar::Native(f), args),
                });
            }
            // The parameter type of the functions that have one overload, which a literal or
            // bind marker argument takes (`intAsBlob(5)`, `blobAsInt(?)`).
            let parameter = if let Some(ty) = lower.strip_suffix("asblob").and_then(native) {
                Some(ty)
            } else if lower.starts_with("blobas") {
                Some(CqlType::Blob)
            } else if lower == "mintimeuuid" || lower == "maxtimeuuid" {
                Some(CqlType::Timestamp)
            } else {
                None
            };
            let args = args
                .iter()
                .map(|a| compile_as(def, a, parameter.as_ref(), inputs))
                .collect::<Result<Vec<_>, _>>()?;
            let arity = |n: usize| -> Result<(), ExecError> {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(ExecError::invalid(format!(
                        "Invalid number of arguments in call to function system.{lower}: {n} required but {} provided",
                        args.len()
                    )))
                }
            };
            let argument_type = |allowed: &[CqlType], expected: &str| -> Result<(), ExecError> {
                if allowed.contains(&args[0].ty) {
                    Ok(())
                } else {
                    Err(ExecError::invalid(format!(
                        "Type error: {} cannot be passed as argument 0 of function system.{lower} of type {expected}",
                        type_text(&args[0].ty)
                    )))
                }
            };
            let times = [CqlType::Timeuuid, CqlType::Timestamp, CqlType::Date];
            let (scalar, ty) = match lower.as_str() {
                "now" | "currenttimeuuid" => (Scalar::Now, CqlType::Timeuuid),
                "uuid" => (Scalar::Uuid, CqlType::Uuid),
                "currenttimestamp" => (Scalar::CurrentTimestamp, CqlType::Timestamp),
                "currentdate" => (Scalar::CurrentDate, CqlType::Date),
                "currenttime" => (Scalar::CurrentTime, CqlType::Time),
                "totimestamp" | "dateof" => {
                    arity(1)?;
                    argument_type(&times, "timeuuid")?;
                    (Scalar::ToTimestamp, CqlType::Timestamp)
                }
                "todate" => {
                    arity(1)?;
                    argument_type(&times, "timeuuid")?;
                    (Scalar::ToDate, CqlType::Date)
                }
                "tounixtimestamp" | "unixtimestampof" => {
                    arity(1)?;
                    argument_type(&times, "timeuuid")?;
                    (Scalar::ToUnixTimestamp, CqlType::Bigint)
                }
                "mintimeuuid" | "maxtimeuuid" => {
                    arity(1)?;
                    argument_type(&[CqlType::Timestamp], "timestamp")?;
                    let f = if lower == "mintimeuuid" {
                        Scalar::MinTimeuuid
                    } else {
                        Scalar::MaxTimeuuid
                    };
                    (f, CqlType::Timeuuid)
                }
                "tojson" => {
                    arity(1)?;
                    (Scalar::ToJson, CqlType::Text)
                }
                "fromjson" => {
                    return Err(ExecError::invalid(
                        "fromJson() cannot be used in the selection clause of a SELECT statement",
                    ));
                }
                other => {
                    if let Some(ty) = other.strip_suffix("asblob").and_then(native) {
                        arity(1)?;
                        argument_type(std::slice::from_ref(&ty), &type_text(&ty))?;
                        (Scalar::AsBlob, CqlType::Blob)
                    } else if let Some(ty) = other.strip_prefix("blobas").and_then(native) {
                        arity(1)?;
                        argument_type(&[CqlType::Blob], "blob")?;
                        (Scalar::BlobAs, ty)
                    } else {
                        return Err(ExecError::invalid(format!(
                            "Unknown function {} called with {} arguments",
                            name,
                            args.len()
                        )));
                    }
                }
            };
            if matches!(
                scalar,
                Scalar::Now
                    | Scalar::Uuid
                    | Scalar::CurrentTimestamp
                    | Scalar::CurrentDate
                    | Scalar::CurrentTime
            ) {
                arity(0)?;
            }
            Ok(Computed {
                ty,
                node: Node::Call(scalar, args),
            })
        }
        other => Err(ExecError::invalid(format!(
            "selector {other} is not supported by khata yet"
        ))),
    }
}

/// A list, set, map or tuple of selectors, as Cassandra 4.0's `ListSelector`, `SetSelector`,
/// `MapSelector` and `TupleSelector`: each element takes the type `expected` gives it (a type
/// hint), or has its own; unhinted, the elements of a collection must agree on their type.
fn compile_composite(
    def: &TableDef,
    s: &Selectable,
    expected: Option<&CqlType>,
    inputs: &mut Option<&mut Inputs<'_>>,
) -> Result<Computed, ExecError> {
    let mismatch = || {
        ExecError::invalid(match expected {
            Some(ty) => format!("{s} is not of the expected type: {}", type_text(ty)),
            None => format!(
                "Cannot infer type for term {s} in selection clause (try using a cast to force a type)"
            ),
        })
    };
    // The elements compiled each as `want` gives, and the one type they share.
    let mut same = |items: &[&Selectable],
                    want: Option<&CqlType>|
     -> Result<(Vec<Computed>, Option<CqlType>), ExecError> {
        // Unhinted, literals and markers take the type of the first element that has one
        // (Cassandra's `getExactListTypeIfKnown`).
        let known = match want {
            Some(ty) => Some(ty.clone()),
            None => items
                .iter()
                .find_map(|i| compile_as(def, i, None, inputs).ok().map(|c| c.ty)),
        };
        let compiled = items
            .iter()
            .map(|i| compile_as(def, i, known.as_ref(), inputs))
            .collect::<Result<Vec<_>, _>>()?;
        let ty = match compiled.first() {
            Some(first) if compiled.iter().all(|c| c.ty == first.ty) => Some(first.ty.clone()),
            Some(_) => return Err(mismatch()),
            None => want.cloned(),
        };
        Ok((compiled, ty))
    };
    let (elements, ty) = match (s, expected) {
        (Selectable::Tuple(items), want) => {
            let fields = match want {
                Some(CqlType::Tuple(fields)) if fields.len() == items.len() => Some(fields),
                Some(_) => return Err(mismatch()),
                None => None,
            };
            let elements = items
                .iter()
                .enumerate()
                .map(|(i, item)| compile_as(def, item, fields.map(|f| &f[i]), inputs))
                .collect::<Result<Vec<_>, _>>()?;
            let ty = CqlType::Tuple(elements.iter().map(|e| e.ty.clone()).collect());
            (elements, ty)
        }
        // `[1, 2]` where a `vector<float, 2>` is wanted.
        (Selectable::List(items), Some(CqlType::Vector { element, dimension })) => {
            if items.len() != *dimension as usize {
                return Err(mismatch());
            }
            let (elements, _) = same(&items.iter().collect::<Vec<_>>(), Some(element))?;
            (elements, expected.cloned().ok_or_else(mismatch)?)
        }
        (Selectable::List(items), want) => {
            let element = match want {
                Some(CqlType::List { element, .. }) => Some(element.as_ref()),
                Some(_) => return Err(mismatch()),
                None => None,
            };
            let (elements, ty) = same(&items.iter().collect::<Vec<_>>(), element)?;
            let ty = match expected {
                Some(ty) => ty.clone(),
                None => CqlType::List {
                    element: Box::new(ty.ok_or_else(mismatch)?),
                    frozen: true,
                },
            };
            (elements, ty)
        }
        // `{}` is an empty set where a set is wanted.
        (Selectable::Set(_), Some(CqlType::Set { element, .. }))
        | (Selectable::Map(_), Some(CqlType::Set { element, .. })) => {
            let items: Vec<&Selectable> = match s {
                Selectable::Set(items) => items.iter().collect(),
                Selectable::Map(pairs) if pairs.is_empty() => Vec::new(),
                _ => return Err(mismatch()),
            };
            let (elements, _) = same(&items, Some(element))?;
            (elements, expected.cloned().ok_or_else(mismatch)?)
        }
        (Selectable::Set(items), None) => {
            let (elements, ty) = same(&items.iter().collect::<Vec<_>>(), None)?;
            let ty = CqlType::Set {
                element: Box::new(ty.ok_or_else(mismatch)?),
                frozen: true,
            };
            (elements, ty)
        }
        (Selectable::Map(pairs), want) => {
            let (key, value) = match want {
                Some(CqlType::Map { key, value, .. }) => (Some(key.as_ref()), Some(value.as_ref())),
                Some(_) => return Err(mismatch()),
                None => (None, None),
            };
            let keys: Vec<&Selectable> = pairs.iter().map(|(k, _)| k).collect();
            let values: Vec<&Selectable> = pairs.iter().map(|(_, v)| v).collect();
            let (keys, key_ty) = same(&keys, key)?;
            let (values, value_ty) = same(&values, value)?;
            let ty = match expected {
                Some(ty) => ty.clone(),
                None => CqlType::Map {
                    key: Box::new(key_ty.ok_or_else(mismatch)?),
                    value: Box::new(value_ty.ok_or_else(mismatch)?),
                    frozen: true,
                },
            };
            let elements = keys
                .into_iter()
                .zip(values)
                .flat_map(|(k, v)| [k, v])
                .collect();
            (elements, ty)
        }
        _ => return Err(mismatch()),
    };
    Ok(Computed {
        ty,
        node: Node::Compose(elements),
    })
}

/// The value of a list, set, map or tuple of type `ty` from its elements' values (a map's keys
/// and values alternating): sets and maps sorted and without duplicate keys. A null in a
/// collection is refused, as Cassandra refuses it in a collection literal.
fn compose(
    ty: &CqlType,
    parts: &[Computed],
    values: Vec<Option<Bytes>>,
) -> Result<Bytes, ExecError> {
    let decode = |c: &Computed, v: Option<Bytes>| -> Result<Option<CqlValue>, ExecError> {
        v.map(|b| {
            CqlValue::deserialize(&c.ty, &b).map_err(|e| {
                ExecError::invalid(format!("Invalid value for {}: {e}", type_text(&c.ty)))
            })
        })
        .transpose()
    };
    let mut decoded = Vec::with_capacity(values.len());
    for (c, v) in parts.iter().zip(values) {
        decoded.push(decode(c, v)?);
    }
    if let CqlType::Tuple(_) = ty {
        return Ok(Bytes::from(CqlValue::Tuple(decoded).to_bytes(ty)));
    }
    let decoded: Vec<CqlValue> = decoded
        .into_iter()
        .map(|v| v.ok_or_else(|| ExecError::invalid("null is not supported inside collections")))
        .collect::<Result<_, _>>()?;
    let value = match ty {
        CqlType::List { .. } => CqlValue::List(decoded),
        CqlType::Vector { .. } => CqlValue::Vector(decoded),
        CqlType::Set { element, .. } => {
            let mut items = decoded;
            items.sort_by(|a, b| crate::value::compare(element, a, b));
            items.dedup_by(|a, b| crate::value::compare(element, a, b).is_eq());
            CqlValue::Set(items)
        }
        CqlType::Map { key, .. } => {
            let mut entries: Vec<(CqlValue, CqlValue)> = Vec::new();
            let mut it = decoded.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                // A later entry of a key replaces an earlier one.
                entries.retain(|(e, _)| !crate::value::compare(key, e, &k).is_eq());
                entries.push((k, v));
            }
            entries.sort_by(|a, b| crate::value::compare(key, &a.0, &b.0));
            CqlValue::Map(entries)
        }
        other => {
            return Err(ExecError::invalid(format!(
                "a selector of type {} is not supported by khata yet",
                type_text(other)
            )));
        }
    };
    Ok(Bytes::from(value.to_bytes(ty)))
}

/// The result column name Cassandra gives a computed selector: `system.f(args)` for a function,
/// `s.field` for a field.
pub(super) fn column_name(s: &Selectable) -> String {
    match s {
        Selectable::Column(n) => n.0.clone(),
        Selectable::CountRows => "count".to_string(),
        Selectable::Cast { selectable, ty } => format!(
            "cast({} as {})",
            column_name(selectable),
            type_text(&ty.cql_type())
        ),
        Selectable::Writetime { kind, column } => {
            let f = match kind {
                crate::language::ast::WritetimeKind::Ttl => "ttl",
                _ => "writetime",
            };
            format!("{f}({})", column_name(column))
        }
        Selectable::Field { selectable, field } => {
            format!("{}.{}", column_name(selectable), field.0)
        }
        Selectable::Element { selectable, key } => format!("{}[{key}]", column_name(selectable)),
        Selectable::Slice {
            selectable,
            from,
            to,
        } => {
            let bound = |t: &Option<Term>| t.as_ref().map(|t| t.to_string()).unwrap_or_default();
            format!(
                "{}[{}..{}]",
                column_name(selectable),
                bound(from),
                bound(to)
            )
        }
        Selectable::FunctionCall { name, args } => {
            let args: Vec<String> = args.iter().map(column_name).collect();
            format!(
                "system.{}({})",
                name.name.0.to_ascii_lowercase(),
                args.join(", ")
            )
        }
        Selectable::Arithmetic { op, left, right } => format!(
            "{} {} {}",
            column_name(left),
            op.symbol(),
            column_name(right)
        ),
        Selectable::Negation(inner) => format!("-{}", column_name(inner)),
        Selectable::TypeHint { ty, selectable } => format!("({ty}){}", column_name(selectable)),
        Selectable::Tuple(items) => {
            let items: Vec<String> = items.iter().map(column_name).collect();
            format!("({})", items.join(", "))
        }
        Selectable::List(items) => {
            let items: Vec<String> = items.iter().map(column_name).collect();
            format!("[{}]", items.join(", "))
        }
        Selectable::Set(items) => {
            let items: Vec<String> = items.iter().map(column_name).collect();
            format!("{{{}}}", items.join(", "))
        }
        Selectable::Map(pairs) => {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(k, v)| format!("{}: {}", column_name(k), column_name(v)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
        other => other.to_string(),
    }
}

impl Computed {
    /// The columns the selector reads (Cassandra's `Selector.addColumnMapping`), in order.
    pub(super) fn columns<'a>(&'a self, out: &mut Vec<&'a ColumnDef>) {
        match &self.node {
            Node::Column(c) => out.push(c),
            Node::Field(of, _)
            | Node::Element(of, _)
            | Node::Slice(of, _)
            | Node::Negate(of)
            | Node::Cast(of) => of.columns(out),
            Node::Call(_, args) => args.iter().for_each(|a| a.columns(out)),
            Node::Op(_, operands) => operands.iter().for_each(|a| a.columns(out)),
            Node::Compose(parts) => parts.iter().for_each(|a| a.columns(out)),
            Node::Term(_) | Node::Input(_) => {}
        }
    }

    /// Whether the selector has element keys or slice bounds to bind before it is evaluated.
    pub(super) fn has_args(&self) -> bool {
        match &self.node {
            Node::Column(_) | Node::Input(_) => false,
            Node::Field(of, _) | Node::Cast(of) => of.has_args(),
            Node::Call(_, args) | Node::Compose(args) => args.iter().any(Computed::has_args),
            Node::Op(_, operands) => operands.iter().any(Computed::has_args),
            Node::Negate(of) => of.has_args(),
            Node::Element(..) | Node::Slice(..) | Node::Term(_) => true,
        }
    }

    /// The bind markers of the selector's terms, with the name and type of each.
    fn term_markers(&self, out: &mut Vec<(Term, String, CqlType)>) {
        match &self.node {
            Node::Term(arg) => out.push((arg.term.clone(), arg.receiver.clone(), arg.ty.clone())),
            Node::Op(_, operands) => operands.iter().for_each(|o| o.term_markers(out)),
            Node::Negate(of) | Node::Field(of, _) | Node::Cast(of) => of.term_markers(out),
            Node::Call(_, args) | Node::Compose(args) => {
                args.iter().for_each(|a| a.term_markers(out))
            }
            _ => {}
        }
    }

    /// A copy with its element keys and slice bounds bound for one execution: `bind` gives a
    /// term's value for a receiver name and type (`None` for an unset value, which opens a
    /// slice bound and is refused as an element key).
    pub(super) fn bind(&self, bind: &mut BindArg<'_>) -> Result<Computed, ExecError> {
        // An element key or slice bound: never null, unset opens a slice bound.
        fn bind_arg(a: &Arg, bind: &mut BindArg<'_>) -> Result<Arg, ExecError> {
            let value = match bind(&a.term, &a.ty, &a.receiver)? {
                Bound::Value(b) => Some(b),
                Bound::Unset => None,
                Bound::Null => {
                    return Err(ExecError::invalid(format!(
                        "Invalid null value for {}",
                        a.receiver
                    )));
                }
            };
            Ok(Arg { value, ..a.clone() })
        }
        let node = match &self.node {
            Node::Column(c) => Node::Column(c.clone()),
            Node::Field(of, i) => Node::Field(Box::new(of.bind(bind)?), *i),
            Node::Call(f, args) => Node::Call(
                *f,
                args.iter()
                    .map(|a| a.bind(bind))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Element(of, key) => {
                let of = of.bind(bind)?;
                let key = bind_arg(key, bind)?;
                if key.value.is_none() {
                    return Err(ExecError::invalid(format!(
                        "Invalid unset value for {}",
                        key.receiver
                    )));
                }
                Node::Element(Box::new(of), Box::new(key))
            }
            Node::Slice(of, bounds) => {
                let of = of.bind(bind)?;
                let [from, to] = bounds.as_ref();
                let from = from.as_ref().map(|a| bind_arg(a, bind)).transpose()?;
                let to = to.as_ref().map(|a| bind_arg(a, bind)).transpose()?;
                Node::Slice(Box::new(of), Box::new([from, to]))
            }
            Node::Term(arg) => {
                let value = match bind(&arg.term, &arg.ty, &arg.receiver)? {
                    Bound::Value(b) => Some(b),
                    Bound::Null => None,
                    Bound::Unset => {
                        return Err(ExecError::invalid(format!(
                            "Invalid unset value for {}",
                            arg.receiver
                        )));
                    }
                };
                Node::Term(Box::new(Arg {
                    value,
                    ..arg.as_ref().clone()
                }))
            }
            Node::Op(op, operands) => {
                let [l, r] = operands.as_ref();
                Node::Op(*op, Box::new([l.bind(bind)?, r.bind(bind)?]))
            }
            Node::Negate(of) => Node::Negate(Box::new(of.bind(bind)?)),
            Node::Cast(of) => Node::Cast(Box::new(of.bind(bind)?)),
            Node::Input(i) => Node::Input(*i),
            Node::Compose(parts) => Node::Compose(
                parts
                    .iter()
                    .map(|a| a.bind(bind))
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Computed {
            node,
            ty: self.ty.clone(),
        })
    }

    /// The value for one row; `column` gives a column's value in it (`None` for null).
    pub(super) fn eval(
        &self,
        env: Env<'_>,
        column: &dyn Fn(&ColumnDef) -> Option<Bytes>,
    ) -> Result<Option<Bytes>, ExecError> {
        Ok(match &self.node {
            Node::Column(c) => column(c),
            Node::Field(of, index) => match of.eval(env, column)? {
                Some(value) => udt_field(&value, *index),
                None => None,
            },
            Node::Element(of, key) => match (of.eval(env, column)?, &key.value) {
                (Some(collection), Some(key)) => element(&of.ty, &collection, key),
                _ => None,
            },
            Node::Slice(of, bounds) => match of.eval(env, column)? {
                Some(collection) => slice(
                    &of.ty,
                    &collection,
                    bounds[0].as_ref().and_then(|a| a.value.as_ref()),
                    bounds[1].as_ref().and_then(|a| a.value.as_ref()),
                ),
                None => None,
            },
            Node::Call(f, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(env, column)?);
                }
                call(env, *f, args, values, &self.ty)?
            }
            Node::Term(arg) => arg.value.clone(),
            Node::Op(op, operands) => {
                let [l, r] = operands.as_ref();
                let (Some(lv), Some(rv)) = (l.eval(env, column)?, r.eval(env, column)?) else {
                    return Ok(None);
                };
                let decode = |c: &Computed, b: &[u8]| {
                    CqlValue::deserialize(&c.ty, b).map_err(|e| {
                        ExecError::invalid(format!("Invalid value for {}: {e}", type_text(&c.ty)))
                    })
                };
                let (lv, rv) = (decode(l, &lv)?, decode(r, &rv)?);
                let value = apply_arithmetic(*op, &lv, &rv, &self.ty)
                    .map_err(|reason| operation_failed(failure(*op, &l.ty, &r.ty, &reason)))?;
                Some(Bytes::from(value.to_bytes(&self.ty)))
            }
            Node::Negate(of) => match of.eval(env, column)? {
                Some(b) => {
                    let v = CqlValue::deserialize(&of.ty, &b)
                        .map_err(|e| ExecError::invalid(e.to_string()))?;
                    let value = negate_number(&v).map_err(ExecError::invalid)?;
                    Some(Bytes::from(value.to_bytes(&self.ty)))
                }
                None => None,
            },
            Node::Cast(of) => match of.eval(env, column)? {
                Some(b) => super::select::cast(&of.ty, &self.ty, &b),
                None => None,
            },
            Node::Input(i) => env.inputs.get(*i).cloned().flatten(),
            Node::Compose(parts) => {
                let mut values = Vec::with_capacity(parts.len());
                for p in parts {
                    values.push(p.eval(env, column)?);
                }
                Some(compose(&self.ty, parts, values)?)
            }
        })
    }
}

/// Field `index` of a serialized user type value (`[int length][bytes]` per field; a value
/// written before fields were added has fewer).
fn udt_field(value: &[u8], index: usize) -> Option<Bytes> {
    let mut rest = value;
    for i in 0.. {
        let len = i32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
        rest = &rest[4..];
        let field = if len < 0 {
            None
        } else {
            let len = len as usize;
            let bytes = rest.get(..len)?;
            rest = &rest[len..];
            Some(bytes)
        };
        if i == index {
            return field.map(Bytes::copy_from_slice);
        }
    }
    None
}

/// The value of `key` in a serialized map, or `key` itself if a serialized set holds it.
pub(super) fn element(ty: &CqlType, collection: &[u8], key: &[u8]) -> Option<Bytes> {
    match (ty, CqlValue::deserialize(ty, collection).ok()?) {
        (
            CqlType::Map {
                key: kt, value: vt, ..
            },
            CqlValue::Map(entries),
        ) => {
            let key = CqlValue::deserialize(kt, key).ok()?;
            entries
                .into_iter()
                .find(|(k, _)| crate::value::compare(kt, k, &key).is_eq())
                .map(|(_, v)| Bytes::from(v.to_bytes(vt)))
        }
        (CqlType::Set { element, .. }, CqlValue::Set(items)) => {
            let key = CqlValue::deserialize(element, key).ok()?;
            items
                .iter()
                .any(|e| crate::value::compare(element, e, &key).is_eq())
                .then(|| Bytes::copy_from_slice(&key.to_bytes(element)))
        }
        _ => None,
    }
}

/// The entries of a serialized map or set whose keys lie between `from` and `to`, both
/// inclusive and either open. Nothing in the slice is null for a non-frozen collection and an
/// empty collection for a frozen one, as in Cassandra.
fn slice(
    ty: &CqlType,
    collection: &[u8],
    from: Option<&Bytes>,
    to: Option<&Bytes>,
) -> Option<Bytes> {
    let key_ty = match ty {
        CqlType::Map { key, .. } => key.as_ref(),
        CqlType::Set { element, .. } => element.as_ref(),
        _ => return None,
    };
    let from = match from {
        Some(b) => Some(CqlValue::deserialize(key_ty, b).ok()?),
        None => None,
    };
    let to = match to {
        Some(b) => Some(CqlValue::deserialize(key_ty, b).ok()?),
        None => None,
    };
    let within = |k: &CqlValue| {
        from.as_ref()
            .is_none_or(|f| crate::value::compare(key_ty, k, f).is_ge())
            && to
                .as_ref()
                .is_none_or(|t| crate::value::compare(key_ty, k, t).is_le())
    };
    let (value, empty) = match CqlValue::deserialize(ty, collection).ok()? {
        CqlValue::Map(entries) => {
            let kept: Vec<_> = entries.into_iter().filter(|(k, _)| within(k)).collect();
            let empty = kept.is_empty();
            (CqlValue::Map(kept), empty)
        }
        CqlValue::Set(items) => {
            let kept: Vec<_> = items.into_iter().filter(|k| within(k)).collect();
            let empty = kept.is_empty();
            (CqlValue::Set(kept), empty)
        }
        _ => return None,
    };
    if empty && ty.is_multi_cell() {
        return None;
    }
    Some(Bytes::from(value.to_bytes(ty)))
}

fn millis_of(ty: &CqlType, value: &[u8]) -> Option<i64> {
    match ty {
        CqlType::Timeuuid => uuid_millis(&uuid::Uuid::from_slice(value).ok()?),
        CqlType::Timestamp => Some(i64::from_be_bytes(value.try_into().ok()?)),
        CqlType::Date => Some(date_millis(u32::from_be_bytes(value.try_into().ok()?))),
        _ => None,
    }
}

/// `token(a, b, ...)` of terms or other selectors: Cassandra's `system.token`, whose
/// parameters are the partition key's types in its order.
fn compile_token(
    def: &TableDef,
    args: &[Selectable],
    inputs: &mut Option<&mut Inputs<'_>>,
) -> Result<Computed, ExecError> {
    let key = def.partition_key();
    if args.len() != key.len() {
        return Err(ExecError::invalid(format!(
            "Invalid number of arguments in call to function system.token: {} required but {} provided",
            key.len(),
            args.len()
        )));
    }
    let mut compiled = Vec::with_capacity(args.len());
    for (i, (a, c)) in args.iter().zip(&key).enumerate() {
        let arg = compile_as(def, a, Some(&c.ty), inputs)?;
        if arg.ty != c.ty && !crate::value::value_compatible(&c.ty, &arg.ty) {
            return Err(ExecError::invalid(format!(
                "Type error: {a} cannot be passed as argument {i} of function system.token of type {}",
                type_text(&c.ty)
            )));
        }
        compiled.push(arg);
    }
    Ok(Computed {
        ty: CqlType::Bigint,
        node: Node::Call(Scalar::Token, compiled),
    })
}

fn call(
    env: Env<'_>,
    f: Scalar,
    args: &[Computed],
    values: Vec<Option<Bytes>>,
    ty: &CqlType,
) -> Result<Option<Bytes>, ExecError> {
    let now_millis = env.now_micros / 1000;
    let bytes = |v: CqlValue| Some(Bytes::from(v.to_bytes(ty)));
    if let Scalar::Native(native) = f {
        return super::native_scalars::eval(native, args, values, ty);
    }
    if f == Scalar::Token {
        let Some(components) = values.into_iter().collect::<Option<Vec<Bytes>>>() else {
            return Ok(None);
        };
        let parts: Vec<&[u8]> = components.iter().map(|b| &b[..]).collect();
        let key = khata_types::token::serialize_partition_key(&parts)
            .map_err(|e| ExecError::invalid(e.to_string()))?;
        return Ok(bytes(CqlValue::Bigint(
            khata_types::token::Token::of(&key).0,
        )));
    }
    let first = values.into_iter().next().flatten();
    Ok(match f {
        Scalar::Now => bytes(CqlValue::Timeuuid(env.coordinator.timeuuid())),
        Scalar::Uuid => bytes(CqlValue::Uuid(env.coordinator.random_uuid())),
        Scalar::CurrentTimestamp => bytes(CqlValue::Timestamp(now_millis)),
        Scalar::CurrentDate => bytes(CqlValue::Date(days(now_millis))),
        Scalar::CurrentTime => bytes(CqlValue::Time(
            now_millis.rem_euclid(86_400_000) * 1_000_000,
        )),
        Scalar::ToTimestamp | Scalar::ToDate | Scalar::ToUnixTimestamp => {
            let Some(millis) = first.and_then(|v| millis_of(&args[0].ty, &v)) else {
                return Ok(None);
            };
            match f {
                Scalar::ToTimestamp => bytes(CqlValue::Timestamp(millis)),
                Scalar::ToDate => bytes(CqlValue::Date(days(millis))),
                _ => bytes(CqlValue::Bigint(millis)),
            }
        }
        Scalar::MinTimeuuid | Scalar::MaxTimeuuid => {
            let Some(millis) = first.and_then(|v| millis_of(&CqlType::Timestamp, &v)) else {
                return Ok(None);
            };
            let u = super::functions::bounding_timeuuid(millis, f == Scalar::MaxTimeuuid);
            bytes(CqlValue::Timeuuid(u))
        }
        Scalar::AsBlob => first,
        Scalar::BlobAs => match first {
            Some(b) => {
                if let Err(e) = CqlValue::deserialize(ty, &b) {
                    return Err(ExecError::invalid(format!(
                        "In call to function system.blobas{}, value 0x{} is not a valid binary representation for type {}: {e}",
                        type_text(ty),
                        hex(&b),
                        type_text(ty)
                    )));
                }
                Some(b)
            }
            None => None,
        },
        Scalar::Native(_) | Scalar::Token => None,
        Scalar::ToJson => {
            let mut text = String::new();
            match first.and_then(|b| CqlValue::deserialize(&args[0].ty, &b).ok()) {
                Some(v) => crate::value::json::write_value(&args[0].ty, &v, &mut text),
                None => text.push_str("null"),
            }
            Some(Bytes::from(text))
        }
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
