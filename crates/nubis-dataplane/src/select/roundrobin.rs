//! Smooth weighted round robin (the nginx algorithm), precomputed as a schedule so that picking a
//! node on the hot path is one atomic increment and an index.

/// One period of the smooth weighted round-robin order over `weights`, as indices into `weights`.
/// Weights are divided by their greatest common divisor first, so the period is their reduced sum.
pub(crate) fn schedule(weights: &[u32]) -> Vec<u16> {
    if weights.is_empty() {
        return Vec::new();
    }
    let g = weights.iter().copied().fold(0, gcd).max(1);
    let w: Vec<i64> = weights.iter().map(|&x| i64::from(x.max(1) / g)).collect();
    let total: i64 = w.iter().sum();
    let mut current = vec![0i64; w.len()];
    let mut out = Vec::with_capacity(total as usize);
    for _ in 0..total {
        let mut best = 0;
        for i in 0..w.len() {
            current[i] += w[i];
            if current[i] > current[best] {
                best = i;
            }
        }
        current[best] -= total;
        out.push(best as u16);
    }
    out
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_weights_alternate() {
        assert_eq!(schedule(&[1, 1]), vec![0, 1]);
        assert_eq!(schedule(&[50, 50, 50]), vec![0, 1, 2]);
    }

    #[test]
    fn weights_are_smooth_and_proportional() {
        let s = schedule(&[5, 1, 1]);
        assert_eq!(s, vec![0, 0, 1, 0, 2, 0, 0]);
        let s = schedule(&[3, 1]);
        assert_eq!(s.iter().filter(|&&i| i == 0).count(), 3);
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn empty_gives_empty() {
        assert!(schedule(&[]).is_empty());
    }
}
