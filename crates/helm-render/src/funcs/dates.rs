//! Sprig's date functions over a `time.Time`-like object, formatted with Go's reference-time
//! layouts (`2006-01-02T15:04:05Z07:00`). The machine's zone is not consulted: "Local" is UTC,
//! so renders do not depend on where they run.

use std::rc::Rc;

use super::strings::s;
use gotmpl::{FnError, FuncMap, GoError, Object, Param, Value};

/// An instant with a fixed UTC offset.
#[derive(Debug, Clone)]
pub struct Time {
    pub unix: i64,
    pub nanos: u32,
    pub offset: i32,
    pub zone: String,
}

impl Time {
    pub fn now() -> Time {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Time { unix: d.as_secs() as i64, nanos: d.subsec_nanos(), offset: 0, zone: "UTC".into() }
    }

    fn civil(&self) -> (i64, u32, u32, u32, u32, u32, u32) {
        let local = self.unix + self.offset as i64;
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400) as u32;
        let (y, m, d) = civil_from_days(days);
        let weekday = ((days + 4).rem_euclid(7)) as u32; // 1970-01-01 was a Thursday
        (y, m, d, secs / 3600, secs % 3600 / 60, secs % 60, weekday)
    }

    /// Go's `Time.Format`.
    pub fn format(&self, layout: &str) -> String {
        const MONTHS: [&str; 12] =
            ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
        const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
        let (year, month, day, hour, minute, second, weekday) = self.civil();
        let mut out = String::new();
        let mut rest = layout;
        while !rest.is_empty() {
            let tokens: &[(&str, &dyn Fn() -> String)] = &[
                ("January", &|| MONTHS[month as usize - 1].to_string()),
                ("Jan", &|| MONTHS[month as usize - 1][..3].to_string()),
                ("Monday", &|| DAYS[weekday as usize].to_string()),
                ("Mon", &|| DAYS[weekday as usize][..3].to_string()),
                ("2006", &|| format!("{year:04}")),
                ("Z07:00", &|| if self.offset == 0 { "Z".into() } else { zone(self.offset, true) }),
                ("Z0700", &|| if self.offset == 0 { "Z".into() } else { zone(self.offset, false) }),
                ("-07:00", &|| zone(self.offset, true)),
                ("-0700", &|| zone(self.offset, false)),
                ("MST", &|| self.zone.clone()),
                ("01", &|| format!("{month:02}")),
                ("02", &|| format!("{day:02}")),
                ("_2", &|| format!("{day:>2}")),
                ("06", &|| format!("{:02}", year % 100)),
                ("15", &|| format!("{hour:02}")),
                ("03", &|| format!("{:02}", if hour % 12 == 0 { 12 } else { hour % 12 })),
                ("04", &|| format!("{minute:02}")),
                ("05", &|| format!("{second:02}")),
                ("PM", &|| if hour >= 12 { "PM" } else { "AM" }.into()),
                ("pm", &|| if hour >= 12 { "pm" } else { "am" }.into()),
                (".000000000", &|| format!(".{:09}", self.nanos)),
                (".000000", &|| format!(".{:06}", self.nanos / 1000)),
                (".000", &|| format!(".{:03}", self.nanos / 1_000_000)),
                (".999999999", &|| trim_fraction(format!(".{:09}", self.nanos))),
                (".999999", &|| trim_fraction(format!(".{:06}", self.nanos / 1000))),
                (".999", &|| trim_fraction(format!(".{:03}", self.nanos / 1_000_000))),
                ("1", &|| month.to_string()),
                ("2", &|| day.to_string()),
                ("3", &|| (if hour % 12 == 0 { 12 } else { hour % 12 }).to_string()),
                ("4", &|| minute.to_string()),
                ("5", &|| second.to_string()),
            ];
            match tokens.iter().find(|(t, _)| rest.starts_with(t)) {
                Some((t, f)) => {
                    out.push_str(&f());
                    rest = &rest[t.len()..];
                }
                None => {
                    let c = rest.chars().next().unwrap_or(' ');
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }
}

fn trim_fraction(s: String) -> String {
    let t = s.trim_end_matches('0');
    if t == "." {
        String::new()
    } else {
        t.to_string()
    }
}

fn zone(offset: i32, colon: bool) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let o = offset.abs();
    if colon {
        format!("{sign}{:02}:{:02}", o / 3600, o % 3600 / 60)
    } else {
        format!("{sign}{:02}{:02}", o / 3600, o % 3600 / 60)
    }
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Go's `time.Parse` for numeric layouts (the forms charts use with `toDate`).
fn parse(layout: &str, text: &str) -> Option<Time> {
    let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut nanos, mut offset) =
        (1i64, 1u32, 1u32, 0u32, 0u32, 0u32, 0u32, 0i32);
    let (mut l, mut t) = (layout, text);
    let num = |t: &mut &str, min: usize, max: usize| -> Option<u32> {
        let n = t.bytes().take(max).take_while(|b| b.is_ascii_digit()).count();
        if n < min {
            return None;
        }
        let v = t[..n].parse().ok()?;
        *t = &t[n..];
        Some(v)
    };
    while !l.is_empty() {
        if let Some(r) = l.strip_prefix("2006") {
            year = num(&mut t, 4, 4)? as i64;
            l = r;
        } else if let Some(r) = l.strip_prefix("Z07:00") {
            if let Some(rest) = t.strip_prefix('Z') {
                t = rest;
            } else {
                let sign = if t.starts_with('-') { -1 } else { 1 };
                t = t.get(1..)?;
                let h = num(&mut t, 2, 2)? as i32;
                t = t.strip_prefix(':')?;
                let m = num(&mut t, 2, 2)? as i32;
                offset = sign * (h * 3600 + m * 60);
            }
            l = r;
        } else if let Some(r) = l.strip_prefix("01") {
            month = num(&mut t, 2, 2)?;
            l = r;
        } else if let Some(r) = l.strip_prefix("02") {
            day = num(&mut t, 2, 2)?;
            l = r;
        } else if let Some(r) = l.strip_prefix("15") {
            hour = num(&mut t, 1, 2)?;
            l = r;
        } else if let Some(r) = l.strip_prefix("04") {
            minute = num(&mut t, 2, 2)?;
            l = r;
        } else if let Some(r) = l.strip_prefix("05") {
            second = num(&mut t, 2, 2)?;
            if let Some(frac) = t.strip_prefix('.') {
                let n = frac.bytes().take_while(|b| b.is_ascii_digit()).count();
                let digits = format!("{:0<9}", &frac[..n.min(9)]);
                nanos = digits.parse().ok()?;
                t = &frac[n..];
            }
            l = r;
        } else if let Some(r) = l.strip_prefix('1') {
            month = num(&mut t, 1, 2)?;
            l = r;
        } else if let Some(r) = l.strip_prefix('2') {
            day = num(&mut t, 1, 2)?;
            l = r;
        } else {
            let c = l.chars().next()?;
            t = t.strip_prefix(c)?;
            l = &l[c.len_utf8()..];
        }
    }
    if !t.is_empty() || !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let unix = days_from_civil(year, month, day) * 86_400 + (hour * 3600 + minute * 60 + second) as i64 - offset as i64;
    Some(Time { unix, nanos, offset, zone: if offset == 0 { "UTC".into() } else { String::new() } })
}

impl Object for Time {
    fn type_name(&self) -> String {
        "time.Time".into()
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "Format" | "Unix" | "UnixNano" | "Year" | "Day" | "Hour" | "Minute" | "Second" | "String" | "UTC")
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, GoError>> {
        let (y, _m, d, h, mi, s, _) = self.civil();
        Some(Ok(match name {
            "Format" => Value::string(self.format(args.first().and_then(Value::as_str).unwrap_or(""))),
            "Unix" => Value::Int64(self.unix),
            "UnixNano" => Value::Int64(self.unix.saturating_mul(1_000_000_000).saturating_add(self.nanos as i64)),
            "Year" => Value::Int(y),
            "Day" => Value::Int(d as i64),
            "Hour" => Value::Int(h as i64),
            "Minute" => Value::Int(mi as i64),
            "Second" => Value::Int(s as i64),
            "String" => Value::string(self.display()),
            "UTC" => Value::Object(Rc::new(Time { offset: 0, zone: "UTC".into(), ..self.clone() })),
            _ => return None,
        }))
    }
    fn display(&self) -> String {
        self.format("2006-01-02 15:04:05.999999999 -0700 MST")
    }
    fn to_json(&self) -> Value {
        Value::string(self.format("2006-01-02T15:04:05.999999999Z07:00"))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn as_time(v: &Value) -> Time {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<Time>().cloned().unwrap_or_else(Time::now),
        Value::Int(n) | Value::Int64(n) => Time { unix: *n, nanos: 0, offset: 0, zone: "UTC".into() },
        // Sprig treats every other type (floats from values files included) as "now".
        _ => Time::now(),
    }
}

fn in_zone(t: Time, zone: &str) -> Time {
    let _ = zone; // Only UTC/Local are known here; Sprig falls back to UTC for unknown zones.
    Time { offset: 0, zone: "UTC".into(), ..t }
}

fn time_value(t: Time) -> Value {
    Value::Object(Rc::new(t))
}

/// Go's `Duration.String`.
pub fn duration_string(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let neg = nanos < 0;
    let u = nanos.unsigned_abs();
    let sign = if neg { "-" } else { "" };
    if u < 1_000_000_000 {
        let (unit, div) = if u < 1_000 {
            ("ns", 1)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", frac(u, div));
    }
    let secs = u / 1_000_000_000;
    let sub = u % 1_000_000_000;
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let sec_text = if sub == 0 { s.to_string() } else { frac(s * 1_000_000_000 + sub, 1_000_000_000) };
    if h > 0 {
        format!("{sign}{h}h{m}m{sec_text}s")
    } else if m > 0 {
        format!("{sign}{m}m{sec_text}s")
    } else {
        format!("{sign}{sec_text}s")
    }
}

fn frac(value: u128, div: u128) -> String {
    let whole = value / div;
    let rem = value % div;
    if rem == 0 {
        return whole.to_string();
    }
    let width = div.to_string().len() - 1;
    let digits = format!("{rem:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Go's `time.ParseDuration`.
fn parse_duration(text: &str) -> Option<i128> {
    let (neg, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total: f64 = 0.0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let n = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let number: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let unit_len = rest.bytes().take_while(|b| !b.is_ascii_digit() && *b != b'.').count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * scale;
    }
    Some(if neg { -(total as i128) } else { total as i128 })
}

pub(super) fn add(map: &mut FuncMap) {
    use Param::{Any, Str};
    map.add("now", &[], None, |_, _| Ok(time_value(Time::now())));
    map.add("date", &[Str, Any], None, |_, a| Ok(Value::string(as_time(&a[1]).format(s(&a[0])))));
    map.add("dateInZone", &[Str, Any, Str], None, |_, a| Ok(Value::string(in_zone(as_time(&a[1]), s(&a[2])).format(s(&a[0])))));
    map.add("htmlDate", &[Any], None, |_, a| Ok(Value::string(as_time(&a[0]).format("2006-01-02"))));
    map.add("htmlDateInZone", &[Any, Str], None, |_, a| Ok(Value::string(in_zone(as_time(&a[0]), s(&a[1])).format("2006-01-02"))));
    map.add("toDate", &[Str, Str], None, |_, a| {
        Ok(time_value(parse(s(&a[0]), s(&a[1])).unwrap_or(Time { unix: -62_135_596_800, nanos: 0, offset: 0, zone: "UTC".into() })))
    });
    map.add("mustToDate", &[Str, Str], None, |_, a| {
        parse(s(&a[0]), s(&a[1])).map(time_value).ok_or_else(|| {
            FnError::new(format!("parsing time {} as {}: cannot parse", gotmpl::fmt::go_quote(s(&a[1])), gotmpl::fmt::go_quote(s(&a[0]))))
        })
    });
    map.add("unixEpoch", &[Param::Time], None, |_, a| Ok(Value::string(as_time(&a[0]).unix.to_string())));
    for name in ["dateModify", "mustDateModify"] {
        map.add(name, &[Str, Param::Time], None, |_, a| {
            let t = as_time(&a[1]);
            let d = parse_duration(s(&a[0]))
                .ok_or_else(|| FnError::new(format!("time: invalid duration {}", gotmpl::fmt::go_quote(s(&a[0])))))?;
            let total = t.unix as i128 * 1_000_000_000 + t.nanos as i128 + d;
            Ok(time_value(Time { unix: total.div_euclid(1_000_000_000) as i64, nanos: total.rem_euclid(1_000_000_000) as u32, ..t }))
        });
    }
    map.add("ago", &[Any], None, |_, a| {
        let t = as_time(&a[0]);
        let now = Time::now();
        let secs = now.unix - t.unix;
        Ok(Value::string(duration_string(secs as i128 * 1_000_000_000)))
    });
    map.add("duration", &[Any], None, |_, a| {
        let n: i64 = match &a[0] {
            Value::String(s) => s.parse().unwrap_or(0),
            Value::Int64(n) => *n,
            _ => 0,
        };
        Ok(Value::string(duration_string(n as i128 * 1_000_000_000)))
    });
    map.add("durationRound", &[Any], None, |_, a| {
        let d: i128 = match &a[0] {
            Value::String(s) => parse_duration(s).unwrap_or(0),
            Value::Int64(n) => *n as i128,
            Value::Object(_) => (Time::now().unix - as_time(&a[0]).unix) as i128 * 1_000_000_000,
            _ => 0,
        };
        let u = d.unsigned_abs();
        let hour: u128 = 3_600_000_000_000;
        let units: [(u128, &str); 6] =
            [(hour * 24 * 365, "y"), (hour * 24 * 30, "mo"), (hour * 24, "d"), (hour, "h"), (60_000_000_000, "m"), (1_000_000_000, "s")];
        for (size, suffix) in units {
            if u > size {
                return Ok(Value::string(format!("{}{suffix}", u / size)));
            }
        }
        Ok(Value::str("0s"))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_go_layouts() {
        let t = parse("2006-01-02", "2024-03-05").unwrap();
        assert_eq!(t.unix, 1709596800);
        assert_eq!(t.format("2006-01-02T15:04"), "2024-03-05T00:00");
        assert_eq!(t.format("Mon Jan _2 15:04:05 MST 2006"), "Tue Mar  5 00:00:00 UTC 2024");
        assert_eq!(duration_string(95_000_000_000), "1m35s");
        assert_eq!(duration_string(3_600_000_000_000), "1h0m0s");
        assert_eq!(duration_string(1_500_000_000), "1.5s");
        assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
    }
}
