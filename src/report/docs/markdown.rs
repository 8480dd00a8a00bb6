//! Markdown tables as the blocks write them.

/// A Markdown table's head.
pub fn table_head(cols: &[String]) -> String {
    format!("{}|{}\n", table_row(cols), "---|".repeat(cols.len()))
}

/// A Markdown table's row (a `|` in a value escaped).
pub fn table_row(cols: &[String]) -> String {
    format!(
        "| {} |\n",
        cols.iter()
            .map(|c| c.replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | ")
    )
}
