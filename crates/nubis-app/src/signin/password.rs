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
    fn hashes_verify() {
        let h = hash("Correct-Horse-1").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("Correct-Horse-1", &h));
        assert!(!verify("Correct-Horse-2", &h));
        assert!(!verify("x", "not a hash"));
    }
}
