//! Sprig arithmetic: integer functions convert every operand with `toInt64` first (floats
//! truncated, int64 results); the `*f` functions do decimal arithmetic on each float's shortest
//! decimal form (shopspring/decimal), so `subf 1 0.1` is exactly `0.9`.

use super::convert::{strval, to_float64, to_int64};
use super::strings::s;
use gotmpl::{FnError, FuncMap, Param, Value};

type R = Result<Value, FnError>;

const DIV_ZERO: &str = "runtime error: integer divide by zero";

pub(super) fn add(map: &mut FuncMap) {
    use Param::*;
    map.add("add", &[], Some(Any), |_, a| Ok(Value::Int64(a.iter().fold(0i64, |acc, v| acc.wrapping_add(to_int64(v))))));
    map.add("add1", &[Any], None, |_, a| Ok(Value::Int64(to_int64(&a[0]).wrapping_add(1))));
    map.add("sub", &[Any, Any], None, |_, a| Ok(Value::Int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1])))));
    map.add("mul", &[Any], Some(Any), |_, a| Ok(Value::Int64(a[1..].iter().fold(to_int64(&a[0]), |acc, v| acc.wrapping_mul(to_int64(v))))));
    map.add("div", &[Any, Any], None, |_, a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err(DIV_ZERO.into());
        }
        Ok(Value::Int64(to_int64(&a[0]).wrapping_div(d)))
    });
    map.add("mod", &[Any, Any], None, |_, a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err(DIV_ZERO.into());
        }
        Ok(Value::Int64(to_int64(&a[0]).wrapping_rem(d)))
    });
    for name in ["max", "biggest"] {
        map.add(name, &[Any], Some(Any), |_, a| Ok(Value::Int64(a.iter().map(to_int64).max().unwrap_or(0))));
    }
    map.add("min", &[Any], Some(Any), |_, a| Ok(Value::Int64(a.iter().map(to_int64).min().unwrap_or(0))));
    map.add("maxf", &[Any], Some(Any), |_, a| Ok(Value::Float(a[1..].iter().map(to_float64).fold(to_float64(&a[0]), go_max))));
    map.add("minf", &[Any], Some(Any), |_, a| Ok(Value::Float(a[1..].iter().map(to_float64).fold(to_float64(&a[0]), go_min))));
    map.add("addf", &[], Some(Any), |_, a| decimal_op(&Value::Float(0.0), &a, Op::Add));
    map.add("add1f", &[Any], None, |_, a| decimal_op(&a[0], &[Value::Float(1.0)], Op::Add));
    map.add("subf", &[Any], Some(Any), |_, a| decimal_op(&a[0], &a[1..], Op::Sub));
    map.add("mulf", &[Any], Some(Any), |_, a| decimal_op(&a[0], &a[1..], Op::Mul));
    map.add("divf", &[Any], Some(Any), |_, a| decimal_op(&a[0], &a[1..], Op::Div));
    map.add("floor", &[Any], None, |_, a| Ok(Value::Float(to_float64(&a[0]).floor())));
    map.add("ceil", &[Any], None, |_, a| Ok(Value::Float(to_float64(&a[0]).ceil())));
    map.add("round", &[Any, Int], Some(Float), |_, a| {
        let round_on = match a.get(2) {
            Some(Value::Float(f)) => *f,
            _ => 0.5,
        };
        let places = match a[1] {
            Value::Int(p) => p as f64,
            _ => 0.0,
        };
        let pow = 10f64.powf(places);
        let digit = pow * to_float64(&a[0]);
        let fract = digit - digit.trunc();
        let rounded = if fract >= round_on { digit.ceil() } else { digit.floor() };
        Ok(Value::Float(rounded / pow))
    });
    map.add("int", &[Any], None, |_, a| Ok(Value::Int(to_int64(&a[0]))));
    map.add("int64", &[Any], None, |_, a| Ok(Value::Int64(to_int64(&a[0]))));
    map.add("float64", &[Any], None, |_, a| Ok(Value::Float(to_float64(&a[0]))));
    map.add("atoi", &[Str], None, |_, a| Ok(Value::Int(atoi(s(&a[0])))));
    map.add("toDecimal", &[Any], None, |_, a| Ok(Value::Int64(i64::from_str_radix(&strval(&a[0]), 8).unwrap_or(0))));
}

/// `strconv.Atoi`: optional sign and decimal digits, nothing else.
fn atoi(text: &str) -> i64 {
    text.parse::<i64>().unwrap_or(0)
}

fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// A decimal `mantissa × 10^exp`.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    mantissa: i128,
    exp: i32,
}

impl Decimal {
    /// shopspring `NewFromFloat`: the shortest decimal that round-trips.
    fn from_f64(f: f64) -> Option<Decimal> {
        if !f.is_finite() {
            return None;
        }
        if f == 0.0 {
            return Some(Decimal { mantissa: 0, exp: 0 });
        }
        let text = format!("{:e}", f);
        let (m, e) = text.split_once('e')?;
        let negative = m.starts_with('-');
        let digits: String = m.chars().filter(|c| c.is_ascii_digit()).collect();
        let exp: i32 = e.parse().ok()?;
        let mantissa: i128 = digits.parse().ok()?;
        Some(Decimal { mantissa: if negative { -mantissa } else { mantissa }, exp: exp - (digits.len() as i32 - 1) })
    }

    fn align(a: Decimal, b: Decimal) -> Option<(i128, i128, i32)> {
        let exp = a.exp.min(b.exp);
        let scale = |d: Decimal| -> Option<i128> { d.mantissa.checked_mul(10i128.checked_pow((d.exp - exp) as u32)?) };
        Some((scale(a)?, scale(b)?, exp))
    }

    fn apply(self, other: Decimal, op: Op) -> Option<Decimal> {
        match op {
            Op::Add | Op::Sub => {
                let (x, y, exp) = Decimal::align(self, other)?;
                let m = if matches!(op, Op::Add) { x.checked_add(y)? } else { x.checked_sub(y)? };
                Some(Decimal { mantissa: m, exp })
            }
            Op::Mul => Some(Decimal { mantissa: self.mantissa.checked_mul(other.mantissa)?, exp: self.exp + other.exp }),
            Op::Div => {
                if other.mantissa == 0 {
                    return None;
                }
                // shopspring rounds quotients to 16 decimal places, half away from zero.
                let places = 16;
                let shift = places + self.exp - other.exp;
                let (num, den) = if shift >= 0 {
                    (self.mantissa.checked_mul(10i128.checked_pow(shift as u32 + 1)?)?, other.mantissa)
                } else {
                    (self.mantissa.checked_mul(10)?, other.mantissa.checked_mul(10i128.checked_pow((-shift) as u32)?)?)
                };
                let q = num / den;
                let rounded = if q % 10 >= 5 || q % 10 <= -5 { q / 10 + q.signum() } else { q / 10 };
                Some(Decimal { mantissa: rounded, exp: -places })
            }
        }
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.mantissa, self.exp).parse().unwrap_or(0.0)
    }
}

fn decimal_op(first: &Value, rest: &[Value], op: Op) -> R {
    let mut acc_f = to_float64(first);
    let mut acc = Decimal::from_f64(acc_f);
    for v in rest {
        let x = to_float64(v);
        if let Op::Div = op {
            if x == 0.0 {
                return Err("decimal division by 0".into());
            }
        }
        acc = match (acc, Decimal::from_f64(x)) {
            (Some(a), Some(b)) => a.apply(b, op),
            _ => None,
        };
        // Beyond i128 the float result is exact enough for these magnitudes.
        acc_f = match op {
            Op::Add => acc_f + x,
            Op::Sub => acc_f - x,
            Op::Mul => acc_f * x,
            Op::Div => acc_f / x,
        };
        if let Some(d) = acc {
            acc_f = d.to_f64();
        }
        acc = acc.or_else(|| Decimal::from_f64(acc_f));
    }
    Ok(Value::Float(acc.map(Decimal::to_f64).unwrap_or(acc_f)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: R) -> f64 {
        match v.unwrap() {
            Value::Float(x) => x,
            _ => panic!(),
        }
    }

    #[test]
    fn decimal_float_math() {
        assert_eq!(f(decimal_op(&Value::Float(1.0), &[Value::Float(0.1)], Op::Sub)), 0.9);
        assert_eq!(f(decimal_op(&Value::Float(1.1), &[Value::Int(3)], Op::Mul)), 3.3);
        assert_eq!(f(decimal_op(&Value::Float(10.0), &[Value::Int(4)], Op::Div)), 2.5);
        assert_eq!(f(decimal_op(&Value::Float(0.0), &[Value::Int(1), Value::Float(2.5)], Op::Add)), 3.5);
        assert_eq!(f(decimal_op(&Value::Float(1.0), &[Value::Float(3.0)], Op::Div)), 0.3333333333333333);
        assert_eq!((atoi("12"), atoi("1.5"), atoi(" 3"), atoi("-7")), (12, 0, 0, -7));
    }
}
