//! Charts as inline SVG: line charts over connection counts and points joined per series
//! (`lines`, plotters' SVG backend), grouped bars on a logarithmic axis (`bars`), and what
//! they show (`series`).

mod bars;
mod lines;
mod series;

pub use bars::bar_chart;
pub use lines::{line_chart, xy_chart};
pub use series::{Series, Unit};

#[cfg(test)]
mod tests;
