//! Grouped bars as hand-written SVG on a logarithmic y axis (latencies of request classes span
//! µs to seconds), a legend laid out in rows under the chart.

use plotters::prelude::{Color, Palette, Palette99};

use super::series::{label, Series, Unit};

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
            crate::report::esc(&label(v, unit)),
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
    let esc = crate::report::esc;
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
