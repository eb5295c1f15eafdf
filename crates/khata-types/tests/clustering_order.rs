//! The clustering key encoding orders keys as CQL does, round-trips (numbers to their
//! canonical form, tuples and UDTs with all their fields, everything else exactly), and its
//! bounds select exactly the keys that extend a prefix.
//!
//! `reference_cmp` below is a direct implementation of Cassandra's comparators on the
//! CQL-serialized values (with the tie-breaks documented in `khata_types::clustering`; none for
//! numbers, nor for tuples and UDTs with and without trailing nulls, whose equal values share
//! one encoding); the properties check
//! `memcmp(encode(a), encode(b)) == reference_cmp(a, b)` over random type lists with mixed ASC
//! and DESC columns, values drawn from small domains so that ties and shared prefixes are
//! common, and prefixes of keys.

use std::cmp::Ordering;

use bytes::Bytes;
use khata_types::clustering::{
    Bound, KeyError, after_prefix, decode_key, encode_key, end_bound, full_range, start_bound,
};
use khata_types::schema::{ClusteringOrder, CqlType};
use proptest::prelude::*;

type Types = Vec<(CqlType, ClusteringOrder)>;
type Key = Vec<Vec<u8>>;

// ---------------------------------------------------------------------------------------------
// CQL serialization helpers.

fn ser_elements(count: usize, elements: &[Vec<u8>]) -> Vec<u8> {
    let mut out = (count as i32).to_be_bytes().to_vec();
    for e in elements {
        out.extend_from_slice(&(e.len() as i32).to_be_bytes());
        out.extend_from_slice(e);
    }
    out
}

fn ser_tuple(fields: &[Option<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        match f {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(v);
            }
        }
    }
    out
}

fn parse_elements(v: &[u8]) -> Vec<Option<&[u8]>> {
    let mut out = Vec::new();
    let mut rest = v;
    while rest.len() >= 4 {
        let len = i32::from_be_bytes(rest[..4].try_into().unwrap());
        rest = &rest[4..];
        if len < 0 {
            out.push(None);
        } else {
            out.push(Some(&rest[..len as usize]));
            rest = &rest[len as usize..];
        }
    }
    out
}

fn parse_collection(v: &[u8]) -> Vec<&[u8]> {
    parse_elements(&v[4..])
        .into_iter()
        .map(|e| e.unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The reference comparator.

fn sign_extend(v: &[u8], len: usize) -> Vec<u8> {
    let fill = if v[0] >= 0x80 { 0xFF } else { 0x00 };
    let mut out = vec![fill; len - v.len()];
    out.extend_from_slice(v);
    out
}

/// Numeric comparison of two two's complement integers of any lengths.
fn cmp_integers(a: &[u8], b: &[u8]) -> Ordering {
    let len = a.len().max(b.len());
    let (mut a, mut b) = (sign_extend(a, len), sign_extend(b, len));
    a[0] ^= 0x80;
    b[0] ^= 0x80;
    a.cmp(&b)
}

fn magnitude(v: &[u8]) -> Vec<u8> {
    let mut m = v.to_vec();
    if v[0] >= 0x80 {
        for b in &mut m {
            *b = !*b;
        }
        for b in m.iter_mut().rev() {
            let (s, c) = b.overflowing_add(1);
            *b = s;
            if !c {
                break;
            }
        }
        m.insert(0, 0);
    }
    m
}

fn times_ten(m: &mut Vec<u8>) {
    let mut carry = 0u16;
    for b in m.iter_mut().rev() {
        let x = u16::from(*b) * 10 + carry;
        *b = x as u8;
        carry = x >> 8;
    }
    if carry > 0 {
        m.insert(0, carry as u8);
    }
}

fn cmp_unsigned(a: &[u8], b: &[u8]) -> Ordering {
    let strip = |v: &[u8]| v[v.iter().position(|x| *x != 0).unwrap_or(v.len())..].to_vec();
    let (a, b) = (strip(a), strip(b));
    a.len().cmp(&b.len()).then_with(|| a.cmp(&b))
}

fn integer_sign(v: &[u8]) -> i32 {
    if v[0] >= 0x80 {
        -1
    } else if v.iter().all(|b| *b == 0) {
        0
    } else {
        1
    }
}

/// `BigDecimal.compareTo`.
fn cmp_decimals(a: &[u8], b: &[u8]) -> Ordering {
    let (sa, ua) = (i32::from_be_bytes(a[..4].try_into().unwrap()), &a[4..]);
    let (sb, ub) = (i32::from_be_bytes(b[..4].try_into().unwrap()), &b[4..]);
    let (ga, gb) = (integer_sign(ua), integer_sign(ub));
    if ga != gb {
        ga.cmp(&gb)
    } else if ga == 0 {
        Ordering::Equal
    } else {
        let (mut ma, mut mb) = (magnitude(ua), magnitude(ub));
        // Compare ma * 10^-sa with mb * 10^-sb.
        for _ in sa..sb {
            times_ten(&mut ma);
        }
        for _ in sb..sa {
            times_ten(&mut mb);
        }
        let o = cmp_unsigned(&ma, &mb);
        if ga < 0 { o.reverse() } else { o }
    }
}

/// `m / 10` and `m % 10` of an unsigned big-endian magnitude.
fn div_ten(m: &[u8]) -> (Vec<u8>, u8) {
    let mut rem = 0u16;
    let q = m
        .iter()
        .map(|b| {
            let cur = (rem << 8) | u16::from(*b);
            rem = cur % 10;
            (cur / 10) as u8
        })
        .collect();
    (q, rem as u8)
}

/// The minimal two's complement bytes of `sign * m` (`m` an unsigned big-endian magnitude).
fn twos_complement(negative: bool, m: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8];
    v.extend_from_slice(m);
    if negative {
        for b in &mut v {
            *b = !*b;
        }
        for b in v.iter_mut().rev() {
            let (s, c) = b.overflowing_add(1);
            *b = s;
            if !c {
                break;
            }
        }
    }
    let mut start = 0;
    while start + 1 < v.len()
        && ((v[start] == 0x00 && v[start + 1] < 0x80) || (v[start] == 0xFF && v[start + 1] >= 0x80))
    {
        start += 1;
    }
    v.split_off(start)
}

/// The canonical form of a serialized varint or decimal (`khata_types::clustering`): minimal
/// bytes; for a decimal, no trailing zero in the fraction and scale 0 for an integer (the
/// generated values are far below the size where a larger integer keeps a negative scale).
fn canonical_number(ty: &CqlType, v: &[u8]) -> Vec<u8> {
    match ty {
        CqlType::Varint => twos_complement(v[0] >= 0x80, &magnitude(v)),
        CqlType::Decimal => {
            let (mut scale, unscaled) = (i32::from_be_bytes(v[..4].try_into().unwrap()), &v[4..]);
            let sign = integer_sign(unscaled);
            let mut m = magnitude(unscaled);
            if sign == 0 {
                scale = 0;
            }
            while sign != 0 && scale > 0 {
                let (q, r) = div_ten(&m);
                if r != 0 {
                    break;
                }
                m = q;
                scale -= 1;
            }
            while scale < 0 {
                times_ten(&mut m);
                scale += 1;
            }
            let mut out = scale.to_be_bytes().to_vec();
            out.extend(twos_complement(sign < 0, &m));
            out
        }
        _ => v.to_vec(),
    }
}

/// The form a serialized value of `ty` decodes to (`khata_types::clustering`): numbers in
/// canonical form and tuples and UDTs with every field of their type (the missing ones null),
/// at any depth; anything else as given.
fn canonical(ty: &CqlType, v: &[u8]) -> Vec<u8> {
    if v.is_empty() {
        return Vec::new();
    }
    let fields = |types: Vec<&CqlType>| {
        let mut given = parse_elements(v);
        given.resize(types.len(), None);
        let fields: Vec<Option<Vec<u8>>> = given
            .iter()
            .zip(&types)
            .map(|(f, t)| f.map(|f| canonical(t, f)))
            .collect();
        ser_tuple(&fields)
    };
    match ty {
        CqlType::Varint | CqlType::Decimal => canonical_number(ty, v),
        CqlType::List { element, .. } | CqlType::Set { element, .. } => {
            let es: Vec<Vec<u8>> = parse_collection(v)
                .iter()
                .map(|e| canonical(element, e))
                .collect();
            ser_elements(es.len(), &es)
        }
        CqlType::Map { key, value, .. } => {
            let es: Vec<Vec<u8>> = parse_collection(v)
                .chunks(2)
                .flat_map(|kv| [canonical(key, kv[0]), canonical(value, kv[1])])
                .collect();
            ser_elements(es.len() / 2, &es)
        }
        CqlType::Tuple(types) => fields(types.iter().collect()),
        CqlType::Udt { fields: f, .. } => fields(f.iter().map(|(_, t)| t).collect()),
        _ => v.to_vec(),
    }
}

/// Whether a value of `ty` may contain a `varint`, `decimal`, tuple or UDT, whose encodings
/// became canonical after keys had been written: a key may hold another, older encoding of
/// such a value, which still decodes.
fn has_older_encodings(ty: &CqlType) -> bool {
    match ty {
        CqlType::Varint | CqlType::Decimal | CqlType::Tuple(_) | CqlType::Udt { .. } => true,
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => has_older_encodings(element),
        CqlType::Map { key, value, .. } => has_older_encodings(key) || has_older_encodings(value),
        _ => false,
    }
}

fn cmp_floats(a_bits: u64, b_bits: u64, a_nan: bool, b_nan: bool, total: Ordering) -> Ordering {
    match (a_nan, b_nan) {
        (true, true) => a_bits.cmp(&b_bits),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => total,
    }
}

fn uuid_halves(v: &[u8]) -> (u64, u64) {
    (
        u64::from_be_bytes(v[..8].try_into().unwrap()),
        u64::from_be_bytes(v[8..].try_into().unwrap()),
    )
}

fn reorder(msb: u64) -> i64 {
    ((msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)) as i64
}

/// Cassandra's `UUIDType.compareCustom`.
fn cmp_uuids(a: &[u8], b: &[u8]) -> Ordering {
    let ((ma, la), (mb, lb)) = (uuid_halves(a), uuid_halves(b));
    let (va, vb) = ((ma >> 12) & 0xF, (mb >> 12) & 0xF);
    va.cmp(&vb)
        .then_with(|| {
            if va == 1 {
                reorder(ma).cmp(&reorder(mb))
            } else {
                ma.cmp(&mb)
            }
        })
        .then(la.cmp(&lb))
}

/// Cassandra's `TimeUUIDType.compareCustom`: timestamp, then the low bytes signed.
fn cmp_timeuuids(a: &[u8], b: &[u8]) -> Ordering {
    let ((ma, _), (mb, _)) = (uuid_halves(a), uuid_halves(b));
    let signed = |v: &[u8]| v[8..].iter().map(|x| *x as i8).collect::<Vec<_>>();
    reorder(ma)
        .cmp(&reorder(mb))
        .then_with(|| signed(a).cmp(&signed(b)))
}

fn cmp_sequences(ty: &CqlType, a: &[&[u8]], b: &[&[u8]]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = cmp_value(ty, x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// CQL's comparison of two serialized values of `ty`, ascending.
fn cmp_value(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    match ty {
        CqlType::Ascii | CqlType::Text | CqlType::Blob | CqlType::Inet | CqlType::Date => a.cmp(b),
        CqlType::Boolean => a[0].cmp(&b[0]),
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp
        | CqlType::Time => cmp_integers(a, b),
        CqlType::Varint => cmp_integers(a, b),
        CqlType::Decimal => cmp_decimals(a, b),
        CqlType::Float => {
            let (x, y) = (
                f32::from_be_bytes(a.try_into().unwrap()),
                f32::from_be_bytes(b.try_into().unwrap()),
            );
            let bits = |f: f32| u64::from(f.to_bits());
            cmp_floats(bits(x), bits(y), x.is_nan(), y.is_nan(), x.total_cmp(&y))
        }
        CqlType::Double => {
            let (x, y) = (
                f64::from_be_bytes(a.try_into().unwrap()),
                f64::from_be_bytes(b.try_into().unwrap()),
            );
            cmp_floats(
                x.to_bits(),
                y.to_bits(),
                x.is_nan(),
                y.is_nan(),
                x.total_cmp(&y),
            )
        }
        CqlType::Uuid => cmp_uuids(a, b),
        CqlType::Timeuuid => cmp_timeuuids(a, b),
        CqlType::List { element, .. } | CqlType::Set { element, .. } => {
            cmp_sequences(element, &parse_collection(a), &parse_collection(b))
        }
        CqlType::Map { key, value, .. } => {
            let (ea, eb) = (parse_collection(a), parse_collection(b));
            for (pa, pb) in ea.chunks(2).zip(eb.chunks(2)) {
                let o = cmp_value(key, pa[0], pb[0]).then_with(|| cmp_value(value, pa[1], pb[1]));
                if o != Ordering::Equal {
                    return o;
                }
            }
            ea.len().cmp(&eb.len())
        }
        CqlType::Tuple(types) => cmp_fields(types.iter(), a, b),
        CqlType::Udt { fields, .. } => cmp_fields(fields.iter().map(|(_, t)| t), a, b),
        CqlType::Vector { element, .. } => {
            let size = a.len() / vector_dimension(ty);
            let (ea, eb): (Vec<&[u8]>, Vec<&[u8]>) =
                (a.chunks(size).collect(), b.chunks(size).collect());
            cmp_sequences(element, &ea, &eb)
        }
        CqlType::Duration => unreachable!("not generated"),
    }
}

fn vector_dimension(ty: &CqlType) -> usize {
    match ty {
        CqlType::Vector { dimension, .. } => *dimension as usize,
        _ => unreachable!(),
    }
}

/// Tuples and UDTs: field by field, null first, a missing field compared as a null one
/// (`TupleType.compareCustom`; Cassandra also compares a trailing empty field as a missing one,
/// where khata puts the empty field after it, as after a null one).
fn cmp_fields<'t>(types: impl Iterator<Item = &'t CqlType>, a: &[u8], b: &[u8]) -> Ordering {
    let (mut fa, mut fb) = (parse_elements(a), parse_elements(b));
    let len = fa.len().max(fb.len());
    fa.resize(len, None);
    fb.resize(len, None);
    for ((x, y), ty) in fa.iter().zip(&fb).zip(types) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => cmp_value(ty, x, y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn is_string(ty: &CqlType) -> bool {
    matches!(ty, CqlType::Ascii | CqlType::Text | CqlType::Blob)
}

/// The order of two keys (or prefixes): component by component, an empty value of a non-string
/// type first in ASC and DESC columns alike, DESC columns reversed, then shorter first.
fn reference_cmp(types: &Types, a: &Key, b: &Key) -> Ordering {
    for ((x, y), (ty, order)) in a.iter().zip(b).zip(types) {
        let o = if !is_string(ty) && (x.is_empty() || y.is_empty()) {
            (!x.is_empty()).cmp(&!y.is_empty())
        } else {
            let o = cmp_value(ty, x, y);
            if *order == ClusteringOrder::Desc {
                o.reverse()
            } else {
                o
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

// ---------------------------------------------------------------------------------------------
// Generators.

fn scalar_type() -> impl Strategy<Value = CqlType> {
    prop_oneof![
        Just(CqlType::Ascii),
        Just(CqlType::Text),
        Just(CqlType::Blob),
        Just(CqlType::Boolean),
        Just(CqlType::Tinyint),
        Just(CqlType::Smallint),
        Just(CqlType::Int),
        Just(CqlType::Bigint),
        Just(CqlType::Varint),
        Just(CqlType::Decimal),
        Just(CqlType::Float),
        Just(CqlType::Double),
        Just(CqlType::Date),
        Just(CqlType::Time),
        Just(CqlType::Timestamp),
        Just(CqlType::Uuid),
        Just(CqlType::Timeuuid),
        Just(CqlType::Inet),
    ]
}

fn fixed_type() -> impl Strategy<Value = CqlType> {
    prop_oneof![
        Just(CqlType::Float),
        Just(CqlType::Double),
        Just(CqlType::Int),
        Just(CqlType::Timeuuid)
    ]
}

fn cql_type() -> impl Strategy<Value = CqlType> {
    let leaf = prop_oneof![
        4 => scalar_type(),
        1 => (fixed_type(), 1u32..4).prop_map(|(e, d)| CqlType::Vector { element: Box::new(e), dimension: d }),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| CqlType::List {
                element: Box::new(e),
                frozen: true
            }),
            inner.clone().prop_map(|e| CqlType::Set {
                element: Box::new(e),
                frozen: true
            }),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| CqlType::Map {
                key: Box::new(k),
                value: Box::new(v),
                frozen: true
            }),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(CqlType::Tuple),
            proptest::collection::vec(inner, 1..3).prop_map(|ts| CqlType::Udt {
                keyspace: "ks".into(),
                name: "u".into(),
                fields: ts
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| (format!("f{i}"), t))
                    .collect(),
                frozen: true,
            }),
        ]
    })
}

fn types() -> impl Strategy<Value = Types> {
    let order = prop_oneof![Just(ClusteringOrder::Asc), Just(ClusteringOrder::Desc)];
    proptest::collection::vec((cql_type(), order), 1..4)
}

fn bytes_from(alphabet: &'static [u8], len: std::ops::Range<usize>) -> BoxedStrategy<Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(alphabet), len).boxed()
}

fn signed(bytes: usize) -> BoxedStrategy<Vec<u8>> {
    let edge = prop_oneof![
        Just(i64::MIN),
        Just(-1i64),
        Just(0i64),
        Just(1i64),
        Just(i64::MAX)
    ];
    prop_oneof![edge, -3i64..3, any::<i64>()]
        .prop_map(move |v| {
            let shift = 64 - 8 * bytes as u32;
            let v = if shift == 0 { v } else { (v << shift) >> shift };
            v.to_be_bytes()[8 - bytes..].to_vec()
        })
        .boxed()
}

fn varint() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        bytes_from(&[0x00, 0x01, 0x7F, 0x80, 0xFF], 1..5),
        proptest::collection::vec(any::<u8>(), 1..12),
    ]
    .boxed()
}

fn decimal() -> BoxedStrategy<Vec<u8>> {
    let unscaled = prop_oneof![
        varint(),
        prop_oneof![
            Just(0i64),
            Just(1),
            Just(-1),
            Just(10),
            Just(-10),
            Just(100),
            Just(12),
            Just(120)
        ]
        .prop_map(|v| v.to_be_bytes()[7..].to_vec()),
        any::<i64>().prop_map(|v| v.to_be_bytes().to_vec()),
    ];
    let scale = prop_oneof![4 => -3i32..4, 1 => -40i32..40];
    (scale, unscaled)
        .prop_map(|(s, u)| {
            let mut v = s.to_be_bytes().to_vec();
            v.extend(u);
            v
        })
        .boxed()
}

fn float() -> BoxedStrategy<Vec<u8>> {
    let special = proptest::sample::select(vec![
        0.0f32.to_bits(),
        (-0.0f32).to_bits(),
        1.0f32.to_bits(),
        (-1.0f32).to_bits(),
        f32::INFINITY.to_bits(),
        f32::NEG_INFINITY.to_bits(),
        0x7FC0_0000,
        0xFFC0_0000,
        0x7F80_0001,
        1,
        0x8000_0001,
    ]);
    prop_oneof![special, any::<u32>()]
        .prop_map(|b| b.to_be_bytes().to_vec())
        .boxed()
}

fn double() -> BoxedStrategy<Vec<u8>> {
    let special = proptest::sample::select(vec![
        0.0f64.to_bits(),
        (-0.0f64).to_bits(),
        1.0f64.to_bits(),
        (-1.0f64).to_bits(),
        f64::INFINITY.to_bits(),
        f64::NEG_INFINITY.to_bits(),
        0x7FF8_0000_0000_0000,
        0xFFF8_0000_0000_0000,
        0x7FF0_0000_0000_0001,
        1,
    ]);
    prop_oneof![special, any::<u64>()]
        .prop_map(|b| b.to_be_bytes().to_vec())
        .boxed()
}

fn uuid(force_v1: bool) -> BoxedStrategy<Vec<u8>> {
    let version = if force_v1 {
        Just(1u8).boxed()
    } else {
        proptest::sample::select(vec![0u8, 1, 4, 7, 15]).boxed()
    };
    let msb_bytes = bytes_from(&[0x00, 0x01, 0x80, 0xFF], 8..9);
    let lsb_bytes = prop_oneof![
        bytes_from(&[0x00, 0x7F, 0x80, 0xFF], 8..9),
        proptest::collection::vec(any::<u8>(), 8)
    ];
    (version, msb_bytes, lsb_bytes)
        .prop_map(|(v, mut msb, lsb)| {
            msb[6] = (msb[6] & 0x0F) | (v << 4);
            msb.extend(lsb);
            msb
        })
        .boxed()
}

fn inet() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        bytes_from(&[0, 1, 127, 255], 4..5),
        bytes_from(&[0, 1, 127, 255], 16..17)
    ]
    .boxed()
}

fn date() -> BoxedStrategy<Vec<u8>> {
    let edge =
        proptest::sample::select(vec![0u32, 1 << 31, (1 << 31) - 1, (1 << 31) + 1, u32::MAX]);
    prop_oneof![edge, any::<u32>()]
        .prop_map(|d| d.to_be_bytes().to_vec())
        .boxed()
}

/// A non-empty value of `ty`.
fn value_of(ty: &CqlType) -> BoxedStrategy<Vec<u8>> {
    match ty {
        CqlType::Ascii => bytes_from(&[0x00, b'a', b'b', 0x7F], 0..4),
        CqlType::Text => proptest::collection::vec(
            proptest::sample::select(vec!['\0', 'a', 'é', '€', '\u{10000}']),
            0..4,
        )
        .prop_map(|cs| cs.into_iter().collect::<String>().into_bytes())
        .boxed(),
        CqlType::Blob => bytes_from(&[0x00, 0x01, 0x80, 0xFF], 0..4),
        CqlType::Boolean => bytes_from(&[0, 1], 1..2),
        CqlType::Tinyint => signed(1),
        CqlType::Smallint => signed(2),
        CqlType::Int => signed(4),
        CqlType::Bigint | CqlType::Counter | CqlType::Timestamp => signed(8),
        CqlType::Varint => varint(),
        CqlType::Decimal => decimal(),
        CqlType::Float => float(),
        CqlType::Double => double(),
        CqlType::Date => date(),
        CqlType::Time => prop_oneof![
            Just(0i64),
            Just(86_399_999_999_999),
            0i64..86_400_000_000_000
        ]
        .prop_map(|t| t.to_be_bytes().to_vec())
        .boxed(),
        CqlType::Uuid => uuid(false),
        CqlType::Timeuuid => uuid(true),
        CqlType::Inet => inet(),
        CqlType::Duration => unreachable!("not generated"),
        CqlType::List { element, .. } => proptest::collection::vec(nested_value(element), 0..4)
            .prop_map(|es| ser_elements(es.len(), &es))
            .boxed(),
        CqlType::Set { element, .. } => {
            let element = (**element).clone();
            proptest::collection::vec(nested_value(&element), 0..4)
                .prop_map(move |mut es| {
                    es.sort_by(|a, b| cmp_value(&element, a, b));
                    es.dedup_by(|a, b| cmp_value(&element, a, b) == Ordering::Equal);
                    ser_elements(es.len(), &es)
                })
                .boxed()
        }
        CqlType::Map { key, value, .. } => {
            let key_ty = (**key).clone();
            proptest::collection::vec((nested_value(key), nested_value(value)), 0..4)
                .prop_map(move |mut es| {
                    es.sort_by(|a, b| cmp_value(&key_ty, &a.0, &b.0));
                    es.dedup_by(|a, b| cmp_value(&key_ty, &a.0, &b.0) == Ordering::Equal);
                    let flat: Vec<Vec<u8>> = es.into_iter().flat_map(|(k, v)| [k, v]).collect();
                    ser_elements(flat.len() / 2, &flat)
                })
                .boxed()
        }
        CqlType::Tuple(types) => fields_of(types.iter().collect()),
        CqlType::Udt { fields, .. } => fields_of(fields.iter().map(|(_, t)| t).collect()),
        CqlType::Vector { element, dimension } => {
            proptest::collection::vec(value_of(element), *dimension as usize)
                .prop_map(|es| es.concat())
                .boxed()
        }
    }
}

/// An element of a collection: usually a value, sometimes the empty value.
fn nested_value(ty: &CqlType) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![8 => value_of(ty), 1 => Just(Vec::new())].boxed()
}

fn fields_of(types: Vec<&CqlType>) -> BoxedStrategy<Vec<u8>> {
    let n = types.len();
    let fields: Vec<BoxedStrategy<Option<Vec<u8>>>> = types
        .into_iter()
        .map(|t| proptest::option::weighted(0.8, nested_value(t)).boxed())
        .collect();
    (fields, 0..=n)
        .prop_map(|(fs, count)| ser_tuple(&fs[..count]))
        .boxed()
}

/// A key or prefix for `types`: each component a value, occasionally empty.
fn key_of(types: &Types) -> BoxedStrategy<Key> {
    let components: Vec<BoxedStrategy<Vec<u8>>> = types
        .iter()
        .map(|(ty, _)| prop_oneof![12 => value_of(ty), 1 => Just(Vec::new())].boxed())
        .collect();
    (components, 0..=types.len())
        .prop_map(|(mut key, len)| {
            key.truncate(len);
            key
        })
        .boxed()
}

/// A type list and several keys for it. Keys often share components: some are built from
/// others by keeping a prefix and redrawing the rest.
fn types_and_keys() -> impl Strategy<Value = (Types, Vec<Key>)> {
    types().prop_flat_map(|types| {
        let keys = proptest::collection::vec(key_of(&types), 2..8);
        let splices = proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                0usize..4,
            ),
            0..6,
        );
        (Just(types), keys, splices).prop_map(|(types, mut keys, splices)| {
            for (from, to, keep) in splices {
                let (f, t) = (from.index(keys.len()), to.index(keys.len()));
                let keep = keep.min(keys[f].len()).min(keys[t].len());
                let prefix: Vec<Vec<u8>> = keys[f][..keep].to_vec();
                keys[t].splice(..keep, prefix);
            }
            (types, keys)
        })
    })
}

fn encode(types: &Types, key: &Key) -> Bytes {
    let refs: Vec<&[u8]> = key.iter().map(Vec::as_slice).collect();
    encode_key(types, &refs).unwrap_or_else(|e| panic!("encode {key:02x?} as {types:?}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn memcmp_order_is_cql_order((types, keys) in types_and_keys()) {
        let encoded: Vec<Bytes> = keys.iter().map(|k| encode(&types, k)).collect();
        for (a, ea) in keys.iter().zip(&encoded) {
            for (b, eb) in keys.iter().zip(&encoded) {
                prop_assert_eq!(
                    ea.cmp(eb),
                    reference_cmp(&types, a, b),
                    "keys {:02x?} and {:02x?} of {:?}", a, b, types
                );
            }
        }
    }

    /// Decoding gives the key back, with its numbers in canonical form and its tuples and UDTs
    /// with all their fields (at any depth), an equal key with the same encoding.
    #[test]
    fn decode_inverts_encode((types, keys) in types_and_keys()) {
        for key in &keys {
            let encoded = encode(&types, key);
            let decoded = decode_key(&types, &encoded).unwrap();
            let decoded: Key = decoded.iter().map(|b| b.to_vec()).collect();
            prop_assert_eq!(decoded.len(), key.len());
            prop_assert_eq!(reference_cmp(&types, &decoded, key), Ordering::Equal);
            prop_assert_eq!(encode(&types, &decoded), encoded);
            for ((got, given), (ty, _)) in decoded.iter().zip(key).zip(&types) {
                prop_assert_eq!(got, &canonical(ty, given));
            }
        }
    }

    #[test]
    fn bounds_select_the_keys_extending_a_prefix(
        (types, keys) in types_and_keys(),
        pick in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let source = &keys[pick.index(keys.len())];
        let prefix: Key = source[..cut.index(source.len() + 1)].to_vec();
        let p = encode(&types, &prefix);
        for key in &keys {
            let k = encode(&types, key);
            let truncated: Key = key[..key.len().min(prefix.len())].to_vec();
            let rel = reference_cmp(&types, &truncated, &prefix);
            let in_range = |start: Bytes, end: Bytes| start <= k && k < end;
            prop_assert_eq!(
                in_range(start_bound(&p, true), end_bound(&p, true)),
                rel == Ordering::Equal,
                "[P, P] for {:02x?} and {:02x?}", key, prefix
            );
            prop_assert_eq!(k >= start_bound(&p, false), rel == Ordering::Greater);
            prop_assert_eq!(k < end_bound(&p, false), rel == Ordering::Less);
            prop_assert_eq!(k >= start_bound(&p, true), rel != Ordering::Less);
            prop_assert_eq!(k < end_bound(&p, true), rel != Ordering::Greater);
            let (lo, hi) = full_range();
            prop_assert!(lo <= k && k < hi);
        }
        prop_assert_eq!(after_prefix(&p), end_bound(&p, true));
        for inclusive in [false, true] {
            let bound = Bound { prefix: p.clone(), inclusive };
            prop_assert_eq!(bound.start_bytes(), start_bound(&p, inclusive));
            prop_assert_eq!(bound.end_bytes(), end_bound(&p, inclusive));
        }
    }

    /// Every byte string that decodes is the encoding of what it decodes to, so no key has two
    /// encodings (which would be two rows), except for numbers, tuples and UDTs: those written
    /// before their encoding was canonical (a tuple with its trailing null markers) still
    /// decode, and re-encode to the canonical encoding of an equal key.
    #[test]
    fn only_canonical_encodings_decode(
        (types, keys) in types_and_keys(),
        pick in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        garbage in proptest::collection::vec(any::<u8>(), 0..24),
        truncate in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode(&types, &keys[pick.index(keys.len())]).to_vec();
        for (at, b) in edits {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
        }
        bytes.truncate(truncate.index(bytes.len() + 1));
        for candidate in [bytes, garbage] {
            if let Ok(values) = decode_key(&types, &candidate) {
                let refs: Vec<&[u8]> = values.iter().map(|v| v.as_ref()).collect();
                if !types.iter().any(|(ty, _)| has_older_encodings(ty)) {
                    let again = encode_key(&types, &refs).expect("decoded values re-encode");
                    prop_assert_eq!(again.as_ref(), candidate.as_slice());
                    continue;
                }
                let again = match encode_key(&types, &refs) {
                    Ok(again) => again,
                    // An old set of two equal numbers (or tuples) in different forms: one
                    // element now.
                    Err(KeyError::InvalidValue { .. }) => continue,
                    Err(e) => panic!("decoded values re-encode: {e}"),
                };
                let canonical = decode_key(&types, &again).unwrap();
                let canonical_refs: Vec<&[u8]> = canonical.iter().map(|v| v.as_ref()).collect();
                prop_assert_eq!(encode_key(&types, &canonical_refs).unwrap(), again);
                let as_key = |vs: &[Bytes]| -> Key { vs.iter().map(|v| v.to_vec()).collect() };
                prop_assert_eq!(
                    reference_cmp(&types, &as_key(&values), &as_key(&canonical)),
                    Ordering::Equal
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Examples.

fn asc(ty: CqlType) -> (CqlType, ClusteringOrder) {
    (ty, ClusteringOrder::Asc)
}

fn desc(ty: CqlType) -> (CqlType, ClusteringOrder) {
    (ty, ClusteringOrder::Desc)
}

#[test]
fn ints_order_signed_and_desc_reverses() {
    let t = [asc(CqlType::Int)];
    let enc = |v: i32| encode_key(&t, &[&v.to_be_bytes()]).unwrap();
    assert!(enc(-1) < enc(0) && enc(0) < enc(1) && enc(i32::MIN) < enc(-1));
    let t = [desc(CqlType::Int)];
    let enc = |v: i32| encode_key(&t, &[&v.to_be_bytes()]).unwrap();
    assert!(enc(1) < enc(0) && enc(0) < enc(-1));
}

#[test]
fn empty_text_sorts_last_in_a_desc_column() {
    let t = [desc(CqlType::Text)];
    assert!(encode_key(&t, &[b"a"]).unwrap() < encode_key(&t, &[b""]).unwrap());
    let t = [asc(CqlType::Text)];
    assert!(encode_key(&t, &[b""]).unwrap() < encode_key(&t, &[b"a"]).unwrap());
}

fn dec_bytes(unscaled: &[u8], scale: i32) -> Vec<u8> {
    let mut v = scale.to_be_bytes().to_vec();
    v.extend_from_slice(unscaled);
    v
}

#[test]
fn decimals_order_by_value() {
    let t = [asc(CqlType::Decimal)];
    let dec = |unscaled: i64, scale: i32| {
        encode_key(&t, &[&dec_bytes(&unscaled.to_be_bytes(), scale)]).unwrap()
    };
    // 0.99 < 1 = 1.0 < 1.01 < 10 = 1E1
    assert!(dec(99, 2) < dec(1, 0));
    assert_eq!(dec(1, 0), dec(10, 1));
    assert!(dec(10, 1) < dec(101, 2));
    assert!(dec(101, 2) < dec(1, -1));
    assert_eq!(dec(1, -1), dec(10, 0));
    assert!(dec(-101, 2) < dec(-1, 0));
    assert!(dec(-1, 0) < dec(0, 5));
    assert_eq!(dec(0, 5), dec(0, -3));
}

#[test]
fn uuids_order_by_version_then_time() {
    let t = [asc(CqlType::Uuid)];
    // A v1 UUID with a later timestamp in time_hi but a smaller time_low.
    let early = hex16("ffffffff-0000-1000-8000-000000000000");
    let late = hex16("00000000-0000-1001-8000-000000000000");
    let v4 = hex16("00000000-0000-4000-8000-000000000000");
    let e = |v: &[u8]| encode_key(&t, &[v]).unwrap();
    assert!(e(&early) < e(&late));
    assert!(e(&late) < e(&v4));
}

fn hex16(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| *c != '-').collect();
    (0..16)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn inet_orders_bytewise() {
    let t = [asc(CqlType::Inet)];
    let e = |v: &[u8]| encode_key(&t, &[v]).unwrap();
    let v4 = [10, 0, 0, 1];
    let mut v6 = [0u8; 16];
    v6[..4].copy_from_slice(&v4);
    assert!(e(&v4) < e(&v6));
    assert!(e(&[0u8; 16]) < e(&v4));
}

#[test]
fn invalid_values_are_errors() {
    let err = |t: CqlType, v: &[u8]| encode_key(&[asc(t)], &[v]).unwrap_err();
    assert!(matches!(
        err(CqlType::Int, &[1, 2, 3]),
        KeyError::InvalidValue { column: 0, .. }
    ));
    assert!(matches!(
        err(CqlType::Text, &[0xC3]),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(CqlType::Ascii, "é".as_bytes()),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(CqlType::Boolean, &[2]),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(CqlType::Inet, &[1, 2, 3, 4, 5]),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(CqlType::Decimal, &[0, 0, 0, 1]),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(CqlType::Time, &(-1i64).to_be_bytes()),
        KeyError::InvalidValue { .. }
    ));
    let v4 = hex16("00000000-0000-4000-8000-000000000000");
    assert!(matches!(
        err(CqlType::Timeuuid, &v4),
        KeyError::InvalidValue { .. }
    ));
    let set = CqlType::Set {
        element: Box::new(CqlType::Int),
        frozen: true,
    };
    let unsorted = ser_elements(
        2,
        &[2i32.to_be_bytes().to_vec(), 1i32.to_be_bytes().to_vec()],
    );
    assert!(matches!(
        err(set.clone(), &unsorted),
        KeyError::InvalidValue { .. }
    ));
    let repeated = ser_elements(
        2,
        &[1i32.to_be_bytes().to_vec(), 1i32.to_be_bytes().to_vec()],
    );
    assert!(matches!(err(set, &repeated), KeyError::InvalidValue { .. }));
    let list = CqlType::List {
        element: Box::new(CqlType::Int),
        frozen: true,
    };
    assert!(matches!(
        err(list.clone(), &[0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF]),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(list, &[0, 0, 0, 1]),
        KeyError::InvalidValue { .. }
    ));
    let big = vec![b'a'; 70_000];
    assert!(matches!(
        err(CqlType::Blob, &big),
        KeyError::InvalidValue { .. }
    ));
    assert!(matches!(
        encode_key(&[asc(CqlType::Int)], &[&[0, 0, 0, 1], &[0, 0, 0, 1]]),
        Err(KeyError::TooManyValues {
            values: 2,
            columns: 1
        })
    ));
}

#[test]
fn unsupported_types_are_errors() {
    let unsupported = |t: CqlType| {
        matches!(
            encode_key(&[asc(t.clone())], &[]),
            Err(KeyError::UnsupportedType { .. })
        ) && matches!(
            decode_key(&[asc(t)], &[]),
            Err(KeyError::UnsupportedType { .. })
        )
    };
    assert!(unsupported(CqlType::Duration));
    assert!(unsupported(CqlType::List {
        element: Box::new(CqlType::Int),
        frozen: false
    }));
    assert!(unsupported(CqlType::Tuple(vec![
        CqlType::Int,
        CqlType::Duration
    ])));
    assert!(unsupported(CqlType::Vector {
        element: Box::new(CqlType::Text),
        dimension: 2
    }));
}

#[test]
fn malformed_keys_are_errors() {
    let t = [asc(CqlType::Int), asc(CqlType::Text)];
    assert!(matches!(
        decode_key(&t, &[0x07]),
        Err(KeyError::Malformed { .. })
    ));
    assert!(matches!(
        decode_key(&t, &[0x02, 0x80]),
        Err(KeyError::Malformed { .. })
    ));
    let full = encode_key(&t, &[&[0, 0, 0, 1], b"x"]).unwrap();
    let mut longer = full.to_vec();
    longer.push(0x02);
    assert!(matches!(
        decode_key(&t, &longer),
        Err(KeyError::Malformed { .. })
    ));
    assert_eq!(decode_key(&t, &[]).unwrap(), Vec::<Bytes>::new());
}

/// Cassandra's `DecimalType` compares with `BigDecimal.compareTo` and `IntegerType` by value,
/// so equal numbers in different forms are one clustering key: one encoding, which decodes to
/// the canonical form.
#[test]
fn equal_numbers_share_one_encoding_and_decode_canonically() {
    let cases: [(&[u8], i32, &[u8], i32); 8] = [
        // 1.50 -> 1.5; 1.0 with a redundant 00 -> 1
        (&[0, 150], 2, &[15], 1),
        (&[0, 10], 1, &[1], 0),
        // 1.23E+3 and 12300E-1 -> 1230; 1E+2 -> 100
        (&[123], -1, &[0x04, 0xCE], 0),
        (&[0x30, 0x0C], 1, &[0x04, 0xCE], 0),
        (&[1], -2, &[100], 0),
        // 0.00 and 0E+5 -> 0
        (&[0], 2, &[0], 0),
        (&[0, 0], -5, &[0], 0),
        // -2.500 -> -2.5
        (&[0xF6, 0x3C], 3, &[0xE7], 1),
    ];
    for order in [ClusteringOrder::Asc, ClusteringOrder::Desc] {
        let t = [(CqlType::Decimal, order)];
        for (unscaled, scale, canonical_unscaled, canonical_scale) in cases {
            let given = dec_bytes(unscaled, scale);
            let canonical = dec_bytes(canonical_unscaled, canonical_scale);
            let key = encode_key(&t, &[&given]).unwrap();
            assert_eq!(key, encode_key(&t, &[&canonical]).unwrap(), "{given:02x?}");
            assert_eq!(
                decode_key(&t, &key).unwrap()[0].as_ref(),
                canonical.as_slice()
            );
        }
        let t = [(CqlType::Varint, order)];
        for (given, canonical) in [(&[0, 0, 1][..], &[1][..]), (&[0xFF, 0xFF, 0x80], &[0x80])] {
            let key = encode_key(&t, &[given]).unwrap();
            assert_eq!(key, encode_key(&t, &[canonical]).unwrap());
            assert_eq!(decode_key(&t, &key).unwrap()[0].as_ref(), canonical);
        }
    }
}

/// An integer-valued decimal has scale 0 in canonical form while every such integer fits the
/// key's limit on decimals (9,863 digits); a larger one keeps a negative scale, and an
/// exponent beyond an `int` scale keeps the trailing zeros it must.
#[test]
fn large_decimal_integers_keep_a_negative_scale() {
    let t = [asc(CqlType::Decimal)];
    let round_trip = |v: &[u8]| decode_key(&t, &encode_key(&t, &[v]).unwrap()).unwrap()[0].to_vec();
    // 10^9862 (9,863 digits) as 1E+9862 comes back with scale 0.
    let plain = round_trip(&dec_bytes(&[1], -9862));
    assert_eq!(&plain[..4], &0i32.to_be_bytes());
    assert!(plain.len() - 4 <= khata_types::clustering::MAX_DECIMAL_UNSCALED_SIZE_BYTES);
    // 10^9863 (9,864 digits) keeps 1E+9863.
    assert_eq!(round_trip(&dec_bytes(&[1], -9863)), dec_bytes(&[1], -9863));
    assert_eq!(round_trip(&dec_bytes(&[10], -9862)), dec_bytes(&[1], -9863));
    // 100E+2147483648: the scale cannot go below i32::MIN.
    assert_eq!(
        round_trip(&dec_bytes(&[100], i32::MIN)),
        dec_bytes(&[100], i32::MIN)
    );
    assert_eq!(
        round_trip(&dec_bytes(&[1], i32::MAX)),
        dec_bytes(&[1], i32::MAX)
    );
}

/// Keys written before numbers were encoded canonically carried the input's scale and
/// redundant sign bytes as a tie-break; they still decode, to the form they were written in,
/// and sort next to the canonical key of their value.
#[test]
fn keys_written_before_canonical_numbers_still_decode() {
    let t = [asc(CqlType::Decimal)];
    // 1.5: header, class positive, exponent 1, digits 1 5, end; then the scale and padding.
    let body = [0x02, 0x03, 0x81, 0x01, 0x26, 0x00];
    let with = |scale: u8, pad: &[u8]| [&body[..], &[0x81, scale], pad].concat();
    let canonical = with(1, &[0x00]);
    assert_eq!(
        encode_key(&t, &[&dec_bytes(&[0, 150], 2)])
            .unwrap()
            .as_ref(),
        canonical.as_slice()
    );
    // 1.50 (scale 2) and 1.5 with a redundant 00 byte, as the old encoder wrote them.
    let old_scale = with(2, &[0x00]);
    let old_padding = with(1, &[0x01, 0x01]);
    assert_eq!(
        decode_key(&t, &old_scale).unwrap()[0].as_ref(),
        dec_bytes(&[0, 150], 2).as_slice()
    );
    assert_eq!(
        decode_key(&t, &old_padding).unwrap()[0].as_ref(),
        dec_bytes(&[0, 15], 1).as_slice()
    );
    let two = encode_key(&t, &[&dec_bytes(&[2], 0)]).unwrap();
    assert!(canonical.as_slice() < old_scale.as_slice() && old_scale.as_slice() < &two[..]);
    assert!(canonical.as_slice() < old_padding.as_slice() && old_padding.as_slice() < &two[..]);

    let t = [asc(CqlType::Varint)];
    // 1 written as 00 01: class non-negative, length 1, the byte, one byte of padding.
    let old = [0x02, 0x02, 0x01, 0x01, 0x01, 0x01, 0x01];
    assert_eq!(decode_key(&t, &old).unwrap()[0].as_ref(), &[0x00, 0x01]);
    let one = encode_key(&t, &[&[0x01]]).unwrap();
    assert_eq!(one.as_ref(), &[0x02, 0x02, 0x01, 0x01, 0x01, 0x00]);
    assert!(one.as_ref() < &old[..]);
}

fn udt(fields: &[(&str, CqlType)]) -> CqlType {
    CqlType::Udt {
        keyspace: "ks".into(),
        name: "ty".into(),
        fields: fields
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect(),
        frozen: true,
    }
}

fn text(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

/// Cassandra's `TupleType.compareCustom` compares a missing trailing field as a null one, so a
/// tuple or UDT with trailing nulls and the same value without them are one clustering key: one
/// encoding, which decodes with every field of the type.
#[test]
fn tuples_with_and_without_trailing_nulls_share_one_encoding() {
    let int = |v: i32| Some(v.to_be_bytes().to_vec());
    let tuple = CqlType::Tuple(vec![CqlType::Int, CqlType::Int, CqlType::Int]);
    for order in [ClusteringOrder::Asc, ClusteringOrder::Desc] {
        let t = [(tuple.clone(), order)];
        let enc = |fields: &[Option<Vec<u8>>]| encode_key(&t, &[&ser_tuple(fields)]).unwrap();
        let full = ser_tuple(&[int(1), None, None]);
        let key = enc(&[int(1)]);
        assert_eq!(key, enc(&[int(1), None]));
        assert_eq!(key, enc(&[int(1), None, None]));
        assert_eq!(decode_key(&t, &key).unwrap()[0].as_ref(), full.as_slice());
        // A null before a value still counts: (1, null, 2) is after (1) and before (1, 0).
        let (one, one_null_two, one_zero) =
            (key, enc(&[int(1), None, int(2)]), enc(&[int(1), int(0)]));
        let ascending = [
            enc(&[None, None, None]),
            enc(&[int(0)]),
            one,
            one_null_two,
            one_zero,
        ];
        assert_eq!(ascending[0], enc(&[None]));
        assert_eq!(
            decode_key(&t, &ascending[0]).unwrap()[0].as_ref(),
            ser_tuple(&[None, None, None]).as_slice()
        );
        for pair in ascending.windows(2) {
            let expected = if order == ClusteringOrder::Asc {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            assert_eq!(pair[0].cmp(&pair[1]), expected);
        }
        // The empty value is not a tuple of nulls: it sorts first in ASC and DESC alike.
        let empty = encode_key(&t, &[b""]).unwrap();
        assert!(ascending.iter().all(|k| empty < *k));
    }
}

/// A frozen UDT clustering key written before `ALTER TYPE ... ADD` holds the fields the type
/// had then; the same value written after it has the new fields null. Both are one key, found
/// by either form, read back with the new fields null, and slices treat them as one value
/// (Cassandra's UserTypesTest.testAddUDTField).
#[test]
fn udt_keys_before_and_after_alter_type_add_are_one_key() {
    let before = [asc(udt(&[("foo", CqlType::Text)]))];
    let after = [asc(udt(&[
        ("foo", CqlType::Text),
        ("bar", CqlType::Text),
        ("baz", CqlType::Int),
    ]))];
    let written_before = encode_key(&before, &[&ser_tuple(&[text("foo")])]).unwrap();
    let enc = |fields: &[Option<Vec<u8>>]| encode_key(&after, &[&ser_tuple(fields)]).unwrap();
    let written_after = enc(&[text("foo"), None, None]);
    assert_eq!(written_before, written_after);
    assert_eq!(written_before, enc(&[text("foo"), None]));
    assert_eq!(written_before, enc(&[text("foo")]));
    assert_eq!(
        decode_key(&after, &written_before).unwrap()[0].as_ref(),
        ser_tuple(&[text("foo"), None, None]).as_slice()
    );
    // ck > {foo: 'foo'} excludes {foo: 'foo', bar: null} and includes {foo: 'foo', bar: ''};
    // ck <= {foo: 'foo', bar: null, baz: null} includes {foo: 'foo'}.
    let key = &written_before;
    assert!(key.as_ref() < start_bound(&enc(&[text("foo")]), false).as_ref());
    assert!(enc(&[text("foo"), text("")]) >= start_bound(&enc(&[text("foo")]), false));
    assert!(key.as_ref() < end_bound(&enc(&[text("foo"), None, None]), true).as_ref());
    assert!(key.as_ref() >= start_bound(&enc(&[text("foo"), None]), true).as_ref());
    // {foo: 'foo'} < {foo: 'foo', bar: ''} < {foo: 'foo', bar: 'a'} < {foo: 'fop'}.
    assert!(*key < enc(&[text("foo"), text("")]));
    assert!(enc(&[text("foo"), text("")]) < enc(&[text("foo"), text("a")]));
    assert!(enc(&[text("foo"), text("a")]) < enc(&[text("fop")]));
}

/// Inside collections (a `frozen<list<frozen<ty>>>` clustering column, a map keyed by tuples),
/// tuples and UDTs with and without trailing nulls are one value too.
#[test]
fn tuples_in_collections_drop_trailing_nulls() {
    let ty = udt(&[("foo", CqlType::Text), ("bar", CqlType::Text)]);
    let list = CqlType::List {
        element: Box::new(ty.clone()),
        frozen: true,
    };
    for order in [ClusteringOrder::Asc, ClusteringOrder::Desc] {
        let t = [(list.clone(), order)];
        let short = ser_elements(1, &[ser_tuple(&[text("foo")])]);
        let full = ser_elements(1, &[ser_tuple(&[text("foo"), None])]);
        let key = encode_key(&t, &[&short]).unwrap();
        assert_eq!(key, encode_key(&t, &[&full]).unwrap());
        assert_eq!(decode_key(&t, &key).unwrap()[0].as_ref(), full.as_slice());
    }
    let map = CqlType::Map {
        key: Box::new(CqlType::Tuple(vec![CqlType::Int, CqlType::Int])),
        value: Box::new(ty.clone()),
        frozen: true,
    };
    let t = [asc(map)];
    let one = 1i32.to_be_bytes().to_vec();
    let short = ser_elements(
        1,
        &[ser_tuple(&[Some(one.clone())]), ser_tuple(&[text("x")])],
    );
    let full = ser_elements(
        1,
        &[
            ser_tuple(&[Some(one.clone()), None]),
            ser_tuple(&[text("x"), None]),
        ],
    );
    let key = encode_key(&t, &[&short]).unwrap();
    assert_eq!(key, encode_key(&t, &[&full]).unwrap());
    assert_eq!(decode_key(&t, &key).unwrap()[0].as_ref(), full.as_slice());
    // A set holding one value in both forms holds it twice.
    let set = CqlType::Set {
        element: Box::new(ty),
        frozen: true,
    };
    let twice = ser_elements(
        2,
        &[ser_tuple(&[text("foo")]), ser_tuple(&[text("foo"), None])],
    );
    assert!(matches!(
        encode_key(&[asc(set)], &[&twice]),
        Err(KeyError::InvalidValue { .. })
    ));
}

/// Keys written before tuples and UDTs dropped their trailing nulls kept a null marker (`01`)
/// for each; they still decode, to the same value, and sort next to the canonical key.
#[test]
fn keys_written_before_canonical_tuples_still_decode() {
    let t = [asc(CqlType::Tuple(vec![CqlType::Int, CqlType::Int]))];
    // (1, null): header, a value marker and the int 1, then the null marker and the end.
    let int_one = [0x03, 0x80, 0x00, 0x00, 0x01];
    let canonical = [&[0x02][..], &int_one, &[0x00]].concat();
    let old = [&[0x02][..], &int_one, &[0x01, 0x00]].concat();
    let one_null = ser_tuple(&[Some(1i32.to_be_bytes().to_vec()), None]);
    assert_eq!(
        encode_key(&t, &[&one_null]).unwrap().as_ref(),
        canonical.as_slice()
    );
    assert_eq!(
        decode_key(&t, &old).unwrap()[0].as_ref(),
        one_null.as_slice()
    );
    let one_zero = ser_tuple(&[
        Some(1i32.to_be_bytes().to_vec()),
        Some(0i32.to_be_bytes().to_vec()),
    ]);
    let next = encode_key(&t, &[&one_zero]).unwrap();
    assert!(canonical < old && old.as_slice() < next.as_ref());
    // Inside a list: [(1, null)] as the old encoder wrote it.
    let t = [asc(CqlType::List {
        element: Box::new(CqlType::Tuple(vec![CqlType::Int, CqlType::Int])),
        frozen: true,
    })];
    let old = [&[0x02, 0x03][..], &int_one, &[0x01, 0x00, 0x00]].concat();
    assert_eq!(
        decode_key(&t, &old).unwrap()[0].as_ref(),
        ser_elements(1, &[one_null]).as_slice()
    );
}

#[test]
fn largest_values_round_trip() {
    let decimal = [asc(CqlType::Decimal)];
    let mut v = 7i32.to_be_bytes().to_vec();
    v.extend(
        (0..khata_types::clustering::MAX_DECIMAL_UNSCALED_SIZE_BYTES)
            .map(|i| (i * 151 % 251) as u8 | 0x80),
    );
    let key = encode_key(&decimal, &[&v]).unwrap();
    assert_eq!(
        decode_key(&decimal, &key).unwrap()[0].as_ref(),
        canonical_number(&CqlType::Decimal, &v).as_slice()
    );
    v.push(1);
    assert!(matches!(
        encode_key(&decimal, &[&v]),
        Err(KeyError::InvalidValue { .. })
    ));

    let varint = [desc(CqlType::Varint)];
    let v = vec![0x9Au8; khata_types::clustering::MAX_CLUSTERING_VALUE_SIZE_BYTES];
    let key = encode_key(&varint, &[&v]).unwrap();
    assert_eq!(decode_key(&varint, &key).unwrap()[0].as_ref(), v.as_slice());
}
