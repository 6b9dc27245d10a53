//! The function map Helm gives templates: text/template's builtins, Sprig v3.3 (less `env` and
//! `expandenv`), and Helm's own (`include`, `tpl`, `required`, `fail`, `toYaml`, `lookup`, …),
//! with the conversions Sprig applies (`strval`, spf13/cast's `toInt64`/`toFloat64`).

mod certs;
mod convert;
mod crypto;
pub mod dates;
mod dicts;
mod encoding;
mod lists;
mod math;
mod misc;
mod random;
mod strings;
mod templates;

pub use convert::{strval, to_float64, to_int64};
pub use misc::{WARN_END, WARN_START};

use gotmpl::builtins::add_builtins;
use gotmpl::FuncMap;

/// Helm v4's template function map.
pub fn helm_funcs() -> FuncMap {
    let mut map = FuncMap::new();
    add_builtins(&mut map);
    strings::add(&mut map);
    lists::add(&mut map);
    dicts::add(&mut map);
    math::add(&mut map);
    encoding::add(&mut map);
    dates::add(&mut map);
    misc::add(&mut map);
    crypto::add(&mut map);
    certs::add(&mut map);
    map
}

/// Largest string or list a function may build; bigger results are refused, not allocated.
pub const MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;
pub const MAX_RESULT_ITEMS: usize = 4 * 1024 * 1024;
