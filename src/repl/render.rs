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
        self.render_styled(f, false)
    }

    /// Like [`Data::render`]; with `color`, table cells whose meaning has a
    /// colour (statuses, event actions and kinds, element types) get it.
    pub fn render_styled(&self, f: Format, color: bool) -> String {
        match f {
            Format::Json => serde_json::to_string_pretty(&self.json).unwrap_or_default(),
            Format::Csv => csv_text(&self.headers, &self.rows),
            Format::Table => {
                let mut out = if color {
                    table_styled(&self.headers, &self.rows, meaning_color)
                } else {
                    table(&self.headers, &self.rows)
                };
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

/// One row of a data command's output. Its `Serialize` form is the JSON
/// object of the row (field names are the SPEC's JSON field names); the
/// table and CSV columns are those fields, in order, each shown as its
/// plain JSON text unless [`Row::cell`] says otherwise.
pub trait Row: serde::Serialize + Default {
    /// Fields the JSON carries but the table and CSV do not show.
    const JSON_ONLY: &'static [&'static str] = &[];

    /// The table and CSV columns when they are not the JSON fields (a
    /// column the JSON does not carry takes its text from [`Row::cell`]).
    const COLUMNS: &'static [&'static str] = &[];

    /// The table/CSV text of `field` when it differs from the plain text of
    /// its JSON value (a shape as `(2, 4)`, a quoted name, ...).
    fn cell(&self, _field: &str) -> Option<String> {
        None
    }

    /// The text of `column` in one output format, for rows whose table
    /// shows more than their CSV (a bar, a percentage for a fraction);
    /// [`Row::cell`] unless the row says otherwise.
    fn cell_in(&self, column: &str, _format: Format) -> Option<String> {
        self.cell(column)
    }
}

/// The plain text of a JSON value as a table or CSV cell: strings without
/// quotes, `null` as nothing, numbers and booleans as JSON spells them,
/// lists and objects as compact JSON.
pub fn plain_text(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// The fields of a serialized row, in order (none for a non-object).
fn fields(v: &Json) -> Vec<String> {
    match v {
        Json::Object(o) => o.keys().cloned().collect(),
        _ => vec![],
    }
}

impl Data {
    /// The table, CSV and JSON forms of `rows`, from the rows alone: the
    /// JSON is the array of the rows' objects; the columns are their fields
    /// (without [`Row::JSON_ONLY`]) and the cells [`Row::cell`] or the plain
    /// JSON text.
    pub fn from_rows<T: Row>(rows: &[T]) -> Data {
        let objects: Vec<Json> = rows
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or(Json::Null))
            .collect();
        let all = if !T::COLUMNS.is_empty() {
            T::COLUMNS.iter().map(|c| c.to_string()).collect()
        } else {
            match objects.first() {
                Some(first) => fields(first),
                None => fields(&serde_json::to_value(T::default()).unwrap_or(Json::Null)),
            }
        };
        let shown: Vec<String> = all
            .into_iter()
            .filter(|f| !T::JSON_ONLY.contains(&f.as_str()))
            .collect();
        Data::cells(rows, objects, shown, |r, c| r.cell(c))
    }

    /// Rows whose table and CSV columns depend on the command's flags and
    /// on the output format: `columns` are shown, each cell from
    /// [`Row::cell_in`] or the plain JSON text of the field.
    pub fn from_rows_in<T: Row>(rows: &[T], columns: &[&str], format: Format) -> Data {
        let objects: Vec<Json> = rows
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or(Json::Null))
            .collect();
        let shown = columns.iter().map(|c| c.to_string()).collect();
        Data::cells(rows, objects, shown, |r, c| r.cell_in(c, format))
    }

    fn cells<T>(
        rows: &[T],
        objects: Vec<Json>,
        shown: Vec<String>,
        cell: impl Fn(&T, &str) -> Option<String>,
    ) -> Data {
        let cells = rows
            .iter()
            .zip(&objects)
            .map(|(r, o)| {
                shown
                    .iter()
                    .map(|f| {
                        cell(r, f).unwrap_or_else(|| o.get(f).map(plain_text).unwrap_or_default())
                    })
                    .collect()
            })
            .collect();
        Data {
            headers: shown,
            rows: cells,
            json: Json::Array(objects),
            footer: vec![],
        }
    }

    /// One row whose JSON is the row's object itself, not a list.
    pub fn from_row<T: Row>(row: T) -> Data {
        Data::from_rows(std::slice::from_ref(&row)).one_object()
    }

    /// The JSON of a single row as that row's object rather than a list of
    /// one.
    pub fn one_object(self) -> Data {
        self.in_document(|rows| match rows {
            Json::Array(mut a) if a.len() == 1 => a.pop().unwrap_or(Json::Null),
            other => other,
        })
    }

    /// The JSON document around the rows, for a command whose JSON holds
    /// more than its rows (`infer`: `{values, equations, warnings}`).
    pub fn in_document(mut self, wrap: impl FnOnce(Json) -> Json) -> Data {
        self.json = wrap(std::mem::take(&mut self.json));
        self
    }
}

/// RFC 4180 CSV of `headers` then `rows` (the `csv` crate quotes what
/// needs quoting), without the final line break.
fn csv_text(headers: &[String], rows: &[Vec<String>]) -> String {
    csv_records(std::iter::once(headers).chain(rows.iter().map(Vec::as_slice)))
}

/// RFC 4180 CSV of the records, one per line, without the final line break.
pub fn csv_records<'a>(records: impl IntoIterator<Item = &'a [String]>) -> String {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for r in records {
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

/// A progress bar on standard error when it is a terminal (hidden
/// otherwise), drawn with the `indicatif` template `template`.
pub fn progress_bar(len: u64, template: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        b.set_style(style);
    }
    b
}

/// Prints an error line on standard error, red when `color` is on and
/// standard error itself is a terminal (`2>err.log` gets plain text).
pub fn print_error(s: &str, color: bool) {
    use std::io::IsTerminal;
    if color && std::io::stderr().is_terminal() {
        eprintln!("\x1b[31m{s}\x1b[0m");
    } else {
        eprintln!("{s}");
    }
}

/// Prints a line on standard output, flushed; a closed pipe is not an
/// error worth a panic.
pub fn print_line(s: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{s}");
    let _ = o.flush();
}

/// The colour of a cell by its column and text, if it has one.
pub fn meaning_color(header: &str, cell: &str) -> Option<colored::Color> {
    use colored::Color::*;
    Some(match (header, cell) {
        ("status", "OK") => Green,
        ("status", "MISMATCH") => BrightRed,
        ("status", "UNKNOWN") => Yellow,
        ("action", "add") => Green,
        ("action", "replace") => Yellow,
        ("action", "remove") => Red,
        ("action", "run_node") => Cyan,
        ("kind", "input") => Blue,
        ("kind", "initializer") => Magenta,
        ("kind", "output") => BrightGreen,
        ("kind", "node") => Cyan,
        ("source", "declared") => Blue,
        ("source", "inferred") => Magenta,
        ("data_type" | "elem_type" | "dtype", c) if !c.is_empty() => Blue,
        _ => return None,
    })
}

/// Left-aligned columns separated by two spaces, with a header rule.
pub fn table(headers: &[String], rows: &[Vec<String>]) -> String {
    table_styled(headers, rows, |_, _| None)
}

/// [`table`] with cells coloured by `style(header, cell)`; widths count
/// the visible text only.
pub fn table_styled(
    headers: &[String],
    rows: &[Vec<String>],
    style: impl Fn(&str, &str) -> Option<colored::Color>,
) -> String {
    use colored::Colorize;
    let n = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String], styled: bool| -> String {
        let mut s = String::new();
        let mut pad = 0;
        for (i, c) in cells.iter().enumerate().take(n) {
            if !c.is_empty() {
                // spaces owed by the previous cells, then this one
                s.extend(std::iter::repeat_n(' ', pad));
                pad = 0;
                match style(&headers[i], c).filter(|_| styled) {
                    Some(color) => s.push_str(&c.as_str().color(color).to_string()),
                    None => s.push_str(c),
                }
            }
            if i + 1 < n {
                pad += w[i] + 2 - c.chars().count();
            }
        }
        s
    };
    let mut out = line(headers, false);
    out.push('\n');
    out.push_str(
        &w.iter()
            .map(|&x| "-".repeat(x))
            .collect::<Vec<_>>()
            .join("  "),
    );
    for r in rows {
        out.push('\n');
        out.push_str(&line(r, true));
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
