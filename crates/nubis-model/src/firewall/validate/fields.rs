//! The single values of a firewall request, each checked on its own: a firewall's label, a
//! `ports` string, and an `addresses` entry in IP/mask form. See [`super`] for the decisions.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Pieces of a ports string (a port counts one, a range two).
pub const MAX_PORT_PIECES: usize = 15;
/// The length of a firewall's label.
pub const LABEL_LEN: (usize, usize) = (3, 32);

/// Checks a firewall label: 3..32 characters, only ASCII letters, digits, `-`, `_` and `.`,
/// beginning and ending with a letter or digit, with none of `--`, `__`, `..`.
/// Returns the reason when it is refused. (The reference's regular expression for this label is
/// broken; this is the rule as the spec and the reference's prose write it.)
pub fn validate_label(label: &str) -> Option<String> {
    let n = label.chars().count();
    if !(LABEL_LEN.0..=LABEL_LEN.1).contains(&n) {
        return Some("Length must be 3-32 characters".into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !label.chars().all(allowed) {
        return Some("Must contain only letters, digits, hyphens (-), underscores (_) and periods (.)".into());
    }
    let b = label.as_bytes();
    if !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Some("Must begin and end with a letter or digit".into());
    }
    if label.contains("--") || label.contains("__") || label.contains("..") {
        return Some("Must not contain two hyphens (--), underscores (__) or periods (..) in a row".into());
    }
    None
}

/// Checks a `ports` string (a non-null one; null means all ports): a port, a range `a-b`, or a
/// comma-separated list of them with at most one space after each comma and no other spaces;
/// ports 1..65535 written without leading zeroes; a range's end greater than its start; at most
/// 15 pieces (a port counts one, a range two). Returns the reason when it is refused.
pub fn validate_ports(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("Must not be empty (use null for all ports)".into());
    }
    let mut pieces = 0usize;
    for (i, raw) in s.split(',').enumerate() {
        let item = if i > 0 { raw.strip_prefix(' ').unwrap_or(raw) } else { raw };
        if item.is_empty() {
            return Err("Must not contain an empty entry".into());
        }
        if item.chars().any(char::is_whitespace) {
            return Err(format!("Only one space is allowed, after a comma: {raw:?}"));
        }
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (port_number(a)?, port_number(b)?);
                if b <= a {
                    return Err(format!("A range's end must be greater than its start: {item:?}"));
                }
                pieces += 2;
            }
            None => {
                port_number(item)?;
                pieces += 1;
            }
        }
    }
    if pieces > MAX_PORT_PIECES {
        return Err(format!(
            "At most {MAX_PORT_PIECES} pieces are allowed (a port counts one, a range two); found {pieces}"
        ));
    }
    Ok(())
}

fn port_number(t: &str) -> Result<u16, String> {
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("Not a port number: {t:?}"));
    }
    if t.len() > 1 && t.starts_with('0') {
        return Err(format!("Ports must not have leading zeroes: {t:?}"));
    }
    match t.parse::<u32>() {
        Ok(n @ 1..=65535) => Ok(n as u16),
        _ => Err(format!("Ports must be between 1 and 65535: {t:?}")),
    }
}

/// The mask of `IP/mask`: decimal without leading zeroes, at most `max`.
fn mask_ok(m: &str, max: u8) -> bool {
    !m.is_empty()
        && m.len() <= 3
        && m.bytes().all(|c| c.is_ascii_digit())
        && !(m.len() > 1 && m.starts_with('0'))
        && m.parse::<u8>().is_ok_and(|n| n <= max)
}

pub(super) fn check_ipv4_entry(s: &str) -> Result<(), String> {
    let Some((ip, mask)) = s.split_once('/') else {
        return Err(if s.parse::<Ipv4Addr>().is_ok() {
            format!("Must be in IP/mask format (for a single address write {s}/32)")
        } else if s.parse::<IpAddr>().is_ok() {
            "Must be an IPv4 address (IPv6 addresses belong in ipv6)".into()
        } else {
            "Must be an IPv4 address in IP/mask format".into()
        });
    };
    if ip.parse::<Ipv4Addr>().is_err() {
        return Err(if ip.parse::<Ipv6Addr>().is_ok() {
            "Must be an IPv4 address (IPv6 addresses belong in ipv6)".into()
        } else {
            "Must be an IPv4 address in IP/mask format".into()
        });
    }
    if !mask_ok(mask, 32) {
        return Err("The mask must be a number from 0 to 32".into());
    }
    Ok(())
}

pub(super) fn check_ipv6_entry(s: &str) -> Result<(), String> {
    if s.contains('%') {
        return Err("Zone ids (RFC 4007, as in fe80::1%eth0) are not allowed".into());
    }
    let Some((ip, mask)) = s.split_once('/') else {
        return Err(if s.parse::<Ipv6Addr>().is_ok() {
            format!("Must be in IP/mask format (for a single address write {s}/128)")
        } else if s.parse::<IpAddr>().is_ok() {
            "Must be an IPv6 address (IPv4 addresses belong in ipv4)".into()
        } else {
            "Must be an IPv6 address in IP/mask format".into()
        });
    };
    if ip.parse::<Ipv6Addr>().is_err() {
        return Err(if ip.parse::<Ipv4Addr>().is_ok() {
            "Must be an IPv6 address (IPv4 addresses belong in ipv4)".into()
        } else {
            "Must be an IPv6 address in IP/mask format".into()
        });
    }
    if !mask_ok(mask, 128) {
        return Err("The prefix length must be a number from 0 to 128".into());
    }
    Ok(())
}
