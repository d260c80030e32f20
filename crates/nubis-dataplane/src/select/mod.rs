//! Back-end selection: which nodes may take a new session (the view) and the three algorithms.

pub(crate) mod leastconn;
pub(crate) mod roundrobin;
pub(crate) mod source;

use nubis_model::balancer::NodeMode;

use crate::node::NodeRt;

/// The nodes that may take new sessions right now, rebuilt whenever a node's health changes.
/// `accept` nodes that are up; when none is, `backup` nodes that are up. `drain` and `reject`
/// nodes never take new sessions.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// Indices into the config's node list.
    pub(crate) active: Vec<u16>,
    /// Weights of `active`, same order.
    pub(crate) weights: Vec<u32>,
    /// Smooth weighted round-robin schedule over `active` (node indices).
    pub(crate) schedule: Vec<u16>,
}

impl View {
    pub(crate) fn build(nodes: &[NodeRt]) -> View {
        let pick = |mode: NodeMode| -> Vec<u16> {
            nodes.iter().enumerate().filter(|(_, n)| n.mode == mode && n.selectable()).map(|(i, _)| i as u16).collect()
        };
        let mut active = pick(NodeMode::Accept);
        if active.is_empty() {
            active = pick(NodeMode::Backup);
        }
        let weights: Vec<u32> = active.iter().map(|&i| nodes[i as usize].weight.max(1)).collect();
        let schedule = roundrobin::schedule(&weights).into_iter().map(|k| active[k as usize]).collect();
        View { active, weights, schedule }
    }
}
