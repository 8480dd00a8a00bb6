use super::series::label;
use crate::report::charts::*;

#[test]
fn renders_an_svg_with_every_series() {
    let mut bound = Series::new("poll", vec![Some(2000.0), Some(4000.0), Some(350_000.0)]);
    bound.hollow = vec![false, false, true];
    let seed = Series {
        name: "seed: epoll".into(),
        values: vec![Some(1500.0), None, Some(300_000.0)],
        hollow: Vec::new(),
        reference: true,
        like: None,
    };
    let s = line_chart(
        "throughput",
        "req/s",
        Unit::Count,
        &[1, 100, 1000],
        &[
            Series::new("epoll", vec![Some(1000.0), Some(5000.0), None]),
            bound,
            seed,
        ],
    )
    .unwrap();
    assert!(
        s.starts_with("<svg") && s.contains("epoll") && s.contains("seed: epoll"),
        "{s}"
    );
    assert!(
        s.contains("\n100k\n") && !s.contains("350000"),
        "human units on the axes: {s}"
    );
    assert!(s.contains("stroke-dasharray") || s.matches("<line").count() > 0 || s.contains("polyline"));
}

#[test]
fn bars_are_drawn_per_group_and_series_on_decades_and_a_missing_one_is_a_dash() {
    let groups = vec!["short".to_string(), "long".to_string()];
    let s = bar_chart(
        "p99 per class",
        "p99",
        Unit::Micros,
        &groups,
        &[
            Series::new("reactor", vec![Some(4000.0), Some(9000.0)]),
            Series::new("thread", vec![Some(60.0), None]),
        ],
    );
    assert!(s.starts_with("<svg") && s.ends_with("</svg>"), "{s}");
    assert_eq!(s.matches("<title>").count(), 3, "three bars: {s}");
    assert!(
        s.contains("<title>thread: 60 µs</title>") && s.contains(">–</text>"),
        "{s}"
    );
    for tick in ["10 µs", "100 µs", "1 ms", "10 ms"] {
        assert!(s.contains(&format!(">{tick}</text>")), "decade {tick}: {s}");
    }
    assert!(s.contains(">short</text>") && s.contains(">long</text>") && s.contains(">reactor</text>"));
    // Long names wrap to a second legend row, and the chart grows to hold it.
    let long: Vec<Series> = (0..4)
        .map(|i| Series::new(format!("multi-reactor --workers {i}"), vec![Some(100.0), Some(200.0)]))
        .collect();
    let wrapped = bar_chart("t", "p99", Unit::Micros, &groups, &long);
    assert!(
        s.contains("height=\"334\"") && wrapped.contains("height=\"352\""),
        "one legend row, then two: {wrapped}"
    );
    let none = bar_chart("t", "p99", Unit::Micros, &groups, &[Series::new("a", vec![None, None])]);
    assert!(none.contains("nothing measured"));
}

#[test]
fn an_xy_chart_draws_every_series_and_the_target_line() {
    let s = xy_chart(
        "p99 against offered load",
        ("offered req/s", Unit::Count),
        ("p99", Unit::Micros),
        &[
            (
                "reactor".into(),
                vec![(1000.0, 800.0), (8000.0, 6670.0), (4000.0, 1090.0)],
            ),
            ("thread".into(), vec![(1000.0, 900.0)]),
        ],
        Some(5000.0),
    )
    .unwrap();
    assert!(
        s.contains("reactor") && s.contains("thread") && s.contains("target 5 ms"),
        "{s}"
    );
    assert!(
        s.contains("\n8k\n") || s.contains(">8k<"),
        "offered rates in human units: {s}"
    );
}

#[test]
fn axis_labels_read_in_human_units() {
    assert_eq!(label(350_000.0, Unit::Count), "350k");
    assert_eq!(label(1_500_000.0, Unit::Count), "1.5M");
    assert_eq!(label(850.0, Unit::Micros), "850 µs");
    assert_eq!(label(1200.0, Unit::Micros), "1.2 ms");
    assert_eq!(label(0.5, Unit::Plain), "0.5");
}
