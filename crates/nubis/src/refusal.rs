//! How the binary words a refusal: one line per problem, never a Rust debug structure.

use nubis_model::Error;

/// An operator's command refused: `FIELD: reason` for each problem, on one line.
pub(crate) fn fail(e: Error) -> anyhow::Error {
    match e {
        Error::Invalid(v) => {
            let msgs: Vec<String> =
                v.iter().map(|f| format!("{}: {}", f.field.as_deref().unwrap_or("-"), f.reason)).collect();
            anyhow::anyhow!(msgs.join("; "))
        }
        other => plain(other),
    }
}

/// A command-line flag refused at start-up: `--FLAG: reason`, one line per problem (the field of
/// each problem is the flag's name).
pub(crate) fn flag(e: Error) -> anyhow::Error {
    match e {
        Error::Invalid(v) => {
            let lines: Vec<String> = v
                .iter()
                .map(|f| match f.field.as_deref() {
                    Some(name) => format!("--{name}: {}", sentence_case(&f.reason)),
                    None => sentence_case(&f.reason),
                })
                .collect();
            anyhow::anyhow!(lines.join("\n"))
        }
        other => plain(other),
    }
}

/// Any other error, as its message (a configuration refused at start-up arrives as an internal
/// error whose message already says what is wrong).
pub(crate) fn plain(e: Error) -> anyhow::Error {
    match e {
        Error::Internal(m) => anyhow::anyhow!(m),
        other => anyhow::anyhow!(other.to_string()),
    }
}

/// `Must be ...` → `must be ...`: the reason continues the line after the flag's name. A word in
/// capitals (`IPv4`, `URL`) stays as it is.
fn sentence_case(reason: &str) -> String {
    let mut chars = reason.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase() => {
            a.to_lowercase().chain(reason[a.len_utf8()..].chars()).collect()
        }
        _ => reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_refusal_is_one_line_naming_the_flag() {
        let e = flag(Error::invalid("bootstrap-token", "Must be at least 16 characters"));
        assert_eq!(format!("{e:#}"), "--bootstrap-token: must be at least 16 characters");
        let e = flag(Error::invalid("listen", "IPv4 only"));
        assert_eq!(format!("{e:#}"), "--listen: IPv4 only");
    }

    #[test]
    fn an_internal_message_is_shown_without_its_kind() {
        let e = plain(Error::Internal("configuration: billing: bad".into()));
        assert_eq!(format!("{e:#}"), "configuration: billing: bad");
    }
}
