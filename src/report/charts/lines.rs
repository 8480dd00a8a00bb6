//! Line charts as inline SVG (plotters' SVG backend): one line per target over connection
//! counts, on a logarithmic axis when the counts span more than a factor of ten; values in human
//! units (k, M; µs, ms); points that may not be ranked drawn hollow (the client was the limit, a
//! latency of a cell that starved connections); reference series (a seed's published
//! numbers) dashed.

use plotters::prelude::*;

use super::series::{label, Series, Unit};

/// What plotters says when it cannot draw on the SVG backend.
type Drawing = DrawingAreaErrorKind<std::io::Error>;

/// plotters could not draw a chart: the part it failed at, and plotters' own error (printed as
/// plotters words it).
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The canvas: filling it, or writing it out.
    #[error("{source}")]
    Canvas { source: Drawing },
    /// The axes: the chart's area, its mesh and labels.
    #[error("{source}")]
    Axes { source: Drawing },
    /// A series: its line or its points.
    #[error("{source}")]
    Series { source: Drawing },
    /// The legend.
    #[error("{source}")]
    Legend { source: Drawing },
}

impl ChartError {
    fn canvas(source: Drawing) -> ChartError {
        ChartError::Canvas { source }
    }
    fn axes(source: Drawing) -> ChartError {
        ChartError::Axes { source }
    }
    fn series(source: Drawing) -> ChartError {
        ChartError::Series { source }
    }
    fn legend(source: Drawing) -> ChartError {
        ChartError::Legend { source }
    }
}

/// A chart of `series` over the connection counts `x`, as an SVG string.
pub fn line_chart(
    title: &str,
    y_label: &str,
    unit: Unit,
    x: &[usize],
    series: &[Series],
) -> Result<String, ChartError> {
    let mut svg = String::new();
    let ymax = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .cloned()
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    let lo = x.iter().copied().min().unwrap_or(1).max(1) as f64;
    let hi = x.iter().copied().max().unwrap_or(1).max(1) as f64;
    {
        let root = SVGBackend::with_string(&mut svg, (600, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(ChartError::canvas)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64);
        let axes = Axes { x, y_label, unit };
        // Connection counts spanning more than ten times: a logarithmic axis.
        if hi / lo > 10.0 {
            let chart = builder
                .build_cartesian_2d((lo / 1.5..hi * 1.5).log_scale(), 0f64..ymax)
                .map_err(ChartError::axes)?;
            draw(chart, &axes, series)?;
        } else {
            let pad = ((hi - lo) * 0.1).max(lo * 0.5).max(0.5);
            let chart = builder
                .build_cartesian_2d((lo - pad).max(0.0)..hi + pad, 0f64..ymax)
                .map_err(ChartError::axes)?;
            draw(chart, &axes, series)?;
        }
        root.present().map_err(ChartError::canvas)?;
    }
    Ok(svg)
}

/// The x positions (connection counts), the y axis's name and unit.
struct Axes<'a> {
    x: &'a [usize],
    y_label: &'a str,
    unit: Unit,
}

impl Axes<'_> {
    /// A series' points: (x, y, hollow).
    fn points(&self, s: &Series) -> Vec<(f64, f64, bool)> {
        s.values
            .iter()
            .enumerate()
            .filter_map(|(k, v)| v.map(|v| (self.x[k] as f64, v, s.hollow.get(k).copied().unwrap_or(false))))
            .collect()
    }
}

/// Draws the mesh, every series and the legend on `chart`, whichever its x axis.
fn draw<'a, X>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    axes: &Axes,
    series: &[Series],
) -> Result<(), ChartError>
where
    X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let fmt_y = |v: &f64| label(*v, axes.unit);
    chart
        .configure_mesh()
        .x_desc("connections")
        .y_desc(axes.y_label)
        .y_label_formatter(&fmt_y)
        // Whole connection counts only (a linear axis also ticks between them).
        .x_label_formatter(&|v: &f64| {
            if (v - v.round()).abs() < 1e-9 {
                label(*v, Unit::Count)
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(ChartError::axes)?;
    for (i, s) in series.iter().enumerate() {
        let color = if s.reference {
            match s.like {
                Some(k) => Palette99::pick(k).mix(0.8),
                None => BLACK.mix(0.55),
            }
        } else {
            Palette99::pick(i).to_rgba()
        };
        let pts = axes.points(s);
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        if s.reference {
            chart
                .draw_series(DashedLineSeries::new(line, 6, 4, color.stroke_width(2)))
                .map_err(ChartError::series)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(1)));
            chart
                .draw_series(pts.iter().map(|p| Cross::new((p.0, p.1), 4, color.stroke_width(2))))
                .map_err(ChartError::series)?;
        } else {
            chart
                .draw_series(LineSeries::new(line, color.stroke_width(2)))
                .map_err(ChartError::series)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|p| {
                    // Hollow: not a value to rank (see `Series::hollow`).
                    let style = if p.2 { color.stroke_width(2) } else { color.filled() };
                    Circle::new((p.0, p.1), 4, style)
                }))
                .map_err(ChartError::series)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK.mix(0.3))
        .background_style(WHITE.mix(0.85))
        .draw()
        .map_err(ChartError::legend)?;
    Ok(())
}

/// A chart of points (x, y) joined per series, x and y linear from zero, with a dashed
/// horizontal line at `target` (a latency target) where given: a capacity search's p99
/// against the rate offered, a line per target.
pub fn xy_chart(
    title: &str,
    (x_label, x_unit): (&str, Unit),
    (y_label, y_unit): (&str, Unit),
    series: &[(String, Vec<(f64, f64)>)],
    target: Option<f64>,
) -> Result<String, ChartError> {
    let mut svg = String::new();
    let points = series.iter().flat_map(|s| s.1.iter());
    let xmax = points.clone().map(|p| p.0).fold(0.0f64, f64::max).max(1.0) * 1.05;
    // p99s span microseconds to seconds once a probe overloads: a logarithmic y axis keeps the
    // target line and the probes under it readable.
    let ys = || points.clone().map(|p| p.1).chain(target).filter(|y| *y > 0.0);
    let ymax = ys().fold(1.0f64, f64::max) * 1.5;
    let ymin = ys().fold(f64::INFINITY, f64::min).min(ymax / 10.0) / 1.5;
    {
        let root = SVGBackend::with_string(&mut svg, (600, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(ChartError::canvas)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..xmax, (ymin..ymax).log_scale())
            .map_err(ChartError::axes)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(format!("{y_label} (log)"))
            .x_label_formatter(&|v: &f64| label(*v, x_unit))
            .y_label_formatter(&|v: &f64| label(*v, y_unit))
            .draw()
            .map_err(ChartError::axes)?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let mut pts = pts.clone();
            pts.retain(|p| p.1 > 0.0);
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(ChartError::series)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(ChartError::series)?;
        }
        if let Some(t) = target {
            let grey = BLACK.mix(0.55);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, t), (xmax, t)],
                    6,
                    4,
                    grey.stroke_width(2),
                ))
                .map_err(ChartError::series)?
                .label(format!("target {}", label(t, y_unit)))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], grey.stroke_width(1)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(ChartError::legend)?;
        root.present().map_err(ChartError::canvas)?;
    }
    Ok(svg)
}
