//! Faults the operator injects: the next N matching requests answer an error status (or wait
//! first), the payment gateway declines or is unreachable, an instance stays `provisioning` or
//! fails to boot, reverse-DNS forward lookups fail, a balancer node reports `DOWN`. Each fault is
//! scoped (route, account, instance or node) and counted ("the next N times") or timed (for N
//! seconds of the clock), or both, or neither (until deleted).
//!
//! The registry lives in this process's memory; each place that can fail asks it with one call
//! (`take_http`, `take_payment`, `take_instance`, `take_rdns_lookup`, `node_down`). With no
//! fault registered every call is one atomic load.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use nubis_model::{Error, Problems, Result, Timestamp};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Operator;
use crate::App;

/// What fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Requests matching `route` answer `status` (429 with `Retry-After`, 500, 502, 503, 504)
    /// with the error envelope, and/or wait `latency_ms` first.
    Http,
    /// The payment gateway declines the charge.
    PaymentDeclined,
    /// The payment gateway cannot be reached.
    PaymentUnreachable,
    /// The payment gateway takes the charge, but its answer never arrives (nubis sees an
    /// unreachable gateway; the payment is settled later, see docs/operations.md).
    PaymentAnswerLost,
    /// The payment gateway cannot be reached for refunds (they wait in the refund queue).
    RefundUnreachable,
    /// An instance stays `provisioning`.
    InstanceProvisioning,
    /// An instance fails to boot: its boot event fails and it stays `offline`.
    InstanceBoot,
    /// Forward DNS lookups made before setting reverse DNS fail.
    RdnsLookup,
    /// A balancer node reports `DOWN` regardless of its back end.
    NodeDown,
}

/// `POST /nubis/v1/faults`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultCreate {
    /// What fails; `http` when omitted.
    pub kind: Option<FaultKind>,
    /// `http`: method and path template, such as `GET /v4/vpcs` or `PUT /v4/vpcs/{vpc_id}`.
    pub route: Option<String>,
    /// `http`: the status answered: 429, 500, 502, 503 or 504.
    pub status: Option<u16>,
    /// `http` with 429: the `Retry-After` seconds (1 when omitted).
    pub retry_after: Option<u64>,
    /// How many times the fault fires before it is gone; omitted: until deleted or expired.
    pub count: Option<u32>,
    /// Only for this account (its `euuid`).
    pub account: Option<String>,
    /// `http`: milliseconds to wait before answering (with or without `status`).
    pub latency_ms: Option<u64>,
    /// The fault is gone after this many seconds of the clock.
    pub seconds: Option<u64>,
    /// `instance_provisioning`, `instance_boot`: only this instance.
    pub instance_id: Option<i64>,
    /// `node_down`: the node.
    pub node_id: Option<i64>,
}

/// A registered fault.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Fault {
    pub id: i64,
    pub kind: FaultKind,
    pub route: Option<String>,
    pub status: Option<u16>,
    pub retry_after: Option<u64>,
    /// Times it will still fire; null: until deleted or expired.
    pub count: Option<u32>,
    pub account: Option<String>,
    pub latency_ms: Option<u64>,
    pub seconds: Option<u64>,
    /// When it expires (by the clock); null: never.
    pub expires: Option<Timestamp>,
    pub instance_id: Option<i64>,
    pub node_id: Option<i64>,
    pub created: Timestamp,
    #[serde(skip)]
    account_id: Option<i64>,
    #[serde(skip)]
    method: String,
    #[serde(skip)]
    template: String,
}

/// What a matching request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpFault {
    pub status: Option<u16>,
    pub retry_after: u64,
    pub latency_ms: u64,
}

/// What the payment gateway does with the next charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentFault {
    Declined,
    Unreachable,
    /// The charge is made; the answer is lost.
    AnswerLost,
}

/// The faults of this process.
#[derive(Default)]
pub struct FaultRegistry {
    faults: Mutex<Vec<Fault>>,
    any: AtomicBool,
    next_id: AtomicI64,
    /// The last status the data plane really observed for nodes forced `DOWN`.
    observed: Mutex<HashMap<i64, String>>,
}

const HTTP_STATUSES: [u16; 5] = [429, 500, 502, 503, 504];
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/// `GET /v4/vpcs` -> (`GET`, `/v4/vpcs`).
pub fn parse_route(route: &str) -> Option<(String, String)> {
    let (m, p) = route.trim().split_once(' ')?;
    let m = m.to_ascii_uppercase();
    let p = p.trim();
    (METHODS.contains(&m.as_str()) && p.starts_with('/') && !p.contains(' ')).then(|| (m, p.to_string()))
}

impl FaultRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Fault>> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn refresh(&self, faults: &mut Vec<Fault>) {
        let now = Timestamp::now();
        faults.retain(|f| f.count != Some(0) && f.expires.is_none_or(|e| now < e));
        self.any.store(!faults.is_empty(), Ordering::Release);
    }

    /// Every active fault.
    pub fn list(&self) -> Vec<Fault> {
        let mut f = self.lock();
        self.refresh(&mut f);
        f.clone()
    }

    fn add(&self, mut fault: Fault) -> Fault {
        fault.id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut f = self.lock();
        f.push(fault.clone());
        self.refresh(&mut f);
        fault
    }

    fn remove(&self, id: i64) -> Option<Fault> {
        let mut f = self.lock();
        let i = f.iter().position(|x| x.id == id)?;
        let gone = f.remove(i);
        self.refresh(&mut f);
        Some(gone)
    }

    /// Removes every fault; returns them.
    pub fn clear(&self) -> Vec<Fault> {
        let mut f = self.lock();
        let gone = std::mem::take(&mut *f);
        self.refresh(&mut f);
        gone
    }

    /// Finds the first active fault `matches` accepts and counts one firing of it.
    fn take(&self, matches: impl Fn(&Fault) -> bool) -> Option<Fault> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        let mut f = self.lock();
        self.refresh(&mut f);
        let hit = f.iter_mut().find(|x| matches(x))?;
        if let Some(c) = hit.count.as_mut() {
            *c = c.saturating_sub(1);
        }
        let hit = hit.clone();
        self.refresh(&mut f);
        Some(hit)
    }

    /// Whether any `http` fault names this route, and whether one of them is scoped to an
    /// account (the caller then authenticates the request to know its account).
    pub fn http_candidates(&self, method: &str, template: &str) -> (bool, bool) {
        if !self.any.load(Ordering::Acquire) {
            return (false, false);
        }
        let f = self.lock();
        let mut any = false;
        let mut scoped = false;
        for x in f.iter().filter(|x| x.kind == FaultKind::Http && x.method == method && x.template == template) {
            any = true;
            scoped |= x.account_id.is_some();
        }
        (any, scoped)
    }

    /// The fault the next request on this route (by this account) meets, counting it.
    pub fn take_http(&self, method: &str, template: &str, account_id: Option<i64>) -> Option<HttpFault> {
        self.take(|x| {
            x.kind == FaultKind::Http
                && x.method == method
                && x.template == template
                && x.account_id.is_none_or(|a| Some(a) == account_id)
        })
        .map(|x| HttpFault {
            status: x.status,
            retry_after: x.retry_after.unwrap_or(1),
            latency_ms: x.latency_ms.unwrap_or(0),
        })
    }

    /// What the payment gateway does with the next charge of this account (one call from the
    /// gateway before it charges; `None`: charge as usual).
    pub fn take_payment(&self, account_id: i64) -> Option<PaymentFault> {
        self.take(|x| {
            matches!(x.kind, FaultKind::PaymentDeclined | FaultKind::PaymentUnreachable | FaultKind::PaymentAnswerLost)
                && x.account_id.is_none_or(|a| a == account_id)
        })
        .map(|x| match x.kind {
            FaultKind::PaymentDeclined => PaymentFault::Declined,
            FaultKind::PaymentAnswerLost => PaymentFault::AnswerLost,
            _ => PaymentFault::Unreachable,
        })
    }

    /// Whether the next refund of this account fails as if the gateway were unreachable
    /// (counting it).
    pub fn take_refund(&self, account_id: i64) -> bool {
        self.take(|x| x.kind == FaultKind::RefundUnreachable && x.account_id.is_none_or(|a| a == account_id)).is_some()
    }

    /// Whether the instance meets a fault of `kind` now (counting it).
    pub fn take_instance(&self, kind: FaultKind, instance_id: i64, account_id: i64) -> bool {
        self.take(|x| {
            x.kind == kind
                && x.instance_id.is_none_or(|i| i == instance_id)
                && x.account_id.is_none_or(|a| a == account_id)
        })
        .is_some()
    }

    /// Whether the next forward lookup (for reverse DNS, by this account) fails (counting it).
    pub fn take_rdns_lookup(&self, account_id: i64) -> bool {
        self.take(|x| x.kind == FaultKind::RdnsLookup && x.account_id.is_none_or(|a| a == account_id)).is_some()
    }

    /// Whether the node is forced `DOWN` (not counted: it holds until deleted or expired).
    pub fn node_down(&self, node_id: i64) -> bool {
        if !self.any.load(Ordering::Acquire) {
            return false;
        }
        let mut f = self.lock();
        self.refresh(&mut f);
        f.iter().any(|x| x.kind == FaultKind::NodeDown && x.node_id == Some(node_id))
    }

    /// Remembers what the data plane really observed for a node (restored when its fault goes).
    pub fn observed_node_status(&self, node_id: i64, status: &str) {
        self.observed.lock().unwrap_or_else(|e| e.into_inner()).insert(node_id, status.to_string());
    }

    fn take_observed(&self, node_id: i64) -> Option<String> {
        self.observed.lock().unwrap_or_else(|e| e.into_inner()).remove(&node_id)
    }
}

impl App {
    /// Registers a fault. `known_route` says whether a method and path template is a route of
    /// the public API.
    pub async fn fault_create(
        &self,
        _op: &Operator,
        input: FaultCreate,
        known_route: impl Fn(&str, &str) -> bool,
    ) -> Result<Fault> {
        let kind = input.kind.unwrap_or(FaultKind::Http);
        let mut p = Problems::new();
        let mut route = None;
        let http = kind == FaultKind::Http;
        if http {
            match input.route.as_deref().map(|r| (r, parse_route(r))) {
                None => p.add("route", "Required: a method and a path template such as 'GET /v4/vpcs'"),
                Some((_, None)) => p.add("route", "Must be a method and a path template such as 'GET /v4/vpcs'"),
                Some((_, Some((m, t)))) if !known_route(&m, &t) => {
                    p.add("route", format!("No route {m} {t} in the API (see /v4/openapi.json)"))
                }
                Some((_, Some(mt))) => route = Some(mt),
            }
            match input.status {
                Some(s) if !HTTP_STATUSES.contains(&s) => p.add("status", "Must be 429, 500, 502, 503 or 504"),
                None if input.latency_ms.is_none() => p.add("status", "Required unless latency_ms is given"),
                _ => {}
            }
            if input.retry_after.is_some() && input.status != Some(429) {
                p.add("retry_after", "Only for status 429");
            }
            if input.retry_after.is_some_and(|r| r > 86_400) {
                p.add("retry_after", "Must be at most 86400");
            }
            if input.latency_ms.is_some_and(|l| l > 60_000) {
                p.add("latency_ms", "Must be at most 60000");
            }
        } else {
            for (field, given) in [
                ("route", input.route.is_some()),
                ("status", input.status.is_some()),
                ("retry_after", input.retry_after.is_some()),
                ("latency_ms", input.latency_ms.is_some()),
            ] {
                p.check(!given, field, "Only for faults of kind http");
            }
        }
        let instance_kind = matches!(kind, FaultKind::InstanceProvisioning | FaultKind::InstanceBoot);
        p.check(input.instance_id.is_none() || instance_kind, "instance_id", "Only for instance faults");
        match (kind, input.node_id) {
            (FaultKind::NodeDown, None) => p.add("node_id", "Required"),
            (FaultKind::NodeDown, Some(_)) => {}
            (_, Some(_)) => p.add("node_id", "Only for node_down faults"),
            (_, None) => {}
        }
        p.check(input.count != Some(0), "count", "Must be at least 1");
        p.check(input.seconds.is_none_or(|s| (1..=10 * 366 * 86_400).contains(&s)), "seconds", "Must be at least 1");
        let account_id = match input.account.as_deref() {
            None => None,
            Some(e) => match self.store.account_by_euuid(e).await? {
                Some(a) => Some(a.id),
                None => {
                    p.add("account", "No account with this euuid");
                    None
                }
            },
        };
        if let Some(id) = input.instance_id
            && self.store.instance_by_id(id).await?.is_none()
        {
            p.add("instance_id", "No instance with this id");
        }
        let node_config = match input.node_id {
            Some(id) if kind == FaultKind::NodeDown => {
                let c = self.store.nb_node_config_of(id).await?;
                p.check(c.is_some(), "node_id", "No balancer node with this id");
                c
            }
            _ => None,
        };
        p.finish()?;
        let now = Timestamp::now();
        let (method, template) = route.unwrap_or_default();
        let fault = self.controls.faults.add(Fault {
            id: 0,
            kind,
            route: http.then(|| format!("{method} {template}")),
            status: input.status,
            retry_after: if input.status == Some(429) { Some(input.retry_after.unwrap_or(1)) } else { None },
            count: input.count,
            account: input.account.clone(),
            latency_ms: input.latency_ms,
            seconds: input.seconds,
            expires: input.seconds.map(|s| now.plus_seconds(s as i64)),
            instance_id: input.instance_id,
            node_id: input.node_id,
            created: now,
            account_id,
            method,
            template,
        });
        if let (Some(node), Some(config)) = (fault.node_id, node_config) {
            self.node_status_write(config, node, nubis_model::balancer::NodeStatus::Down.name()).await?;
        }
        Ok(fault)
    }

    pub fn fault_list(&self, _op: &Operator) -> Vec<Fault> {
        self.controls.faults.list()
    }

    pub async fn fault_delete(&self, _op: &Operator, id: i64) -> Result<()> {
        let gone = self.controls.faults.remove(id).ok_or(Error::NotFound)?;
        self.fault_gone(&gone).await
    }

    /// Removes every fault (a reset).
    pub async fn faults_clear(&self) -> Result<()> {
        for f in self.controls.faults.clear() {
            self.fault_gone(&f).await?;
        }
        Ok(())
    }

    /// A node forced `DOWN` goes back to what the data plane last observed.
    async fn fault_gone(&self, f: &Fault) -> Result<()> {
        if let Some(node) = f.node_id
            && !self.controls.faults.node_down(node)
        {
            let status = self.controls.faults.take_observed(node).unwrap_or_else(|| "unknown".to_string());
            if let Some(config) = self.store.nb_node_config_of(node).await? {
                self.node_status_write(config, node, &status).await?;
            }
        }
        Ok(())
    }

    async fn node_status_write(&self, config_id: i64, node_id: i64, status: &str) -> Result<()> {
        self.write(|tx| {
            Box::pin(async move {
                tx.nb_node_set_status(config_id, node_id, status).await?;
                Ok(())
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(method: &str, template: &str, count: Option<u32>, account_id: Option<i64>) -> Fault {
        Fault {
            id: 0,
            kind: FaultKind::Http,
            route: Some(format!("{method} {template}")),
            status: Some(503),
            retry_after: None,
            count,
            account: None,
            latency_ms: None,
            seconds: None,
            expires: None,
            instance_id: None,
            node_id: None,
            created: Timestamp::now(),
            account_id,
            method: method.into(),
            template: template.into(),
        }
    }

    #[test]
    fn routes_are_a_method_and_a_template() {
        assert_eq!(parse_route("get /v4/vpcs"), Some(("GET".into(), "/v4/vpcs".into())));
        assert_eq!(parse_route("PUT /v4/vpcs/{vpc_id}"), Some(("PUT".into(), "/v4/vpcs/{vpc_id}".into())));
        assert_eq!(parse_route("/v4/vpcs"), None);
        assert_eq!(parse_route("FETCH /v4/vpcs"), None);
    }

    #[test]
    fn counted_faults_fire_that_many_times() {
        let r = FaultRegistry::default();
        r.add(http("GET", "/v4/vpcs", Some(2), None));
        assert!(r.take_http("GET", "/v4/vpcs", None).is_some());
        assert!(r.take_http("POST", "/v4/vpcs", None).is_none());
        assert!(r.take_http("GET", "/v4/vpcs", None).is_some());
        assert!(r.take_http("GET", "/v4/vpcs", None).is_none());
        assert!(r.list().is_empty());
    }

    #[test]
    fn account_scoped_faults_spare_other_accounts() {
        let r = FaultRegistry::default();
        r.add(http("GET", "/v4/vpcs", None, Some(7)));
        assert_eq!(r.http_candidates("GET", "/v4/vpcs"), (true, true));
        assert!(r.take_http("GET", "/v4/vpcs", Some(8)).is_none());
        assert!(r.take_http("GET", "/v4/vpcs", None).is_none());
        assert!(r.take_http("GET", "/v4/vpcs", Some(7)).is_some());
        assert!(r.take_http("GET", "/v4/vpcs", Some(7)).is_some(), "uncounted: until deleted");
    }

    #[test]
    fn payment_faults_are_taken_once_per_count() {
        let r = FaultRegistry::default();
        let mut f = http("GET", "/", Some(1), None);
        f.kind = FaultKind::PaymentDeclined;
        r.add(f);
        assert_eq!(r.take_payment(3), Some(PaymentFault::Declined));
        assert_eq!(r.take_payment(3), None);
    }
}
