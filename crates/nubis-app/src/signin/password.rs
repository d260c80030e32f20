//! Password rules: what a password must look like, and argon2 hashing and checking.

use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use nubis_model::{Error, Result};

pub const MIN_LEN: usize = 10;
pub const MAX_LEN: usize = 128;
/// Long enough to need no mix of character kinds (a passphrase).
pub const PASSPHRASE_LEN: usize = 16;

pub const RULE: &str = "Must be 10-128 characters, must not contain the username, and must mix at least three of: \
     lowercase letters, uppercase letters, digits, other characters (or be at least 16 characters long)";

/// Why a password is refused, or `None` when it is acceptable for `username`.
pub fn problem(password: &str, username: &str) -> Option<&'static str> {
    let n = password.chars().count();
    if !(MIN_LEN..=MAX_LEN).contains(&n) {
        return Some(RULE);
    }
    if !username.is_empty() && password.to_lowercase().contains(&username.to_lowercase()) {
        return Some("Must not contain the username");
    }
    let kinds = [
        password.chars().any(|c| c.is_lowercase()),
        password.chars().any(|c| c.is_uppercase()),
        password.chars().any(|c| c.is_ascii_digit()),
        password.chars().any(|c| !c.is_alphanumeric()),
    ];
    if n < PASSPHRASE_LEN && kinds.iter().filter(|k| **k).count() < 3 {
        return Some(RULE);
    }
    if password.chars().all(|c| password.starts_with(c)) {
        return Some(RULE);
    }
    None
}

/// The argon2id PHC string of a password (salted; takes tens of milliseconds by design).
pub fn hash(password: &str) -> Result<String> {
    Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(Error::internal)
}

/// Whether `password` matches a PHC string.
pub fn verify(password: &str, phc: &str) -> bool {
    Argon2::default().verify_password(password.as_bytes(), phc).is_ok()
}

/// A hash of a random password, made once with the same parameters as every user's: checking a
/// password against it costs what checking a real user's does.
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash(&crate::auth::new_secret()).unwrap_or_default())
}

/// Checks a sign-in's password against the user's hash with `verify`. An unknown user, or one
/// without a password, is checked against [`dummy_hash`] and always fails: a wrong password
/// takes the same time whether or not the username exists.
pub fn check_with(stored: Option<&str>, password: &str, verify: impl FnOnce(&str, &str) -> bool) -> bool {
    match stored {
        Some(phc) => verify(password, phc),
        None => {
            verify(password, dummy_hash());
            false
        }
    }
}

/// [`check_with`] with argon2's [`verify`].
pub fn check(stored: Option<&str>, password: &str) -> bool {
    check_with(stored, password, verify)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strength_rules() {
        assert!(problem("short1A!", "ann").is_some());
        assert!(problem("alllowercaseletters", "ann").is_none());
        assert!(problem("lowercase12", "ann").is_some());
        assert!(problem("Lowercase12", "ann").is_none());
        assert!(problem("xxAnn-Password1", "ann").is_some());
        assert!(problem("aaaaaaaaaaaaaaaaaaaa", "ann").is_some());
    }

    #[test]
    fn an_unknown_user_is_checked_against_a_hash_of_the_same_cost() {
        let mut seen = None;
        let ok = check_with(None, "Correct-Horse-1", |p, phc| {
            seen = Some((p.to_string(), phc.to_string()));
            verify(p, phc)
        });
        assert!(!ok);
        let (p, phc) = seen.expect("the verifier runs for an unknown user");
        assert_eq!(p, "Correct-Horse-1");
        // The same algorithm and parameters as a real user's hash.
        let real = hash("Correct-Horse-1").unwrap();
        let params = |h: &str| h.rsplitn(3, '$').nth(2).unwrap().to_string();
        assert_eq!(params(&phc), params(&real));
        assert!(phc.starts_with("$argon2id$"));
        // Even the dummy's own password would not sign anyone in.
        assert!(!check_with(None, &p, |_, _| true));
        let mut called = false;
        assert!(check_with(Some(&real), "Correct-Horse-1", |p, h| {
            called = true;
            verify(p, h)
        }));
        assert!(called);
    }

    #[test]
    fn hashes_verify() {
        let h = hash("Correct-Horse-1").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("Correct-Horse-1", &h));
        assert!(!verify("Correct-Horse-2", &h));
        assert!(!verify("x", "not a hash"));
    }
}
