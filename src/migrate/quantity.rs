//! Kubernetes resource quantities (`500m`, `2`, `1.5`, `4Gi`, `1e3`) reduced to the whole number
//! that Go's `resource.Quantity.Value()` returns: the value rounded up, away from zero. Trainer 2.1
//! counts CPUs and GPUs per node this way (T@v2.1.0 `pkg/runtime/framework/plugins/torch/torch.go#L192-L204`,
//! `pkg/runtime/runtime.go#L259-L277`), so the converter must too. Written here because the Rust
//! Kubernetes crates carry quantities as opaque strings; the grammar follows
//! `k8s.io/apimachinery/pkg/api/resource/quantity.go` (decimal SI, binary SI, `e` exponents).

/// The rounded-up whole value of a quantity, or None when it is not a quantity, is negative, or
/// does not fit (a count of CPUs or GPUs never comes near that).
pub fn ceil_value(text: &str) -> Option<u64> {
    let s = text.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.starts_with('-') {
        return None;
    }
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && frac.is_empty()) || number.matches('.').count() > 1 || whole.len() + frac.len() > 30 {
        return None;
    }
    let digits: u128 = format!("{whole}{frac}").parse().ok()?;
    let (exp10, exp2): (i32, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        e if e.starts_with(['e', 'E']) => (e[1..].parse::<i32>().ok().filter(|x| x.abs() <= 40)?, 0),
        _ => return None,
    };
    let scale = exp10 - frac.len() as i32;
    let numerator = digits.checked_mul(1u128.checked_shl(exp2)?)?;
    let value = if scale >= 0 {
        numerator.checked_mul(10u128.checked_pow(scale as u32)?)?
    } else {
        let denominator = 10u128.checked_pow(scale.unsigned_abs())?;
        numerator.div_ceil(denominator)
    };
    u64::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::ceil_value;

    #[test]
    fn rounds_up_like_go_value() {
        for (text, want) in [
            ("4", Some(4)),
            ("500m", Some(1)),
            ("1500m", Some(2)),
            ("2000m", Some(2)),
            ("1.5", Some(2)),
            ("0.1", Some(1)),
            ("0", Some(0)),
            ("+3", Some(3)),
            ("1k", Some(1000)),
            ("1Ki", Some(1024)),
            ("1e3", Some(1000)),
            ("12e-1", Some(2)),
            (".5", Some(1)),
            ("1n", Some(1)),
        ] {
            assert_eq!(ceil_value(text), want, "{text}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_count() {
        for text in ["", "-1", "abc", "1.2.3", "4x", "1e999", "99999999999999999999999999999999999", "1Ei1", "."] {
            assert_eq!(ceil_value(text), None, "{text}");
        }
    }
}
