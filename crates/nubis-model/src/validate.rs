//! Small checks shared by several areas. Area-specific rules live with their area in `nubis-app`.

/// Length in characters between `min` and `max`, inclusive.
pub fn len_between(s: &str, min: usize, max: usize) -> bool {
    let n = s.chars().count();
    n >= min && n <= max
}

/// The longest e-mail address, in characters.
pub const EMAIL_MAX_LEN: usize = 128;
/// [`is_email`] as a pattern: one `@`, no whitespace or control characters, a domain with a dot
/// that neither begins nor ends with one.
pub const EMAIL_PATTERN: &str = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f.][^@\s\x00-\x1f\x7f-\x9f]*\.[^@\s\x00-\x1f\x7f-\x9f]*[^@\s\x00-\x1f\x7f-\x9f.]$";

/// A plausible e-mail address: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else { return false };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        && s.chars().count() <= EMAIL_MAX_LEN
}

/// The length of a username.
pub const USERNAME_LEN: (usize, usize) = (3, 32);
/// [`is_username`] as a pattern (lengths apart).
pub const USERNAME_PATTERN: &str = "^[A-Za-z0-9]+([-_][A-Za-z0-9]+)*$";

/// Usernames: 3..32 characters, letters, digits, `-` and `_`, beginning and ending with a letter
/// or digit, with no two of `-`/`_` in a row.
pub fn is_username(s: &str) -> bool {
    let b = s.as_bytes();
    if !(USERNAME_LEN.0..=USERNAME_LEN.1).contains(&b.len()) {
        return false;
    }
    let sep = |c: u8| c == b'-' || c == b'_';
    b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || sep(c))
        && !b.windows(2).any(|w| sep(w[0]) && sep(w[1]))
}

/// [`is_hyphenated_label`] as a pattern.
pub const HYPHENATED_LABEL_PATTERN: &str = "^-?([A-Za-z0-9]+-)*[A-Za-z0-9]*$";

/// Letters, digits and hyphens, without two hyphens in a row (VPC and subnet labels).
pub fn is_hyphenated_label(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') && !s.contains("--")
}

/// [`is_dotted_label`] as a pattern (lengths apart): letters or digits at both ends, separated by
/// runs of `-`, `_` and `.` in which no character follows itself.
pub const DOTTED_LABEL_PATTERN: &str = concat!(
    r"^[A-Za-z0-9]((",
    // A run of separators with no character twice in a row, as a regular expression: `_` runs
    // (`\.?_(\._)*`) and `-` steps (`\.?-`) alternating, ending in an optional `.`.
    r"(\.?_(\._)*)?\.?-(\.-|\.?_(\._)*\.?-)*(\.?_(\._)*)?\.?",
    r"|(\.?_(\._)*)?\.?",
    r")[A-Za-z0-9])*$"
);

/// Labels of instances and balancers (reference rule): 3..64 (balancers 3..32) characters,
/// beginning and ending with a letter or digit, letters, digits, `-`, `_` and `.`,
/// with none of `--`, `__` or `..`.
pub fn is_dotted_label(s: &str, min: usize, max: usize) -> bool {
    let b = s.as_bytes();
    if b.len() < min || b.len() > max {
        return false;
    }
    b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.')
        && !s.contains("--")
        && !s.contains("__")
        && !s.contains("..")
}

/// The length of a tag.
pub const TAG_LEN: (usize, usize) = (3, 50);

/// Tags: 3..50 characters each.
pub fn tag_problem(tag: &str) -> Option<&'static str> {
    if !len_between(tag, TAG_LEN.0, TAG_LEN.1) { Some("Length must be 3-50 characters") } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames() {
        for ok in ["abc", "a-b_c", "user123", "A1b"] {
            assert!(is_username(ok), "{ok}");
        }
        for bad in ["ab", "-abc", "abc-", "a--b", "a_-b", "a b c", "ab.c", &"a".repeat(33)] {
            assert!(!is_username(bad), "{bad}");
        }
    }

    #[test]
    fn emails() {
        assert!(is_email("a@example.com"));
        for bad in ["a", "a@", "@b.c", "a@b", "a b@c.d", "a@@b.c", "a@.b", "a@b."] {
            assert!(!is_email(bad), "{bad}");
        }
    }

    #[test]
    fn labels() {
        assert!(is_hyphenated_label("my-vpc-1"));
        assert!(!is_hyphenated_label("my--vpc"));
        assert!(!is_hyphenated_label("my_vpc"));
        assert!(is_dotted_label("web.1-a_b", 3, 32));
        assert!(!is_dotted_label("web..1", 3, 32));
        assert!(!is_dotted_label("-web", 3, 32));
        assert!(!is_dotted_label("ab", 3, 32));
    }
}
