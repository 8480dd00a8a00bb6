//! Line charts as inline SVG (plotters' SVG backend): one line per target over connection counts.

use plotters::prelude::*;

/// One line of a chart: a name and a value per x position (None: no data there).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// plotters could not draw a chart.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(String);

fn chart_err(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// A chart over the categories `x` (connection counts), as an SVG string.
pub fn line_chart(title: &str, y_label: &str, x: &[usize], series: &[Series]) -> Result<String, ChartError> {
    let mut svg = String::new();
    let ymax = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .cloned()
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    let n = x.len().max(1);
    {
        let root = SVGBackend::with_string(&mut svg, (720, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(72)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..ymax)
            .map_err(chart_err)?;
        let labels: Vec<String> = x.iter().map(|c| c.to_string()).collect();
        let fmt_x = |v: &f64| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&fmt_x)
            .x_desc("connections")
            .y_desc(y_label)
            .disable_x_mesh()
            .draw()
            .map_err(chart_err)?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = s
                .values
                .iter()
                .enumerate()
                .filter_map(|(k, v)| v.map(|v| (k as f64, v)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(chart_err)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(chart_err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(chart_err)?;
        root.present().map_err(chart_err)?;
    }
    Ok(svg)
}
