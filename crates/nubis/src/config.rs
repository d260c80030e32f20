//! Loading the configuration file.

use std::path::Path;

use anyhow::Context;
use nubis_model::config::Config;

/// What the file sets `[controls] enabled` to, if it sets it (the default then depends on the
/// listen address).
pub fn controls_setting(path: Option<&Path>) -> anyhow::Result<Option<bool>> {
    let Some(p) = path else { return Ok(None) };
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    controls_setting_in(&text).with_context(|| format!("parsing {}", p.display()))
}

fn controls_setting_in(text: &str) -> anyhow::Result<Option<bool>> {
    let v: toml::Table = toml::from_str(text)?;
    Ok(v.get("controls").and_then(|c| c.get("enabled")).and_then(|e| e.as_bool()))
}

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
    fn the_controls_setting_is_read_only_when_the_file_names_it() {
        assert_eq!(controls_setting_in("").unwrap(), None);
        assert_eq!(controls_setting_in("[controls]\n").unwrap(), None);
        assert_eq!(controls_setting_in("[controls]\nenabled = true\n").unwrap(), Some(true));
        assert_eq!(controls_setting_in("[controls]\nenabled = false\n").unwrap(), Some(false));
    }

    #[test]
    fn partial_files_override_what_they_name() {
        let c: Config = toml::from_str("[limits]\nrate_limit_requests = 5\n").unwrap();
        assert_eq!(c.limits.rate_limit_requests, 5);
        assert_eq!(c.limits.max_body_bytes, Config::default().limits.max_body_bytes);
        assert!(toml::from_str::<Config>("[limits]\nbogus = 1\n").is_err());
    }
}
