//! The request bodies of the VPC operations and their checks (spec 2.2, 2.3): every problem of
//! a request is reported at once, nested subnet fields as `subnets[1].ipv4`.

use ipnet::Ipv4Net;
use nubis_ipam::{first_overlap, validate_vpc_subnet};
use nubis_model::catalog::capability;
use nubis_model::grants::present;
use nubis_model::schema::{or_null, pattern, schema, text};
use nubis_model::validate::{HYPHENATED_LABEL_PATTERN, is_hyphenated_label, len_between};
use nubis_model::{Problems, Result};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa::openapi::Schema;

use super::ipv6::{Ipv6RangeRequest, RangeAsk, check_ipv6_list};
use crate::catalog::Catalog;

/// `POST /v4/vpcs`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct VpcCreate {
    /// 1..64 characters: ASCII letters, digits and hyphens, no two hyphens in a row; unique
    /// among the account's VPCs.
    #[schema(required = true, schema_with = label_schema)]
    pub label: Option<String>,
    /// At most 255 characters.
    #[schema(schema_with = description_schema)]
    pub description: Option<String>,
    /// A region with the `VPCs` capability.
    #[schema(required = true, value_type = String)]
    pub region: Option<String>,
    /// Subnets created with the VPC, all or none.
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub subnets: Option<Vec<SubnetCreate>>,
    /// At most one: the VPC's IPv6 range (`auto` or `/52`: picked from the region's IPv6 block;
    /// or a /52 of that block not used by another VPC or range).
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub ipv6: Option<Vec<Ipv6RangeRequest>>,
}

/// `POST /v4/vpcs/{vpc_id}/subnets`, and one entry of `subnets` in a VPC create.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct SubnetCreate {
    #[schema(required = true, schema_with = label_schema)]
    pub label: Option<String>,
    /// An IPv4 network in canonical CIDR form inside RFC 1918 space, prefix length 1..29, not
    /// overlapping `192.168.128.0/17` nor another subnet of the VPC.
    #[schema(required = true, value_type = String)]
    pub ipv4: Option<String>,
    /// At most one: the subnet's IPv6 range inside its VPC's (`auto`: a /56; `/52`..`/62`; or
    /// a range in CIDR form), not overlapping another subnet's. The VPC must have IPv6.
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub ipv6: Option<Vec<Ipv6RangeRequest>>,
}

/// `PUT /v4/vpcs/{vpc_id}`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct VpcUpdate {
    #[schema(schema_with = optional_label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = description_schema)]
    pub description: Option<String>,
}

/// `PUT /v4/vpcs/{vpc_id}/subnets/{vpc_subnet_id}`: only the label changes; sending `ipv4` is
/// refused.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct SubnetUpdate {
    #[schema(schema_with = optional_label_schema)]
    pub label: Option<String>,
    /// Refused in any form, even null: a subnet's range never changes.
    #[serde(default, deserialize_with = "present")]
    #[schema(schema_with = nubis_model::schema::absent)]
    pub ipv4: Option<Option<serde_json::Value>>,
}

pub(crate) const LABEL_RULE: &str =
    "Must only use ASCII letters, numbers, and dashes: 1-64 characters, without two dashes in a row";
const LABEL_LEN: (usize, usize) = (1, 64);
const DESCRIPTION_MAX: usize = 255;

fn label_schema() -> Schema {
    schema(pattern(LABEL_LEN.0, LABEL_LEN.1, HYPHENATED_LABEL_PATTERN))
}

fn optional_label_schema() -> Schema {
    schema(or_null(pattern(LABEL_LEN.0, LABEL_LEN.1, HYPHENATED_LABEL_PATTERN)))
}

fn description_schema() -> Schema {
    schema(or_null(text(0, DESCRIPTION_MAX)))
}

/// Checks a VPC or subnet label.
pub(crate) fn check_label(p: &mut Problems, field: &str, label: &str) {
    p.check(len_between(label, LABEL_LEN.0, LABEL_LEN.1) && is_hyphenated_label(label), field, LABEL_RULE);
}

pub(crate) fn check_description(p: &mut Problems, description: &str) {
    p.check(len_between(description, 0, DESCRIPTION_MAX), "description", "Length must be at most 255 characters");
}

/// A subnet that passed every check that does not need the database.
#[derive(Debug, Clone)]
pub(crate) struct ValidSubnet {
    pub label: String,
    pub net: Ipv4Net,
    pub ipv6: Option<RangeAsk>,
}

impl ValidSubnet {
    pub fn first(&self) -> u32 {
        u32::from(self.net.network())
    }
    pub fn last(&self) -> u32 {
        u32::from(self.net.broadcast())
    }
}

/// The checks of one subnet on its own, with fields relative to the subnet (`label`, `ipv4`).
pub(crate) fn check_subnet(s: &SubnetCreate) -> (Problems, Option<ValidSubnet>) {
    let mut p = Problems::new();
    let ipv6 = check_ipv6_list(&mut p, s.ipv6.as_deref(), false);
    match &s.label {
        None => p.add("label", "Label is required"),
        Some(l) => check_label(&mut p, "label", l),
    }
    let net = match &s.ipv4 {
        None => {
            p.add("ipv4", "IPv4 range is required");
            None
        }
        Some(v) => match validate_vpc_subnet(v) {
            Ok(n) => Some(n),
            Err(e) => {
                p.add("ipv4", e.to_string());
                None
            }
        },
    };
    let valid = match (p.is_empty(), &s.label, net) {
        (true, Some(label), Some(net)) => Some(ValidSubnet { label: label.clone(), net, ipv6 }),
        _ => None,
    };
    (p, valid)
}

/// A VPC create request that passed every check that does not need the database.
pub(crate) struct ValidVpc {
    pub label: String,
    pub description: String,
    pub region: String,
    pub ipv6: Option<RangeAsk>,
    pub subnets: Vec<ValidSubnet>,
}

/// Checks a whole VPC create request; the subnets are also checked against each other (labels
/// unique, ranges not overlapping), so that the VPC is created whole or not at all.
pub(crate) fn check_vpc_create(catalog: &Catalog, input: &VpcCreate) -> Result<ValidVpc> {
    let mut p = Problems::new();
    match &input.label {
        None => p.add("label", "Label is required"),
        Some(l) => check_label(&mut p, "label", l),
    }
    if let Some(d) = &input.description {
        check_description(&mut p, d);
    }
    let ipv6 = check_ipv6_list(&mut p, input.ipv6.as_deref(), true);
    match input.region.as_deref() {
        None => p.add("region", "Region is required"),
        Some(r) => match catalog.region(r) {
            None => p.add("region", "region is not valid"),
            Some(info) => p.check(info.has(capability::VPCS), "region", "VPCs are not available in this region"),
        },
    }
    // Entry i is subnets[i] when it passed its own checks; later entries are checked against
    // the earlier ones (labels unique, ranges not overlapping).
    let mut seen: Vec<Option<ValidSubnet>> = Vec::new();
    for (i, s) in input.subnets.iter().flatten().enumerate() {
        let (mut sp, valid) = check_subnet(s);
        if s.ipv6.as_ref().is_some_and(|l| !l.is_empty()) && input.ipv6.as_ref().is_none_or(Vec::is_empty) {
            sp.add("ipv6[0].range", "The VPC has no IPv6 range: give the VPC ipv6 to give its subnets IPv6");
        }
        if let Some(v) = &valid {
            if let Some(j) = seen.iter().position(|o| o.as_ref().is_some_and(|o| o.label == v.label)) {
                sp.add("label", format!("Label must be unique among the VPC's subnets (subnets[{j}] has it)"));
            }
            if let Some(o) = first_overlap(v.net, seen.iter().flatten().map(|o| o.net)) {
                sp.add("ipv4", format!("Overlaps another subnet of the VPC ({o})"));
            }
        }
        seen.push(valid.filter(|_| sp.is_empty()));
        p.extend_prefixed(&format!("subnets[{i}]"), sp);
    }
    p.finish()?;
    Ok(ValidVpc {
        label: input.label.clone().unwrap_or_default(),
        description: input.description.clone().unwrap_or_default(),
        region: input.region.clone().unwrap_or_default(),
        ipv6,
        subnets: seen.into_iter().flatten().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nubis_model::Error;
    use nubis_model::config::Config;

    fn fields(r: Result<ValidVpc>) -> Vec<String> {
        match r {
            Err(Error::Invalid(v)) => v.into_iter().map(|f| f.field.unwrap_or_default()).collect(),
            Ok(_) => Vec::new(),
            Err(e) => panic!("{e}"),
        }
    }

    fn sub(label: &str, ipv4: &str) -> SubnetCreate {
        SubnetCreate { label: Some(label.into()), ipv4: Some(ipv4.into()), ..Default::default() }
    }

    #[test]
    fn every_problem_is_reported_with_nested_fields() {
        let c = Catalog::build(&Config::default()).unwrap();
        let input = VpcCreate {
            label: Some("a--b".into()),
            description: Some("x".repeat(256)),
            region: Some("nowhere".into()),
            subnets: Some(vec![sub("ok", "10.0.0.0/24"), SubnetCreate::default(), sub("ok", "10.0.0.128/25")]),
            ..Default::default()
        };
        assert_eq!(
            fields(check_vpc_create(&c, &input)),
            [
                "label",
                "description",
                "region",
                "subnets[1].label",
                "subnets[1].ipv4",
                "subnets[2].label",
                "subnets[2].ipv4"
            ]
        );
    }

    #[test]
    fn a_region_without_vpcs_is_refused() {
        let c = Catalog::build(&Config::default()).unwrap();
        let input = VpcCreate { label: Some("v".into()), region: Some("ap-south".into()), ..Default::default() };
        assert_eq!(fields(check_vpc_create(&c, &input)), ["region"]);
    }
}
