//! A strict reader of the Prometheus text exposition format 0.0.4, for
//! tests: every line is a `# HELP`, a `# TYPE` or a sample; names and
//! labels are well formed; a family's TYPE comes once and before its
//! samples; a counter's name ends in `_total`. Shared with the binary's
//! test (crates/bin/tests) by path.

use std::collections::{BTreeMap, BTreeSet};

/// Each sample's value by `name{labels}` as written (labels sorted).
pub type Samples = BTreeMap<String, f64>;

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => s.parse().map_err(|_| format!("not a value: {s:?}")),
    }
}

/// `{a="1",b="x\"y"}` into sorted (name, value) pairs.
fn labels(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (name, after) = rest
            .split_once("=\"")
            .ok_or_else(|| format!("label without =\": {s:?}"))?;
        if !is_name(name) || name.contains(':') {
            return Err(format!("bad label name {name:?}"));
        }
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c @ ('\\' | '"'))) => value.push(c),
                    other => return Err(format!("bad escape {other:?} in {s:?}")),
                },
                Some((i, '"')) => break i,
                Some((_, c)) => value.push(c),
                None => return Err(format!("unterminated label value in {s:?}")),
            }
        };
        out.push((name.to_string(), value));
        rest = &after[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    out.sort();
    Ok(out)
}

/// Reads a whole exposition, or says which line is wrong and why.
pub fn parse(text: &str) -> Result<Samples, String> {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helped = BTreeSet::new();
    let mut samples = Samples::new();
    if !text.ends_with('\n') {
        return Err("the exposition must end with a newline".into());
    }
    for (n, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or_default();
            if !is_name(name) || !helped.insert(name.to_string()) {
                return Err(at("bad or repeated HELP".into()));
            }
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest
                .split_once(' ')
                .ok_or_else(|| at("TYPE without a type".into()))?;
            if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                return Err(at(format!("unknown type {kind}")));
            }
            if !is_name(name) || types.insert(name.into(), kind.into()).is_some() {
                return Err(at("bad or repeated TYPE".into()));
            }
            if kind == "counter" && !name.ends_with("_total") {
                return Err(at("a counter's name ends in _total".into()));
            }
            if samples.keys().any(|k| k.split('{').next() == Some(name)) {
                return Err(at("TYPE after its samples".into()));
            }
        } else if line.starts_with('#') || line.is_empty() {
            continue;
        } else {
            let (series, v) = line
                .rsplit_once(' ')
                .ok_or_else(|| at("sample without a value".into()))?;
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => {
                    let inner = rest
                        .strip_suffix('}')
                        .ok_or_else(|| at("unclosed labels".into()))?;
                    (name, labels(inner).map_err(at)?)
                }
                None => (series, Vec::new()),
            };
            if !is_name(name) {
                return Err(at("bad metric name".into()));
            }
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s).filter(|f| types.contains_key(*f)))
                .unwrap_or(name);
            if !types.contains_key(family) {
                return Err(at("sample without a TYPE before it".into()));
            }
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
            let key = match labels.is_empty() {
                true => name.to_string(),
                false => format!("{name}{{{}}}", labels.join(",")),
            };
            if samples.insert(key, value(v).map_err(at)?).is_some() {
                return Err(at("repeated series".into()));
            }
        }
    }
    Ok(samples)
}

#[test]
fn the_checker_refuses_what_the_format_does_not_allow() {
    let good = "# HELP a_total A.\n# TYPE a_total counter\na_total{node=\"1\"} 3\n";
    assert_eq!(parse(good).unwrap()["a_total{node=\"1\"}"], 3.0);
    for bad in [
        "a_total 3\n",
        "# TYPE a counter\na 3\n",
        "# TYPE a_total counter\na_total{node=\"1} 3\n",
        "# TYPE g gauge\ng three\n",
        "# TYPE g gauge\ng 1\ng 2\n",
        "# TYPE g gauge\ng 1",
        "# TYPE 1g gauge\n",
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}
