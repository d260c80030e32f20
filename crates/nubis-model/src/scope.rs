//! OAuth scopes: `*`, or a space-separated list of `area:read_only` / `area:read_write`.
//! `read_write` implies `read_only`.

use std::collections::BTreeMap;
use std::fmt;

/// An area of the API that scopes are granted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    Account,
    ChildAccount,
    Databases,
    Domains,
    Events,
    Firewall,
    Images,
    Instances,
    Ips,
    Lke,
    Longview,
    Nodebalancers,
    ObjectStorage,
    Stackscripts,
    Volumes,
    Vpc,
}

impl Area {
    pub const ALL: [Area; 16] = [
        Area::Account,
        Area::ChildAccount,
        Area::Databases,
        Area::Domains,
        Area::Events,
        Area::Firewall,
        Area::Images,
        Area::Instances,
        Area::Ips,
        Area::Lke,
        Area::Longview,
        Area::Nodebalancers,
        Area::ObjectStorage,
        Area::Stackscripts,
        Area::Volumes,
        Area::Vpc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Area::Account => "account",
            Area::ChildAccount => "child_account",
            Area::Databases => "databases",
            Area::Domains => "domains",
            Area::Events => "events",
            Area::Firewall => "firewall",
            Area::Images => "images",
            Area::Instances => "instances",
            Area::Ips => "ips",
            Area::Lke => "lke",
            Area::Longview => "longview",
            Area::Nodebalancers => "nodebalancers",
            Area::ObjectStorage => "object_storage",
            Area::Stackscripts => "stackscripts",
            Area::Volumes => "volumes",
            Area::Vpc => "vpc",
        }
    }

    pub fn parse(s: &str) -> Option<Area> {
        Area::ALL.into_iter().find(|a| a.name() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    ReadOnly,
    ReadWrite,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::ReadOnly => "read_only",
            Level::ReadWrite => "read_write",
        }
    }
}

/// What one scope names: an area and a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scope {
    pub area: Area,
    pub level: Level,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.area.name(), self.level.name())
    }
}

/// The scopes a token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scopes {
    All,
    Some(BTreeMap<Area, Level>),
}

impl Scopes {
    /// Parses a scope string. The error names the piece that is not a scope.
    pub fn parse(s: &str) -> Result<Scopes, String> {
        let s = s.trim();
        if s == "*" {
            return Ok(Scopes::All);
        }
        let mut map = BTreeMap::new();
        for piece in s.split([' ', ',']).filter(|p| !p.is_empty()) {
            if piece == "*" {
                return Ok(Scopes::All);
            }
            let (area, level) = piece.split_once(':').ok_or_else(|| format!("Invalid scope '{piece}'"))?;
            let area = Area::parse(area).ok_or_else(|| format!("Invalid scope '{piece}'"))?;
            let level = match level {
                "read_only" | "read" => Level::ReadOnly,
                "read_write" => Level::ReadWrite,
                _ => return Err(format!("Invalid scope '{piece}'")),
            };
            let e = map.entry(area).or_insert(level);
            *e = (*e).max(level);
        }
        if map.is_empty() {
            return Err("At least one scope is required".into());
        }
        Ok(Scopes::Some(map))
    }

    pub fn allows(&self, scope: Scope) -> bool {
        match self {
            Scopes::All => true,
            Scopes::Some(m) => m.get(&scope.area).is_some_and(|l| *l >= scope.level),
        }
    }

    /// True when every scope of `self` is also allowed by `other`.
    pub fn within(&self, other: &Scopes) -> bool {
        match (self, other) {
            (_, Scopes::All) => true,
            (Scopes::All, Scopes::Some(_)) => false,
            (Scopes::Some(m), o) => m.iter().all(|(a, l)| o.allows(Scope { area: *a, level: *l })),
        }
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scopes::All => f.write_str("*"),
            Scopes::Some(m) => {
                let mut first = true;
                for (a, l) in m {
                    if !first {
                        f.write_str(" ")?;
                    }
                    first = false;
                    write!(f, "{}:{}", a.name(), l.name())?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_implies_read_only() {
        let s = Scopes::parse("vpc:read_write events:read_only").unwrap();
        assert!(s.allows(Scope { area: Area::Vpc, level: Level::ReadOnly }));
        assert!(s.allows(Scope { area: Area::Vpc, level: Level::ReadWrite }));
        assert!(!s.allows(Scope { area: Area::Events, level: Level::ReadWrite }));
        assert!(!s.allows(Scope { area: Area::Account, level: Level::ReadOnly }));
        assert_eq!(s.to_string(), "events:read_only vpc:read_write");
    }

    #[test]
    fn rejects_unknown_scopes_and_compares_width() {
        assert!(Scopes::parse("vpc:admin").is_err());
        assert!(Scopes::parse("nothing:read_only").is_err());
        assert!(Scopes::parse("").is_err());
        let narrow = Scopes::parse("vpc:read_only").unwrap();
        let wide = Scopes::parse("vpc:read_write account:read_only").unwrap();
        assert!(narrow.within(&wide));
        assert!(!wide.within(&narrow));
        assert!(wide.within(&Scopes::All));
        assert!(!Scopes::All.within(&wide));
    }
}
