//! Loading the configuration file.

use std::path::Path;

use anyhow::Context;
use nubis_model::config::Config;

pub fn load(path: Option<&Path>) -> anyhow::Result<Config> {
    match path {
        None => Ok(Config::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            toml::from_str(&text).with_context(|| format!("parsing {}", p.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_the_default_cloud() {
        let c: Config = toml::from_str("").unwrap();
        assert_eq!(c.regions.len(), Config::default().regions.len());
    }

    #[test]
    fn partial_files_override_what_they_name() {
        let c: Config = toml::from_str("[limits]\nrate_limit_requests = 5\n").unwrap();
        assert_eq!(c.limits.rate_limit_requests, 5);
        assert_eq!(c.limits.max_body_bytes, Config::default().limits.max_body_bytes);
        assert!(toml::from_str::<Config>("[limits]\nbogus = 1\n").is_err());
    }
}
