//! `drop-unused-constants`: a Constant node whose value no node reads any
//! more (the other passes read its value at plan time and made what they
//! need), no subgraph reads and that is no graph output is removed, so the
//! run neither computes nor keeps it.

use super::Work;

pub(super) fn run(w: &mut Work) -> usize {
    let mut read: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for n in w.nodes.iter().flatten() {
        read.extend(n.input.iter().map(|s| s.as_str()));
    }
    let dead: Vec<usize> = (0..w.nodes.len())
        .filter(|&i| w.is_op(i, "Constant"))
        .filter(|&i| {
            w.nodes[i].as_ref().is_some_and(|n| {
                n.output
                    .iter()
                    .all(|o| w.internal(o) && !read.contains(o.as_str()))
            })
        })
        .collect();
    for &i in &dead {
        w.nodes[i] = None;
    }
    dead.len()
}
