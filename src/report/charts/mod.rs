//! Line charts as inline SVG (plotters' SVG backend): one line per target over connection
//! counts, on a logarithmic axis when the counts span more than a factor of ten; values in human
//! units (k, M; µs, ms); points that may not be ranked drawn hollow (the client was the limit, a
//! latency of a cell that starved connections); reference series (a seed's published
//! numbers) dashed.

use plotters::prelude::*;

/// One line of a chart: a name and a value per x position (None: no data there).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// Points that may not be ranked (the client was the limit, or the metric's rule leaves the
    /// cell out: a starved latency), drawn hollow; may be empty.
    pub hollow: Vec<bool>,
    /// A reference (a seed's published numbers, a prediction), drawn dashed.
    pub reference: bool,
    /// A reference drawn in the colour of the measured series at this index (a target's
    /// prediction beside its measurement); grey where `None`.
    pub like: Option<usize>,
}

impl Series {
    /// A measured series with no hollow point.
    #[cfg(test)]
    pub fn new(name: impl Into<String>, values: Vec<Option<f64>>) -> Series {
        Series {
            name: name.into(),
            values,
            hollow: Vec::new(),
            reference: false,
            like: None,
        }
    }
}

/// How the y values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Counts: 12k, 1.5M.
    Count,
    /// Microseconds: 850 µs, 1.2 ms, 2.5 s.
    Micros,
    /// A plain number (an index, a ratio).
    Plain,
}

/// `v` in `unit`, short, for an axis label.
pub fn label(v: f64, unit: Unit) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    match unit {
        Unit::Count => crate::units::si(v),
        Unit::Micros if v.abs() >= 1e6 => format!("{} s", trim(format!("{:.2}", v / 1e6))),
        Unit::Micros if v.abs() >= 1e3 => format!("{} ms", trim(format!("{:.2}", v / 1e3))),
        Unit::Micros => format!("{} µs", trim(format!("{v:.1}"))),
        Unit::Plain => trim(format!("{v:.3}")),
    }
}

/// plotters could not draw a chart.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(String);

fn chart_err(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
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
        root.fill(&WHITE).map_err(chart_err)?;
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
                .map_err(chart_err)?;
            draw(chart, &axes, series)?;
        } else {
            let pad = ((hi - lo) * 0.1).max(lo * 0.5).max(0.5);
            let chart = builder
                .build_cartesian_2d((lo - pad).max(0.0)..hi + pad, 0f64..ymax)
                .map_err(chart_err)?;
            draw(chart, &axes, series)?;
        }
        root.present().map_err(chart_err)?;
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
        .map_err(chart_err)?;
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
                .map_err(chart_err)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(1)));
            chart
                .draw_series(pts.iter().map(|p| Cross::new((p.0, p.1), 4, color.stroke_width(2))))
                .map_err(chart_err)?;
        } else {
            chart
                .draw_series(LineSeries::new(line, color.stroke_width(2)))
                .map_err(chart_err)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|p| {
                    // Hollow: not a value to rank (see `Series::hollow`).
                    let style = if p.2 { color.stroke_width(2) } else { color.filled() };
                    Circle::new((p.0, p.1), 4, style)
                }))
                .map_err(chart_err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK.mix(0.3))
        .background_style(WHITE.mix(0.85))
        .draw()
        .map_err(chart_err)?;
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
        root.fill(&WHITE).map_err(chart_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..xmax, (ymin..ymax).log_scale())
            .map_err(chart_err)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(format!("{y_label} (log)"))
            .x_label_formatter(&|v: &f64| label(*v, x_unit))
            .y_label_formatter(&|v: &f64| label(*v, y_unit))
            .draw()
            .map_err(chart_err)?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let mut pts = pts.clone();
            pts.retain(|p| p.1 > 0.0);
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(chart_err)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(chart_err)?;
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
                .map_err(chart_err)?
                .label(format!("target {}", label(t, y_unit)))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], grey.stroke_width(1)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(chart_err)?;
        root.present().map_err(chart_err)?;
    }
    Ok(svg)
}

/// The height of a row of a bar chart's legend.
const LEGEND_ROW: f64 = 18.0;

/// The places (x, row) of a bar chart's legend entries: names laid out left to right from
/// `left`, a new row where one would pass `right_edge` (a name's width taken at 7 px a
/// character).
fn legend_places(series: &[Series], left: f64, right_edge: f64) -> Vec<(f64, usize)> {
    let mut legend: Vec<(f64, usize)> = Vec::new();
    let (mut x, mut row) = (left, 0);
    for s in series {
        let width = 16.0 + 7.0 * s.name.chars().count() as f64 + 18.0;
        if x + width > right_edge && x > left {
            (x, row) = (left, row + 1);
        }
        legend.push((x, row));
        x += width;
    }
    legend
}

/// The horizontal lines and labels of a logarithmic axis from decade `d0` to `d1`, `y` placing
/// a value, between `left` and `right_edge`.
fn decades(d0: f64, d1: f64, y: &dyn Fn(f64) -> f64, left: f64, right_edge: f64, unit: Unit) -> String {
    let mut svg = String::new();
    let mut d = d0;
    while d <= d1 {
        let v = 10f64.powf(d);
        svg.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{right_edge}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y(v) + 4.0,
            super::html::esc(&label(v, unit)),
            y = y(v)
        ));
        d += 1.0;
    }
    svg
}

/// Grouped bars as SVG, on a logarithmic y axis (latencies of request classes span µs to
/// seconds): one group per name in `groups`, one bar per series in each (a series' value `k` is
/// its bar in group `k`; `None`: no bar, and "–" under where it would be).
pub fn bar_chart(title: &str, y_label: &str, unit: Unit, groups: &[String], series: &[Series]) -> String {
    let (w, left, right, top) = (600.0, 72.0, 12.0, 34.0);
    let legend = legend_places(series, left, w - right);
    let rows = legend.last().map_or(1, |l| l.1 + 1);
    let bottom = 40.0 + rows as f64 * LEGEND_ROW;
    let h = 276.0 + bottom;
    let values = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .copied()
        .filter(|v| *v > 0.0);
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(0.0f64, f64::max);
    let esc = super::html::esc;
    let mut svg = format!(
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\" \
         font-family=\"sans-serif\" font-size=\"12\"><rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\
         <text x=\"{}\" y=\"20\" font-size=\"17\" text-anchor=\"middle\">{}</text>",
        w / 2.0,
        esc(title)
    );
    if !(lo.is_finite() && hi > 0.0) || groups.is_empty() {
        return svg + "<text x=\"300\" y=\"170\" text-anchor=\"middle\">nothing measured</text></svg>";
    }
    // Whole decades around the values.
    let (d0, d1) = (lo.log10().floor(), (hi.log10().ceil()).max(lo.log10().floor() + 1.0));
    let plot_h = h - top - bottom;
    let y = |v: f64| top + plot_h * (1.0 - (v.log10() - d0) / (d1 - d0));
    svg.push_str(&decades(d0, d1, &y, left, w - right, unit));
    svg.push_str(&format!(
        "<text transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{} (log)</text>",
        top + plot_h / 2.0,
        esc(y_label)
    ));
    let group_w = (w - left - right) / groups.len() as f64;
    let bar_w = group_w * 0.8 / series.len().max(1) as f64;
    for (g, name) in groups.iter().enumerate() {
        let x0 = left + g as f64 * group_w + group_w * 0.1;
        for (i, s) in series.iter().enumerate() {
            let x = x0 + i as f64 * bar_w;
            let (r, gr, b) = Palette99::pick(i).rgb();
            match s.values.get(g).copied().flatten().filter(|v| *v > 0.0) {
                Some(v) => svg.push_str(&format!(
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"rgb({r},{gr},{b})\">\
                     <title>{}: {}</title></rect>",
                    y(v),
                    bar_w * 0.9,
                    (h - bottom - y(v)).max(1.0),
                    esc(&s.name),
                    esc(&label(v, unit))
                )),
                None => svg.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">–</text>",
                    x + bar_w * 0.45,
                    h - bottom - 4.0
                )),
            }
        }
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            left + (g as f64 + 0.5) * group_w,
            h - bottom + 16.0,
            esc(name)
        ));
    }
    // The legend: a swatch and a name per series, in rows under the groups.
    for (i, (x, row)) in legend.iter().enumerate() {
        let (r, g, b) = Palette99::pick(i).rgb();
        let y = h - bottom + 28.0 + *row as f64 * LEGEND_ROW;
        svg.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" fill=\"rgb({r},{g},{b})\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x + 16.0,
            y + 10.0,
            esc(&series[i].name)
        ));
    }
    svg + "</svg>"
}

#[cfg(test)]
mod tests;
