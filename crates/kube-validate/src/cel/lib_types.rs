//! The opaque types of the Kubernetes CEL libraries: `Quantity` (exact, in nano-units, as
//! `resource.Quantity` keeps values), `URL`, `IP`, `CIDR` and `Semver`, with their member
//! functions. Written here because no crate implements Kubernetes' quantity grammar or the
//! library's exact function set; parsing follows apimachinery `resource.ParseQuantity` and the
//! `library/{quantity,urls,ip,cidr,semverlib}.go` files.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Key, Opaque};
use cel::{Context, ExecutionError, Value};

type R = Result<Value, ExecutionError>;

fn ferr(f: &str, m: impl ToString) -> ExecutionError {
    ExecutionError::function_error(f, m)
}

macro_rules! opaque {
    ($t:ty, $name:literal) => {
        impl Opaque for $t {
            fn runtime_type_name(&self) -> &str {
                $name
            }
        }
    };
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity(i128);
opaque!(Quantity, "kubernetes.Quantity");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}
opaque!(Url, "kubernetes.URL");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ip(IpAddr);
opaque!(Ip, "net.IP");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cidr(IpAddr, u8);
opaque!(Cidr, "net.CIDR");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Semver(semver::Version);
opaque!(Semver, "kubernetes.Semver");

const NANO: i128 = 1_000_000_000;

/// `resource.ParseQuantity` into nano-units (rounded up, as Quantity rounds to its scale).
pub fn parse_quantity(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_len = body.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
    let (num, suffix) = body.split_at(num_len);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    // value = digits × 10^-frac_len × multiplier
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 30 {
        return None;
    }
    let mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let mut exp10: i32 = -(frac_part.len() as i32);
    let mut bin: u32 = 0;
    match suffix {
        "" => {}
        "n" => exp10 -= 9,
        "u" => exp10 -= 6,
        "m" => exp10 -= 3,
        "k" => exp10 += 3,
        "M" => exp10 += 6,
        "G" => exp10 += 9,
        "T" => exp10 += 12,
        "P" => exp10 += 15,
        "E" => exp10 += 18,
        "Ki" => bin = 10,
        "Mi" => bin = 20,
        "Gi" => bin = 30,
        "Ti" => bin = 40,
        "Pi" => bin = 50,
        "Ei" => bin = 60,
        e if e.starts_with(['e', 'E']) => {
            let x: i32 = e[1..].parse().ok()?;
            if !(-100..=100).contains(&x) || e[1..].starts_with('+') && e.len() == 2 {
                return None;
            }
            exp10 += x;
        }
        _ => return None,
    }
    let mut v = mantissa.checked_mul(1i128.checked_shl(bin)?)?;
    let mut e = exp10 + 9; // to nano-units
    while e > 0 {
        v = v.checked_mul(10)?;
        e -= 1;
    }
    let mut rem = false;
    while e < 0 {
        rem |= v % 10 != 0;
        v /= 10;
        e += 1;
    }
    if rem {
        v += 1;
    }
    Some(if neg { -v } else { v })
}

fn opaque<T: Opaque + 'static>(v: T) -> Value {
    Value::Opaque(Arc::new(v))
}

fn as_q(v: &Value) -> Option<i128> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Quantity>().map(|q| q.0),
        Value::Int(i) => Some(*i as i128 * NANO),
        _ => None,
    }
}

fn as_semver(v: &Value) -> Option<&semver::Version> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Semver>().map(|s| &s.0),
        _ => None,
    }
}

pub fn opaque_cmp(a: &dyn Opaque, b: &dyn Opaque) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (a.downcast_ref::<Quantity>(), b.downcast_ref::<Quantity>()) {
        return Some(x.0.cmp(&y.0));
    }
    if let (Some(x), Some(y)) = (a.downcast_ref::<Semver>(), b.downcast_ref::<Semver>()) {
        return Some(x.0.cmp(&y.0));
    }
    None
}

fn compare(f: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    if let (Some(x), Some(y)) = (as_q(a), as_q(b)) {
        return Ok(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (as_semver(a), as_semver(b)) {
        return Ok(x.cmp(y));
    }
    Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", a.type_of())]))
}

fn parse_url(s: &str) -> Option<Url> {
    if s.is_empty() || s.contains(char::is_whitespace) {
        return None;
    }
    let (s, _) = s.split_once('#').unwrap_or((s, ""));
    if let Some(path) = s.strip_prefix('/') {
        let (p, q) = path.split_once('?').unwrap_or((path, ""));
        return Some(Url { scheme: String::new(), host: String::new(), path: format!("/{p}"), query: q.into() });
    }
    let (scheme, rest) = s.split_once(':')?;
    let mut c = scheme.chars();
    if !c.next()?.is_ascii_alphabetic() || !c.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
        return None;
    }
    let (host, rest) = match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find(['/', '?']).unwrap_or(r.len());
            let authority = &r[..end];
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            (host.to_string(), &r[end..])
        }
        None => (String::new(), rest),
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    Some(Url { scheme: scheme.to_string(), host, path: path.to_string(), query: query.to_string() })
}

/// `ip()` rejects IPv4-mapped IPv6 and zones, as the Kubernetes library does.
fn parse_ip(s: &str) -> Option<IpAddr> {
    if s.contains('%') {
        return None;
    }
    let ip: IpAddr = s.parse().ok()?;
    if let IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return None;
        }
    }
    Some(ip)
}

fn parse_cidr(s: &str) -> Option<Cidr> {
    let (ip, bits) = s.split_once('/')?;
    let ip = parse_ip(ip)?;
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some(Cidr(ip, bits))
}

fn mask(ip: IpAddr, bits: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = if bits == 0 { 0 } else { u32::MAX << (32 - bits as u32) };
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = if bits == 0 { 0 } else { u128::MAX << (128 - bits as u32) };
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

fn ip_of(v: &Value, f: &str) -> Result<IpAddr, ExecutionError> {
    match v {
        Value::String(s) => parse_ip(s).ok_or_else(|| ferr(f, format!("IP Address {s:?} parse error"))),
        Value::Opaque(o) => o.downcast_ref::<Ip>().map(|i| i.0).ok_or_else(|| ferr(f, "not an IP")),
        _ => Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", v.type_of())])),
    }
}

pub fn register(ctx: &mut Context<'static, 'static>) {
    // quantity
    let _ = ctx.add_function("quantity", |s: Arc<String>| -> R {
        parse_quantity(&s)
            .map(|q| opaque(Quantity(q)))
            .ok_or_else(|| ferr("quantity", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))
    });
    let _ = ctx.add_function("isQuantity", |s: Arc<String>| -> R { Ok(Value::Bool(parse_quantity(&s).is_some())) });
    let _ = ctx.add_function("sign", |This(q): This<Value>| -> R {
        let q = as_q(&q).ok_or_else(|| ferr("sign", "not a quantity"))?;
        Ok(Value::Int(q.signum() as i64))
    });
    let _ = ctx.add_function("isInteger", |This(q): This<Value>| -> R {
        let q = as_q(&q).ok_or_else(|| ferr("isInteger", "not a quantity"))?;
        Ok(Value::Bool(q % NANO == 0 && i64::try_from(q / NANO).is_ok()))
    });
    let _ = ctx.add_function("asInteger", |This(q): This<Value>| -> R {
        let q = as_q(&q).ok_or_else(|| ferr("asInteger", "not a quantity"))?;
        if q % NANO != 0 {
            return Err(ferr("asInteger", "cannot convert value to integer"));
        }
        i64::try_from(q / NANO).map(Value::Int).map_err(|_| ferr("asInteger", "cannot convert value to integer"))
    });
    let _ = ctx.add_function("asApproximateFloat", |This(q): This<Value>| -> R {
        let q = as_q(&q).ok_or_else(|| ferr("asApproximateFloat", "not a quantity"))?;
        Ok(Value::Float(q as f64 / NANO as f64))
    });
    for (name, sign) in [("add", 1i128), ("sub", -1i128)] {
        let _ = ctx.add_function(name, move |This(a): This<Value>, b: Value| -> R {
            match (as_q(&a), as_q(&b)) {
                (Some(x), Some(y)) => Ok(opaque(Quantity(x + sign * y))),
                _ => Err(ExecutionError::no_such_overload(name, vec![format!("{:?}", a.type_of())])),
            }
        });
    }
    let _ = ctx.add_function("isGreaterThan", |This(a): This<Value>, b: Value| -> R {
        Ok(Value::Bool(compare("isGreaterThan", &a, &b)? == Ordering::Greater))
    });
    let _ = ctx.add_function("isLessThan", |This(a): This<Value>, b: Value| -> R {
        Ok(Value::Bool(compare("isLessThan", &a, &b)? == Ordering::Less))
    });
    let _ = ctx.add_function("compareTo", |This(a): This<Value>, b: Value| -> R {
        Ok(Value::Int(match compare("compareTo", &a, &b)? {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }))
    });
    // urls
    let _ = ctx.add_function("url", |s: Arc<String>| -> R {
        parse_url(&s)
            .map(opaque)
            .ok_or_else(|| ferr("url", format!("URL parse error during conversion from string: parse {s:?}: invalid URI for request")))
    });
    let _ = ctx.add_function("isURL", |s: Arc<String>| -> R { Ok(Value::Bool(parse_url(&s).is_some())) });
    fn with_url(v: &Value, f: &str) -> Result<Url, ExecutionError> {
        match v {
            Value::Opaque(o) => o.downcast_ref::<Url>().cloned().ok_or_else(|| ferr(f, "not a URL")),
            _ => Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", v.type_of())])),
        }
    }
    let _ = ctx.add_function("getScheme", |This(u): This<Value>| -> R { Ok(Value::String(Arc::new(with_url(&u, "getScheme")?.scheme))) });
    let _ = ctx.add_function("getHost", |This(u): This<Value>| -> R { Ok(Value::String(Arc::new(with_url(&u, "getHost")?.host))) });
    let _ = ctx.add_function("getHostname", |This(u): This<Value>| -> R {
        let h = with_url(&u, "getHostname")?.host;
        let name = if let Some(rest) = h.strip_prefix('[') {
            rest.split_once(']').map_or(rest.to_string(), |(a, _)| a.to_string())
        } else {
            h.rsplit_once(':').map_or(h.clone(), |(a, _)| a.to_string())
        };
        Ok(Value::String(Arc::new(name)))
    });
    let _ = ctx.add_function("getPort", |This(u): This<Value>| -> R {
        let h = with_url(&u, "getPort")?.host;
        let tail = h.rsplit_once(']').map_or(h.as_str(), |(_, t)| t);
        Ok(Value::String(Arc::new(tail.rsplit_once(':').map(|(_, p)| p.to_string()).unwrap_or_default())))
    });
    let _ = ctx
        .add_function("getEscapedPath", |This(u): This<Value>| -> R { Ok(Value::String(Arc::new(with_url(&u, "getEscapedPath")?.path))) });
    let _ = ctx.add_function("getQuery", |This(u): This<Value>| -> R {
        let q = with_url(&u, "getQuery")?.query;
        let mut m: HashMap<Key, Vec<Value>> = HashMap::new();
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            m.entry(Key::String(Arc::new(k.to_string()))).or_default().push(Value::String(Arc::new(v.to_string())));
        }
        let m: HashMap<Key, Value> = m.into_iter().map(|(k, v)| (k, Value::List(Arc::new(v)))).collect();
        Ok(Value::Map(m.into()))
    });
    // ip / cidr
    let _ = ctx.add_function("isIP", |s: Arc<String>| -> R { Ok(Value::Bool(parse_ip(&s).is_some())) });
    let _ = ctx.add_function("isCIDR", |s: Arc<String>| -> R { Ok(Value::Bool(parse_cidr(&s).is_some())) });
    let _ = ctx.add_function("ip", |This(v): This<Value>| -> R {
        match &v {
            Value::Opaque(o) => match o.downcast_ref::<Cidr>() {
                Some(c) => Ok(opaque(Ip(c.0))),
                None => Err(ferr("ip", "not a CIDR")),
            },
            _ => Ok(opaque(Ip(ip_of(&v, "ip")?))),
        }
    });
    let _ = ctx.add_function("cidr", |s: Arc<String>| -> R {
        parse_cidr(&s).map(opaque).ok_or_else(|| {
            ferr("cidr", format!("network address parse error during conversion from string: network address {s:?} parse error"))
        })
    });
    let _ = ctx.add_function("family", |This(v): This<Value>| -> R { Ok(Value::Int(if ip_of(&v, "family")?.is_ipv4() { 4 } else { 6 })) });
    let _ =
        ctx.add_function("isUnspecified", |This(v): This<Value>| -> R { Ok(Value::Bool(ip_of(&v, "isUnspecified")?.is_unspecified())) });
    let _ = ctx.add_function("isLoopback", |This(v): This<Value>| -> R { Ok(Value::Bool(ip_of(&v, "isLoopback")?.is_loopback())) });
    let _ = ctx.add_function("isLinkLocalMulticast", |This(v): This<Value>| -> R {
        Ok(Value::Bool(match ip_of(&v, "isLinkLocalMulticast")? {
            IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
            IpAddr::V6(a) => a.segments()[0] & 0xff0f == 0xff02,
        }))
    });
    let _ = ctx.add_function("isLinkLocalUnicast", |This(v): This<Value>| -> R {
        Ok(Value::Bool(match ip_of(&v, "isLinkLocalUnicast")? {
            IpAddr::V4(a) => a.is_link_local(),
            IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
        }))
    });
    let _ = ctx.add_function("isGlobalUnicast", |This(v): This<Value>| -> R {
        let ip = ip_of(&v, "isGlobalUnicast")?;
        let special = ip.is_unspecified() || ip.is_loopback() || ip.is_multicast();
        let ll = match ip {
            IpAddr::V4(a) => a.is_link_local() || a.is_broadcast(),
            IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
        };
        Ok(Value::Bool(!special && !ll))
    });
    fn with_cidr(v: &Value, f: &str) -> Result<Cidr, ExecutionError> {
        match v {
            Value::Opaque(o) => o.downcast_ref::<Cidr>().cloned().ok_or_else(|| ferr(f, "not a CIDR")),
            Value::String(s) => parse_cidr(s).ok_or_else(|| ferr(f, format!("network address {s:?} parse error"))),
            _ => Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", v.type_of())])),
        }
    }
    let _ = ctx.add_function("containsIP", |This(c): This<Value>, ip: Value| -> R {
        let c = with_cidr(&c, "containsIP")?;
        let ip = ip_of(&ip, "containsIP")?;
        Ok(Value::Bool(ip.is_ipv4() == c.0.is_ipv4() && mask(ip, c.1) == mask(c.0, c.1)))
    });
    let _ = ctx.add_function("containsCIDR", |This(c): This<Value>, other: Value| -> R {
        let c = with_cidr(&c, "containsCIDR")?;
        let o = with_cidr(&other, "containsCIDR")?;
        Ok(Value::Bool(o.0.is_ipv4() == c.0.is_ipv4() && o.1 >= c.1 && mask(o.0, c.1) == mask(c.0, c.1)))
    });
    let _ = ctx.add_function("prefixLength", |This(c): This<Value>| -> R { Ok(Value::Int(with_cidr(&c, "prefixLength")?.1 as i64)) });
    let _ = ctx.add_function("masked", |This(c): This<Value>| -> R {
        let c = with_cidr(&c, "masked")?;
        Ok(opaque(Cidr(mask(c.0, c.1), c.1)))
    });
    // semver
    let _ = ctx.add_function("isSemver", |s: Arc<String>| -> R { Ok(Value::Bool(semver::Version::parse(&s).is_ok())) });
    let _ = ctx.add_function("semver", |s: Arc<String>| -> R {
        semver::Version::parse(&s).map(|v| opaque(Semver(v))).map_err(|e| ferr("semver", e))
    });
    for (name, pick) in [("major", 0usize), ("minor", 1), ("patch", 2)] {
        let _ = ctx.add_function(name, move |This(v): This<Value>| -> R {
            let v = as_semver(&v).ok_or_else(|| ferr(name, "not a semver"))?;
            Ok(Value::Int([v.major, v.minor, v.patch][pick] as i64))
        });
    }
    // sets (cel-go ext.Sets)
    type Pair = (Arc<Vec<Value>>, Arc<Vec<Value>>);
    fn lists(a: &Value, b: &Value, f: &str) -> Result<Pair, ExecutionError> {
        match (a, b) {
            (Value::List(x), Value::List(y)) => Ok((x.clone(), y.clone())),
            _ => Err(ExecutionError::no_such_overload(f, vec![format!("{:?}", a.type_of())])),
        }
    }
    let _ = ctx.add_function("sets.contains", |a: Value, b: Value| -> R {
        let (x, y) = lists(&a, &b, "sets.contains")?;
        Ok(Value::Bool(y.iter().all(|v| x.contains(v))))
    });
    let _ = ctx.add_function("sets.equivalent", |a: Value, b: Value| -> R {
        let (x, y) = lists(&a, &b, "sets.equivalent")?;
        Ok(Value::Bool(y.iter().all(|v| x.contains(v)) && x.iter().all(|v| y.contains(v))))
    });
    let _ = ctx.add_function("sets.intersects", |a: Value, b: Value| -> R {
        let (x, y) = lists(&a, &b, "sets.intersects")?;
        Ok(Value::Bool(y.iter().any(|v| x.contains(v))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_exactly() {
        assert_eq!(parse_quantity("1"), Some(NANO));
        assert_eq!(parse_quantity("1500m"), Some(3 * NANO / 2));
        assert_eq!(parse_quantity("1Ki"), Some(1024 * NANO));
        assert_eq!(parse_quantity("1e3"), Some(1000 * NANO));
        assert_eq!(parse_quantity("-2.5G"), Some(-2_500_000_000 * NANO));
        assert_eq!(parse_quantity("1.5x"), None);
        assert_eq!(parse_quantity(""), None);
        assert_eq!(parse_quantity("1Ei"), Some((1i128 << 60) * NANO));
    }

    #[test]
    fn urls_and_cidrs() {
        let u = parse_url("https://user@example.com:8443/a/b?x=1").unwrap();
        assert_eq!((u.scheme.as_str(), u.host.as_str(), u.path.as_str(), u.query.as_str()), ("https", "example.com:8443", "/a/b", "x=1"));
        assert!(parse_url("example").is_none());
        let c = parse_cidr("10.0.0.0/8").unwrap();
        assert_eq!(mask("10.1.2.3".parse().unwrap(), c.1), c.0);
        assert!(parse_ip("::ffff:1.2.3.4").is_none());
    }
}
