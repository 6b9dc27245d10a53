//! Go's `fmt` for template values: `%v` printing of every value kind (maps sorted, `<nil>`,
//! shortest floats with Go's exponent threshold), `Sprint`/`Sprintln` spacing rules, and
//! `Sprintf` with flags, width, precision, argument errors (`%!d(float64=1)`, `%!s(MISSING)`,
//! `%!(EXTRA …)`) as Go prints them.

use super::value::{ListKind, Value};

/// Decimal digits and exponent of the shortest representation that round-trips
/// (`1234.5` → ("12345", 3)), or of `precision` significant digits.
fn decimal_digits(f: f64, precision: Option<usize>) -> (String, i32) {
    let text = match precision {
        Some(p) => format!("{:.*e}", p.saturating_sub(1), f.abs()),
        None => format!("{:e}", f.abs()),
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    (digits, exp.parse().unwrap_or(0))
}

fn exp_suffix(exp: i32, upper: bool) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{}{sign}{:02}", if upper { 'E' } else { 'e' }, exp.abs())
}

/// Go's `encoding/json` float form: shortest digits, `'e'` form below 1e-6 or from 1e21, exponent
/// cleaned. None for NaN and infinities, which JSON cannot hold.
pub fn format_float_json(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{f:e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return Some(format!("{mantissa}e{sign}{:02}", exp.abs()).replace("e-0", "e-").replace("e+0", "e+"));
    }
    // Fixed notation with the shortest round-trip digits.
    let text = format!("{f}");
    Some(if text == "-0" { "-0".into() } else { text })
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`: shortest digits; exponent form when the decimal
/// exponent is below -4 or at least 6 (Go's threshold for shortest `%g`/`%v`).
pub fn format_float_shortest(f: f64) -> String {
    format_float_g(f, None, false)
}

/// `%g` / `%G` with optional precision (significant digits).
pub fn format_float_g(f: f64, precision: Option<usize>, upper: bool) -> String {
    if let Some(special) = special_float(f, upper) {
        return special;
    }
    let negative = f.is_sign_negative();
    let precision = precision.map(|p| p.max(1));
    let (mut digits, exp) = if f == 0.0 { ("0".to_string(), 0) } else { decimal_digits(f, precision) };
    if precision.is_some() {
        while digits.len() > 1 && digits.ends_with('0') {
            digits.pop();
        }
    }
    let eprec = match precision {
        None => 6,
        Some(p) => {
            let nd = digits.len() as i32;
            let dp = exp + 1;
            if (p as i32) > nd && nd >= dp {
                nd
            } else {
                p as i32
            }
        }
    };
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&exp_suffix(exp, upper));
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = (exp + 1) as usize;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

fn special_float(f: f64, upper: bool) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else {
        let _ = upper;
        None
    }
}

/// `%e` with precision (default 6).
pub fn format_float_e(f: f64, precision: usize, upper: bool) -> String {
    if let Some(special) = special_float(f, upper) {
        return special;
    }
    let text = format!("{:.*e}", precision, f);
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    format!("{mantissa}{}", exp_suffix(exp.parse().unwrap_or(0), upper))
}

/// `%x` / `%X` of a float: `strconv.FormatFloat(f, 'x', -1, 64)`, e.g. `0x1.8p+00`.
pub fn format_float_hex(f: f64, upper: bool) -> String {
    if let Some(special) = special_float(f, upper) {
        return special;
    }
    let bits = f.to_bits();
    let negative = bits >> 63 == 1;
    let mut exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mantissa = bits & ((1u64 << 52) - 1);
    let text = if exp == 0 && mantissa == 0 {
        "0x0p+00".to_string()
    } else {
        if exp == 0 {
            // Subnormal: normalise so the leading digit is 1.
            exp = 1;
            while mantissa & (1u64 << 52) == 0 {
                mantissa <<= 1;
                exp -= 1;
            }
            mantissa &= (1u64 << 52) - 1;
        }
        let e = exp - 1023;
        let mut digits = format!("{mantissa:013x}");
        while digits.ends_with('0') {
            digits.pop();
        }
        let frac = if digits.is_empty() { String::new() } else { format!(".{digits}") };
        let sign = if e < 0 { '-' } else { '+' };
        format!("0x1{frac}p{sign}{:02}", e.abs())
    };
    let text = if negative { format!("-{text}") } else { text };
    if upper {
        text.to_uppercase()
    } else {
        text
    }
}

/// `%f` with precision (default 6).
pub fn format_float_f(f: f64, precision: usize) -> String {
    if let Some(special) = special_float(f, false) {
        return special;
    }
    format!("{:.*}", precision, f)
}

/// `fmt.Sprint(v)` of one value: `%v`.
pub fn sprint_value(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, &Spec::plain('v'), true);
    out
}

/// `fmt.Sprint(args…)`: a space between operands when neither side is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        let is_string = matches!(arg, Value::String(_));
        if i > 0 && !is_string && !matches!(args[i - 1], Value::String(_)) {
            out.push(' ');
        }
        write_value(&mut out, arg, &Spec::plain('v'), true);
    }
    out
}

/// `fmt.Sprintln(args…)`: spaces between all operands, newline at the end.
pub fn sprintln(args: &[Value]) -> String {
    let parts: Vec<String> = args.iter().map(sprint_value).collect();
    parts.join(" ") + "\n"
}

#[derive(Debug, Clone, Default)]
struct Spec {
    verb: char,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
    plus_v: bool,
}

impl Spec {
    fn plain(verb: char) -> Spec {
        Spec { verb, ..Spec::default() }
    }
}

/// `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let chars: Vec<char> = format.chars().collect();
    let mut arg_index = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if i >= chars.len() {
            out.push_str("%!(NOVERB)");
            break;
        }
        let mut spec = Spec::default();
        while i < chars.len() {
            match chars[i] {
                '-' => {
                    spec.minus = true;
                    spec.zero = false;
                }
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = !spec.minus,
                _ => break,
            }
            i += 1;
        }
        // Width: digits or '*'.
        if i < chars.len() && chars[i] == '*' {
            i += 1;
            match args.get(arg_index) {
                Some(Value::Int(n)) | Some(Value::Int64(n)) => {
                    if *n < 0 {
                        spec.minus = true;
                        spec.zero = false;
                    }
                    spec.width = Some(n.unsigned_abs().min(1_000_000) as usize);
                }
                _ => out.push_str("%!(BADWIDTH)"),
            }
            arg_index += 1;
        } else {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i > start {
                spec.width = chars[start..i].iter().collect::<String>().parse::<usize>().ok().map(|w| w.min(1_000_000));
            }
        }
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            if i < chars.len() && chars[i] == '*' {
                i += 1;
                match args.get(arg_index) {
                    Some(Value::Int(n)) | Some(Value::Int64(n)) if *n >= 0 => spec.precision = Some((*n as usize).min(1_000_000)),
                    _ => out.push_str("%!(BADPREC)"),
                }
                arg_index += 1;
            } else {
                let start = i;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                spec.precision = Some(chars[start..i].iter().collect::<String>().parse::<usize>().unwrap_or(0).min(1_000_000));
            }
        }
        if i >= chars.len() {
            out.push_str("%!(NOVERB)");
            break;
        }
        spec.verb = chars[i];
        i += 1;
        if spec.verb == 'v' {
            // Go turns %+v / %#v into "plusV"/"sharpV" and drops the plain flags.
            spec.plus_v = spec.plus;
            spec.plus = false;
        }
        if spec.verb == '%' {
            out.push('%');
            continue;
        }
        match args.get(arg_index) {
            None => {
                out.push_str(&format!("%!{}(MISSING)", spec.verb));
            }
            Some(arg) => {
                arg_index += 1;
                write_value(&mut out, arg, &spec, true);
            }
        }
    }
    if arg_index < args.len() {
        out.push_str("%!(EXTRA ");
        let extras: Vec<String> = args[arg_index..]
            .iter()
            .map(|a| if a.is_nil() { "<nil>".to_string() } else { format!("{}={}", a.type_name(), sprint_value(a)) })
            .collect();
        out.push_str(&extras.join(", "));
        out.push(')');
    }
    out
}

fn pad(out: &mut String, text: &str, spec: &Spec) {
    let len = text.chars().count();
    match spec.width {
        Some(w) if w > len => {
            let fill = w - len;
            if spec.minus {
                out.push_str(text);
                out.extend(std::iter::repeat_n(' ', fill));
            } else {
                // Go pads with zeros for every kind when the 0 flag is set.
                out.extend(std::iter::repeat_n(if spec.zero { '0' } else { ' ' }, fill));
                out.push_str(text);
            }
        }
        _ => out.push_str(text),
    }
}

/// Pads a number: zero padding goes after the sign.
fn pad_number(out: &mut String, text: &str, spec: &Spec) {
    if spec.zero && !spec.minus {
        if let Some(w) = spec.width {
            let len = text.chars().count();
            if w > len {
                let (sign, rest) = match text.chars().next() {
                    Some(c @ ('-' | '+' | ' ')) => (c.to_string(), &text[1..]),
                    _ => (String::new(), text),
                };
                out.push_str(&sign);
                out.extend(std::iter::repeat_n('0', w - len));
                out.push_str(rest);
                return;
            }
        }
    }
    pad(out, text, spec);
}

/// `%!verb(type=value)`, the value printed with the same flags under `%v`.
fn bad_verb_spec(out: &mut String, v: &Value, spec: &Spec) {
    let verb = spec.verb;
    if v.is_nil() {
        out.push_str(&format!("%!{verb}(<nil>)"));
        return;
    }
    out.push_str(&format!("%!{verb}({}=", v.type_name()));
    let as_v = Spec { verb: 'v', ..spec.clone() };
    write_value(out, v, &as_v, false);
    out.push(')');
}

fn signed(text: String, negative: bool, spec: &Spec) -> String {
    if negative {
        format!("-{text}")
    } else if spec.plus {
        format!("+{text}")
    } else if spec.space {
        format!(" {text}")
    } else {
        text
    }
}

fn write_int(out: &mut String, v: &Value, n: i128, spec: &Spec) {
    let negative = n < 0;
    let magnitude = n.unsigned_abs();
    let text = match spec.verb {
        'd' | 'v' => magnitude.to_string(),
        'b' => format!("{magnitude:b}"),
        'o' => {
            let t = format!("{magnitude:o}");
            if spec.sharp && t != "0" {
                format!("0{t}")
            } else {
                t
            }
        }
        'O' => format!("0o{magnitude:o}"),
        'x' => {
            let t = format!("{magnitude:x}");
            if spec.sharp {
                format!("0x{t}")
            } else {
                t
            }
        }
        'X' => {
            let t = format!("{magnitude:X}");
            if spec.sharp {
                format!("0X{t}")
            } else {
                t
            }
        }
        'c' => return pad(out, &char::from_u32(n as u32).unwrap_or('\u{FFFD}').to_string(), spec),
        'q' => return pad(out, &quote_rune(char::from_u32(n as u32).unwrap_or('\u{FFFD}')), spec),
        'U' => return pad(out, &format!("U+{:04X}", n as i64 as u64), spec),
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => return bad_verb_spec(out, v, spec),
        _ => return bad_verb_spec(out, v, spec),
    };
    let text = match spec.precision {
        Some(p) if text.len() < p => format!("{}{text}", "0".repeat(p - text.len())),
        Some(0) if magnitude == 0 => String::new(),
        _ => text,
    };
    let zero_ok = spec.precision.is_none();
    let spec = Spec { zero: spec.zero && zero_ok, ..spec.clone() };
    pad_number(out, &signed(text, negative, &spec), &spec);
}

fn write_float(out: &mut String, v: &Value, f: f64, spec: &Spec) {
    let text = match spec.verb {
        'v' | 'g' => format_float_g(f, spec.precision, false),
        'G' => format_float_g(f, spec.precision, true),
        'e' => format_float_e(f, spec.precision.unwrap_or(6), false),
        'E' => format_float_e(f, spec.precision.unwrap_or(6), true),
        'f' | 'F' => format_float_f(f, spec.precision.unwrap_or(6)),
        'x' => format_float_hex(f, false),
        'X' => format_float_hex(f, true),
        _ => return bad_verb_spec(out, v, spec),
    };
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (false, text.trim_start_matches('+').to_string()),
    };
    let text = if body == "Inf" && !negative {
        if spec.plus {
            "+Inf".to_string()
        } else if spec.space {
            " Inf".to_string()
        } else {
            "+Inf".to_string()
        }
    } else {
        signed(body, negative, spec)
    };
    pad_number(out, &text, spec);
}

fn write_string(out: &mut String, v: &Value, s: &str, spec: &Spec) {
    let truncated: String = match spec.precision {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    match spec.verb {
        'v' | 's' => {
            if spec.sharp && spec.verb == 'v' {
                pad(out, &go_quote(&truncated), spec)
            } else {
                pad(out, &truncated, spec)
            }
        }
        'q' => {
            let quoted =
                if spec.sharp && !truncated.contains('`') && truncated.chars().all(|c| c != '\u{FFFD}' && (!c.is_control() || c == '\t')) {
                    format!("`{truncated}`")
                } else if spec.plus {
                    go_quote_ascii(&truncated)
                } else {
                    go_quote(&truncated)
                };
            pad(out, &quoted, spec)
        }
        'x' | 'X' => {
            let bytes = truncated.as_bytes();
            let text = hex_bytes(bytes, spec);
            pad(out, &text, spec)
        }
        _ => bad_verb_spec(out, v, spec),
    }
}

fn hex_bytes(bytes: &[u8], spec: &Spec) -> String {
    let upper = spec.verb == 'X';
    let mut text = String::new();
    for (i, b) in bytes.iter().enumerate() {
        if spec.space && i > 0 {
            text.push(' ');
        }
        if spec.sharp && (spec.space || i == 0) {
            text.push_str(if upper { "0X" } else { "0x" });
        }
        if upper {
            text.push_str(&format!("{b:02X}"));
        } else {
            text.push_str(&format!("{b:02x}"));
        }
    }
    text
}

/// Writes `v` under `spec`. `top` is false inside containers, where Go prints nil as `<nil>`
/// for every verb.
/// Printing stops growing past this size (cyclic or exponentially shared maps would not end).
const MAX_PRINT_BYTES: usize = 64 * 1024 * 1024;

fn write_value(out: &mut String, v: &Value, spec: &Spec, top: bool) {
    if out.len() > MAX_PRINT_BYTES {
        return;
    }
    if super::value::deeper(|| write_value_inner(out, v, spec, top)).is_none() {
        out.push_str("<max depth exceeded>");
    }
}

fn write_value_inner(out: &mut String, v: &Value, spec: &Spec, top: bool) {
    if spec.verb == 'T' {
        return pad(out, &v.type_name(), spec);
    }
    match v {
        Value::Invalid => {
            if top && spec.verb != 'v' {
                bad_verb_spec(out, v, spec)
            } else {
                pad(out, "<nil>", spec)
            }
        }
        Value::Nil => match spec.verb {
            'v' => pad(out, if spec.sharp && !top { "interface {}(nil)" } else { "<nil>" }, spec),
            _ if !top => pad(out, "<nil>", spec),
            _ => bad_verb_spec(out, v, spec),
        },
        Value::Bool(b) => match spec.verb {
            'v' | 't' => pad(out, if *b { "true" } else { "false" }, spec),
            _ => bad_verb_spec(out, v, spec),
        },
        Value::Int(n) | Value::Int64(n) => write_int(out, v, *n as i128, spec),
        Value::Uint(n) => write_int(out, v, *n as i128, spec),
        Value::Float(f) => write_float(out, v, *f, spec),
        Value::String(s) => write_string(out, v, s, spec),
        Value::Bytes(b) => match spec.verb {
            's' => pad(out, &String::from_utf8_lossy(b), spec),
            'q' => pad(out, &go_quote(&String::from_utf8_lossy(b)), spec),
            'x' | 'X' => pad(out, &hex_bytes(b, spec), spec),
            _ => {
                out.push('[');
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    write_int(out, &Value::Uint(*byte as u64), *byte as i128, spec);
                }
                out.push(']');
            }
        },
        Value::List(list) => {
            if spec.sharp && spec.verb == 'v' {
                out.push_str(&v.type_name());
                out.push('{');
                for (i, item) in list.items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_go_syntax(out, item, list.kind == ListKind::Any);
                }
                out.push('}');
                return;
            }
            out.push('[');
            for (i, item) in list.items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_value(out, item, spec, false);
            }
            out.push(']');
        }
        Value::Map(m) => {
            if spec.sharp && spec.verb == 'v' {
                out.push_str(&v.type_name());
                out.push('{');
                for (i, (k, item)) in m.entries.borrow().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&go_quote(k));
                    out.push(':');
                    write_go_syntax(out, item, true);
                }
                out.push('}');
                return;
            }
            out.push_str("map[");
            for (i, (k, item)) in m.entries.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_value(out, &Value::str(k), spec, false);
                out.push(':');
                write_value(out, item, spec, false);
            }
            out.push(']');
        }
        Value::Object(o) => {
            if let Some(items) = o.items() {
                if !matches!(spec.verb, 'v' | 's') || o.has_method("String") {
                    return pad(out, &o.display(), spec);
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    write_value(out, item, spec, false);
                }
                out.push(']');
                return;
            }
            match spec.verb {
                'v' if spec.plus => pad(out, &o.display_plus(), spec),
                'v' | 's' => pad(out, &o.display(), spec),
                'q' => pad(out, &go_quote(&o.display()), spec),
                _ => bad_verb_spec(out, v, spec),
            }
        }
    }
}

/// `%#v` inside containers: Go syntax.
fn write_go_syntax(out: &mut String, v: &Value, in_interface: bool) {
    match v {
        Value::String(s) => out.push_str(&go_quote(s)),
        Value::Nil | Value::Invalid => out.push_str(if in_interface { "interface {}(nil)" } else { "nil" }),
        Value::Float(f) => {
            let text = format_float_shortest(*f);
            out.push_str(&text);
        }
        other => write_value(out, other, &Spec { sharp: true, ..Spec::plain('v') }, false),
    }
}

/// `strconv.Quote`: Go escapes, printable Unicode kept.
pub fn go_quote(s: &str) -> String {
    quote_with(s, false)
}

/// `strconv.QuoteToASCII`.
pub fn go_quote_ascii(s: &str) -> String {
    quote_with(s, true)
}

fn quote_with(s: &str, ascii: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"', ascii);
    }
    out.push('"');
    out
}

fn quote_rune(c: char) -> String {
    let mut out = String::from("'");
    push_escaped(&mut out, c, '\'', false);
    out.push('\'');
    out
}

fn push_escaped(out: &mut String, c: char, quote: char, ascii: bool) {
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0C' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0B' => out.push_str("\\v"),
        '\\' => out.push_str("\\\\"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c if (c as u32) < 0x80 => {
            if c.is_ascii_graphic() || c == ' ' {
                out.push(c);
            } else {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
        }
        c if !ascii && is_go_printable(c) => out.push(c),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// `unicode.IsPrint` approximation: graphic characters and the ASCII space.
pub fn is_go_printable(c: char) -> bool {
    if c == '\u{FFFD}' {
        return true;
    }
    !(c.is_control()
        || matches!(c as u32, 0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x180E | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
        || c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_floats_follow_go() {
        let cases = [
            (100000.0, "100000"),
            (999999.0, "999999"),
            (1e6, "1e+06"),
            (123456.7, "123456.7"),
            (1234567.8, "1.2345678e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000123, "0.000123"),
            (1.2345678901234567e19, "1.2345678901234567e+19"),
            (1e20, "1e+20"),
            (3.0, "3"),
            (0.0025, "0.0025"),
            (-0.0, "-0"),
            (1.5e-7, "1.5e-07"),
            (1.23456789e8, "1.23456789e+08"),
        ];
        for (f, want) in cases {
            assert_eq!(format_float_shortest(f), want, "{f}");
        }
    }

    #[test]
    fn sprintf_matches_go() {
        let s = |x: &str| Value::str(x);
        assert_eq!(sprintf("%d", &[Value::Float(1.0)]), "%!d(float64=1)");
        assert_eq!(sprintf("%s", &[Value::Int(1)]), "%!s(int=1)");
        assert_eq!(sprintf("%s %s", &[s("a")]), "a %!s(MISSING)");
        assert_eq!(sprintf("%s", &[s("a"), s("b")]), "a%!(EXTRA string=b)");
        assert_eq!(sprintf("%.2f", &[Value::Float(1.5)]), "1.50");
        assert_eq!(sprintf("%q", &[s("a\"b")]), "\"a\\\"b\"");
        assert_eq!(sprintf("%v", &[Value::Nil]), "<nil>");
        assert_eq!(sprintf("%05d|%-4d|%x|%+d", &[Value::Int(42), Value::Int(7), Value::Int(255), Value::Int(3)]), "00042|7   |ff|+3");
        assert_eq!(
            sprintf("%6.2f|%e|%g", &[Value::Float(2.5159), Value::Float(1234.5678), Value::Float(0.000012)]),
            "  2.52|1.234568e+03|1.2e-05"
        );
        assert_eq!(sprintf("%t %v", &[Value::Bool(true), Value::Bool(false)]), "true false");
        assert_eq!(sprintf("%T", &[Value::list(vec![])]), "[]interface {}");
        assert_eq!(sprintf("100%%", &[]), "100%");
    }

    #[test]
    fn sprint_spacing() {
        let args = [Value::Int(1), Value::Int(2), Value::str("a"), Value::str("b"), Value::Int(3)];
        assert_eq!(sprint(&args), "1 2ab3");
        assert_eq!(sprintln(&[Value::Int(1), Value::str("a")]), "1 a\n");
    }

    #[test]
    fn quoting() {
        assert_eq!(go_quote("a\tb\u{1}é☃"), "\"a\\tb\\x01é☃\"");
        assert_eq!(go_quote("\u{feff}x"), "\"\\ufeffx\"");
    }
}
