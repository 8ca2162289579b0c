//! `memory --svg FILE`: live tensor bytes after each node as an SVG step
//! chart, the peak marked, so that what `release` frees is visible at a
//! glance.

use crate::runtime::usage::MemoryPoint;
use crate::tensor::budget::human;

const W: f64 = 900.0;
const H: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 40.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart of `series` (main-graph nodes), titled `title`.
pub fn svg(series: &[MemoryPoint], peak: Option<usize>, title: &str) -> String {
    let n = series.len().max(1);
    let max = series
        .iter()
        .map(|p| p.live_bytes)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x = |i: usize| LEFT + pw * i as f64 / n as f64;
    let y = |b: usize| TOP + ph * (1.0 - b as f64 / max);
    let mut path = format!("M{:.1},{:.1}", x(0), y(0));
    for (i, p) in series.iter().enumerate() {
        path.push_str(&format!(
            " L{:.1},{:.1} L{:.1},{:.1}",
            x(i),
            y(p.live_bytes),
            x(i + 1),
            y(p.live_bytes)
        ));
    }
    path.push_str(&format!(" L{:.1},{:.1} Z", x(series.len()), y(0)));
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"22\" font-size=\"14\">{}</text>\n\
         <path d=\"{path}\" fill=\"#9ecae1\" stroke=\"#3182bd\" stroke-width=\"1\"/>\n\
         <line x1=\"{LEFT}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"black\"/>\n\
         <line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b:.1}\" stroke=\"black\"/>\n\
         <text x=\"{lx:.1}\" y=\"{t4:.1}\" text-anchor=\"end\">{}</text>\n\
         <text x=\"{lx:.1}\" y=\"{b:.1}\" text-anchor=\"end\">0</text>\n\
         <text x=\"{r:.1}\" y=\"{bl:.1}\" text-anchor=\"end\">node {} (in run order)</text>\n",
        escape(title),
        human(max as usize),
        series.len(),
        b = TOP + ph,
        r = W - RIGHT,
        lx = LEFT - 6.0,
        t4 = TOP + 4.0,
        bl = H - 12.0,
    );
    if let Some(p) = peak.and_then(|i| series.get(i).map(|p| (i, p))) {
        let (i, p) = p;
        let (px, py) = ((x(i) + x(i + 1)) / 2.0, y(p.live_bytes));
        let anchor = if px > W / 2.0 { "end" } else { "start" };
        let dx = if px > W / 2.0 { -8.0 } else { 8.0 };
        out.push_str(&format!(
            "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"4\" fill=\"#e6550d\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"#e6550d\">peak {} at #{} {} '{}'</text>\n",
            px + dx,
            py + 14.0,
            human(p.live_bytes),
            p.node.index,
            escape(&p.node.op_type),
            escape(&p.node.name),
        ));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::EventNode;

    #[test]
    fn the_chart_marks_the_peak_and_escapes_names() {
        let node = |i: usize, name: &str| EventNode {
            index: i,
            op_type: "Conv".into(),
            domain: String::new(),
            name: name.into(),
        };
        let series = vec![
            MemoryPoint {
                node: node(0, "a"),
                depth: 0,
                live_bytes: 1 << 20,
            },
            MemoryPoint {
                node: node(1, "<b&c>"),
                depth: 0,
                live_bytes: 3 << 20,
            },
            MemoryPoint {
                node: node(2, "d"),
                depth: 0,
                live_bytes: 2 << 20,
            },
        ];
        let s = svg(&series, Some(1), "live bytes");
        assert!(s.starts_with("<svg"), "{s}");
        assert!(
            s.contains("peak 3.0 MiB at #1 Conv '&lt;b&amp;c&gt;'"),
            "{s}"
        );
        assert!(s.trim_end().ends_with("</svg>"));
    }
}
