//! Least connections: the node with the fewest sessions in flight relative to its weight; ties go
//! round robin from a rotating start so equal nodes share the load.

use crate::node::NodeRt;

/// Index (into `nodes`) of the least loaded of `active`.
pub(crate) fn pick(active: &[u16], nodes: &[NodeRt], start: usize) -> Option<u16> {
    let n = active.len();
    if n == 0 {
        return None;
    }
    let mut best: Option<(u16, u64, u64)> = None; // (index, active, weight)
    for k in 0..n {
        let i = active[(start + k) % n];
        let node = &nodes[i as usize];
        let a = node.shared.active.sum();
        let w = u64::from(node.weight.max(1));
        match best {
            // a/w < ba/bw  <=>  a*bw < ba*w
            Some((_, ba, bw)) if a * bw >= ba * w => {}
            _ => best = Some((i, a, w)),
        }
    }
    best.map(|b| b.0)
}
