//! Floating-point numbers written as Java writes them (`Double.toString`, `Float.toString`),
//! for the places where Cassandra's text shows a Java number: values in cqlsh-facing results
//! and casts, option values in DESCRIBE and `system_schema`, and error messages.

/// Java's `Double.toString`: the shortest digits that read back to the same double, plain from
/// 10^-3 up to 10^7 (`0.001`, `123.0`) and in scientific notation outside (`1.0E7`, `1.0E-4`),
/// always with a digit after the point; `NaN`, `Infinity`, `-Infinity`.
pub fn java_double(f: f64) -> String {
    java_text(format!("{f:e}"), f.is_nan(), f.is_infinite(), f.abs())
}

/// Java's `Float.toString`, as [`java_double`] with the shortest digits of a float.
pub fn java_float(f: f32) -> String {
    java_text(
        format!("{f:e}"),
        f.is_nan(),
        f.is_infinite(),
        f64::from(f.abs()),
    )
}

/// `scientific` is Rust's `{:e}` of the number (`-8.5e0`, `1e7`, `1.25e-4`): its shortest
/// round-trip digits.
fn java_text(scientific: String, nan: bool, infinite: bool, magnitude: f64) -> String {
    if nan {
        return "NaN".into();
    }
    let negative = scientific.starts_with('-');
    let sign = if negative { "-" } else { "" };
    if infinite {
        return format!("{sign}Infinity");
    }
    if magnitude == 0.0 {
        return format!("{sign}0.0");
    }
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return scientific;
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    if (1e-3..1e7).contains(&magnitude) {
        // Plain: the point after `exponent + 1` digits, at least one digit on each side.
        let point = exponent + 1;
        let (int, frac) = if point <= 0 {
            (
                "0".to_string(),
                format!("{}{digits}", "0".repeat(point.unsigned_abs() as usize)),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{digits}{}", "0".repeat(point as usize - digits.len())),
                "0".to_string(),
            )
        } else {
            let (i, f) = digits.split_at(point as usize);
            (i.to_string(), f.to_string())
        };
        format!("{sign}{int}.{frac}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exponent}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_as_java_writes_them() {
        for (f, text) in [
            (1e20, "1.0E20"),
            (1e7, "1.0E7"),
            (9_999_999.0, "9999999.0"),
            (0.001, "0.001"),
            (0.01, "0.01"),
            (1.0, "1.0"),
            (2.5, "2.5"),
            (1.0e-4, "1.0E-4"),
            (6.71e-5, "6.71E-5"),
            (-1.25e-5, "-1.25E-5"),
            (123.123, "123.123"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_double(f), text);
        }
    }

    #[test]
    fn floats_as_java_writes_them() {
        for (f, text) in [
            (123.123, "123.123"),
            (1e10, "1.0E10"),
            (0.1, "0.1"),
            (1e18, "1.0E18"),
            (-2.5e17, "-2.5E17"),
            (f32::NAN, "NaN"),
            (f32::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_float(f), text);
        }
    }
}
