//! The meaning of an Einsum equation: which label each operand dimension
//! carries and which labels the output keeps. The shape rule and the
//! kernel both read equations through [`einsum_parse`].

/// A parsed Einsum equation: each operand's labels (ellipsis dims are
/// labels `b'0'..` counted from the left of the broadcast ellipsis), and the
/// output labels.
#[derive(Debug, Clone, PartialEq)]
pub struct EinsumSpec {
    pub inputs: Vec<Vec<u8>>,
    pub output: Vec<u8>,
}

/// Label used for the i-th ellipsis dimension (of `ell` in total).
fn ell_label(i: usize) -> u8 {
    // ASCII control range: never a letter
    1 + i as u8
}

/// Parses an equation given the operand ranks.
pub fn einsum_parse(eq: &str, ranks: &[usize]) -> Result<EinsumSpec, String> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ranks.len() {
        return Err(format!(
            "the equation has {} operands, {} were given",
            terms.len(),
            ranks.len()
        ));
    }
    let split = |t: &str| -> Result<(Vec<u8>, Option<Vec<u8>>), String> {
        // (labels before ..., labels after ...) or no ellipsis
        let check = |s: &str| -> Result<Vec<u8>, String> {
            s.bytes()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        Ok(c)
                    } else {
                        Err(format!("invalid Einsum label '{}'", c as char))
                    }
                })
                .collect()
        };
        match t.split_once("...") {
            Some((a, b)) => {
                let mut v = check(a)?;
                let after = check(b)?;
                v.push(b'.');
                v.extend(after);
                Ok((v, Some(vec![])))
            }
            None => Ok((check(t)?, None)),
        }
    };
    if ranks.iter().any(|&r| r > 64) {
        return Err("Einsum operands of rank > 64 are not supported".into());
    }
    let mut ell = 0usize;
    let mut parsed = vec![];
    for (t, &r) in terms.iter().zip(ranks) {
        let (labels, has) = split(t)?;
        if has.is_some() {
            let named = labels.len() - 1;
            if named > r {
                return Err(format!("term '{t}' has more labels than rank {r}"));
            }
            ell = ell.max(r - named);
        } else if labels.len() != r {
            return Err(format!(
                "term '{t}' has {} labels for rank {r}",
                labels.len()
            ));
        }
        parsed.push(labels);
    }
    let expand = |labels: &[u8], r: usize| -> Vec<u8> {
        let mut out = vec![];
        for &c in labels {
            if c == b'.' {
                let n = r + 1 - labels.len();
                // right-aligned against the common ellipsis
                for i in 0..n {
                    out.push(ell_label(ell - n + i));
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    let inputs: Vec<Vec<u8>> = parsed
        .iter()
        .zip(ranks)
        .map(|(l, &r)| {
            if l.contains(&b'.') {
                expand(l, r)
            } else {
                l.clone()
            }
        })
        .collect();
    let output = match rhs {
        Some(r) => {
            let (labels, has) = split(&r)?;
            let mut out = vec![];
            for &c in &labels {
                if c == b'.' {
                    out.extend((0..ell).map(ell_label));
                } else {
                    if !inputs.iter().any(|l| l.contains(&c)) {
                        return Err(format!("output label '{}' is not in any input", c as char));
                    }
                    if out.contains(&c) {
                        return Err(format!("output label '{}' is repeated", c as char));
                    }
                    out.push(c);
                }
            }
            if has.is_none() && ell > 0 {
                // ellipsis dimensions not in the output are summed
            }
            out
        }
        None => {
            let mut out: Vec<u8> = (0..ell).map(ell_label).collect();
            let mut letters: Vec<u8> = vec![];
            for l in &inputs {
                for &c in l {
                    if c.is_ascii_alphabetic() && !letters.contains(&c) {
                        let count: usize = inputs
                            .iter()
                            .map(|l| l.iter().filter(|&&d| d == c).count())
                            .sum();
                        if count == 1 {
                            letters.push(c);
                        }
                    }
                }
            }
            letters.sort();
            out.extend(letters);
            out
        }
    };
    Ok(EinsumSpec { inputs, output })
}
