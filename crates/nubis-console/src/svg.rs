//! Line charts drawn on the server as inline SVG (no script; presentation attributes only, so
//! the Content-Security-Policy's `style-src 'self'` holds).

/// A chart of one or two series of `[unix ms, value]` points, scaled into a fixed view box.
pub struct Chart {
    pub title: String,
    pub unit: String,
    /// `points` attributes of the polylines (empty when the series has no point).
    pub a: String,
    pub b: String,
    pub a_label: String,
    pub b_label: String,
    /// The top of the scale, as text.
    pub max: String,
    /// First and last time shown, as text.
    pub from: String,
    pub to: String,
    pub empty: bool,
}

pub const W: f64 = 600.0;
pub const H: f64 = 160.0;

fn points(series: &[[f64; 2]], t0: f64, t1: f64, max: f64) -> String {
    let span = (t1 - t0).max(1.0);
    series
        .iter()
        .map(|[t, v]| {
            let x = (t - t0) / span * W;
            let y = H - (v / max).clamp(0.0, 1.0) * (H - 10.0);
            format!("{x:.1},{y:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn clock(ms: f64) -> String {
    let secs = (ms / 1000.0) as i64;
    let (h, m) = ((secs / 3600) % 24, (secs / 60) % 60);
    format!("{h:02}:{m:02} UTC")
}

impl Chart {
    pub fn new(title: &str, unit: &str, a: (&str, &[[f64; 2]]), b: Option<(&str, &[[f64; 2]])>) -> Chart {
        let all = a.1.iter().chain(b.map(|x| x.1).unwrap_or(&[]).iter());
        let (mut t0, mut t1, mut max) = (f64::MAX, f64::MIN, 0.0f64);
        for [t, v] in all {
            t0 = t0.min(*t);
            t1 = t1.max(*t);
            max = max.max(*v);
        }
        let empty = t0 > t1;
        let max = if max > 0.0 { max * 1.1 } else { 1.0 };
        let (pa, pb) = if empty {
            (String::new(), String::new())
        } else {
            (points(a.1, t0, t1, max), b.map(|x| points(x.1, t0, t1, max)).unwrap_or_default())
        };
        Chart {
            title: title.into(),
            unit: unit.into(),
            a: pa,
            b: pb,
            a_label: a.0.into(),
            b_label: b.map(|x| x.0.to_string()).unwrap_or_default(),
            max: format!("{max:.2}"),
            from: if empty { String::new() } else { clock(t0) },
            to: if empty { String::new() } else { clock(t1) },
            empty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_span_the_box() {
        let c = Chart::new("c", "u", ("a", &[[0.0, 0.0], [1000.0, 10.0]]), None);
        assert_eq!(c.a, format!("0.0,{H:.1} {W:.1},{:.1}", H - 10.0 / 11.0 * (H - 10.0)));
        assert!(Chart::new("c", "u", ("a", &[]), None).empty);
    }
}
