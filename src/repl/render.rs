//! Rendering of command output: aligned tables, CSV, JSON; and the
//! `--format` / `--out` options shared by every data command.

use serde_json::Value as Json;

/// Output formats of data commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, String> {
        match s {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            other => Err(format!("unknown format '{other}' (table, json or csv)")),
        }
    }
}

/// Tabular data with its JSON form.
pub struct Data {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub json: Json,
    /// Lines printed after the table (table format only).
    pub footer: Vec<String>,
}

impl Data {
    pub fn new(headers: &[&str], json: Json) -> Data {
        Data {
            headers: headers.iter().map(|s| s.to_string()).collect(),
            rows: vec![],
            json,
            footer: vec![],
        }
    }

    pub fn render(&self, f: Format) -> String {
        match f {
            Format::Json => serde_json::to_string_pretty(&self.json).unwrap_or_default(),
            Format::Csv => csv_text(&self.headers, &self.rows),
            Format::Table => {
                let mut out = table(&self.headers, &self.rows);
                for l in &self.footer {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(l);
                }
                out
            }
        }
    }
}

/// RFC 4180 CSV (the `csv` crate quotes what needs quoting), without the
/// final line break.
fn csv_text(headers: &[String], rows: &[Vec<String>]) -> String {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for r in std::iter::once(headers).chain(rows.iter().map(Vec::as_slice)) {
        // writing to memory cannot fail
        let _ = w.write_record(r);
    }
    let bytes = w.into_inner().unwrap_or_default();
    let mut s = String::from_utf8_lossy(&bytes).into_owned();
    while s.ends_with('\n') || s.ends_with('\r') {
        s.pop();
    }
    s
}

/// Left-aligned columns separated by two spaces, with a header rule.
pub fn table(headers: &[String], rows: &[Vec<String>]) -> String {
    let n = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate().take(n) {
            if i + 1 == n {
                s.push_str(c);
            } else {
                s.push_str(c);
                for _ in c.chars().count()..w[i] + 2 {
                    s.push(' ');
                }
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(headers);
    out.push('\n');
    out.push_str(
        &w.iter()
            .map(|&x| "-".repeat(x))
            .collect::<Vec<_>>()
            .join("  "),
    );
    for r in rows {
        out.push('\n');
        out.push_str(&line(r));
    }
    out
}

/// `(2, 4)`-style tuple of ints.
pub fn tuple(v: &[usize]) -> String {
    let inner = v.iter().map(|d| d.to_string()).collect::<Vec<_>>();
    if inner.len() == 1 {
        format!("({},)", inner[0])
    } else {
        format!("({})", inner.join(", "))
    }
}
