//! Unit tests of scenarios, results, charts and the units users type.

mod bench_results {
    use muxlab::bench::results::*;

    #[test]
    fn medians_and_timestamps() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        let t = timestamp();
        assert_eq!(t.len(), 15);
        assert!(t.starts_with("20"));
    }
}

mod bench_scenario {
    use muxlab::bench::scenario::*;

    #[test]
    fn every_builtin_scenario_parses() {
        for (name, text) in BUILTIN {
            let s = parse(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&s.name, name);
        }
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let base = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\nconnections = [1]\nduration = \"1s\"\n";
        let e = parse(&format!("{base}models = [\"epol\"]\n"), "f.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.toml, line 8, field 'models'") && e.contains("unknown model 'epol'"),
            "{e}"
        );
        let e = parse(&format!("{base}models = [\"epoll\"]\nconections = [2]\n"), "f.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 9") && e.contains("conections"), "{e}");
        let e = parse(&format!("{base}models = [\"epoll\"]\nwork = \"gpu:1s\"\n"), "f.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 9, field 'work'"), "{e}");
        let e = parse("name = \"x\"\ndescription = 3\n", "f.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = parse(
            &format!("client_hosts = [\"a\"]\n{base}models = [\"epoll\"]\n"),
            "f.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("field 'client_hosts'") && e.contains("server_addr"), "{e}");
        let e = parse(
            &format!("server_addr = \"nowhere\"\n{base}models = [\"epoll\"]\n"),
            "f.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("field 'server_addr'"), "{e}");
    }

    #[test]
    fn placement_splits_bigger_machines_and_keeps_two_cores_as_they_were() {
        let base = "name = \"x\"\ndescription = \"d\"\n";
        let exp = "[[experiment]]\nname = \"e\"\nproto = \"http\"\nmodels = [\"epoll\"]\nconnections = [1]\nduration = \"1s\"\n";
        let sc = parse(&format!("{base}{exp}"), "f").unwrap();
        let split = muxlab::bench::default_split;
        assert_eq!(split(&[0, 1], &sc), ("0".into(), "1".into(), 1));
        assert_eq!(split(&[0], &sc), ("0".into(), "0".into(), 1));
        let cpus: Vec<usize> = (0..16).collect();
        assert_eq!(
            split(&cpus, &sc),
            ("0,1,2,3,4,5,6,7".into(), "8,9,10,11,12,13,14,15".into(), 8)
        );
        let set = parse(
            &format!("{base}server_cpus = \"0-3\"\nclient_cpus = \"4,5\"\n{exp}"),
            "f",
        )
        .unwrap();
        assert_eq!(split(&cpus, &set), ("0-3".into(), "4,5".into(), 2));
    }
}

mod report_charts {
    use muxlab::report::charts::*;

    #[test]
    fn renders_an_svg_with_every_series() {
        let mut bound = Series::new("poll", vec![Some(2000.0), Some(4000.0), Some(350_000.0)]);
        bound.hollow = vec![false, false, true];
        let seed = Series {
            name: "seed: epoll".into(),
            values: vec![Some(1500.0), None, Some(300_000.0)],
            hollow: Vec::new(),
            reference: true,
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
    fn axis_labels_read_in_human_units() {
        assert_eq!(label(350_000.0, Unit::Count), "350k");
        assert_eq!(label(1_500_000.0, Unit::Count), "1.5M");
        assert_eq!(label(850.0, Unit::Micros), "850 µs");
        assert_eq!(label(1200.0, Unit::Micros), "1.2 ms");
        assert_eq!(label(0.5, Unit::Plain), "0.5");
    }
}

mod units {
    use std::time::Duration;

    use muxlab::units::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("200us").unwrap(), Duration::from_micros(200));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert_eq!(format_duration(Duration::from_micros(200)), "200us");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_micros(2500)), "2.5ms");
    }

    #[test]
    fn cpus_and_ranges() {
        assert_eq!(parse_cpus("0,2-3").unwrap(), vec![0, 2, 3]);
        assert!(parse_cpus("3-1").is_err());
        assert_eq!(parse_ipv4_range("127.0.0.2-127.0.0.4").unwrap().len(), 3);
        assert!(parse_ipv4_range("127.0.0.9-127.0.0.4").is_err());
    }
}

mod server_config {
    use std::time::Duration;

    use muxlab::server::config::*;

    #[test]
    fn work_specs() {
        assert_eq!(
            "cpu:200us".parse::<Work>().unwrap(),
            Work::Cpu(Duration::from_micros(200))
        );
        assert_eq!(
            "sleep:1ms".parse::<Work>().unwrap(),
            Work::Sleep(Duration::from_millis(1))
        );
        assert_eq!("none".parse::<Work>().unwrap(), Work::None);
        assert!("gpu:1s".parse::<Work>().is_err());
        assert_eq!(Work::Cpu(Duration::from_micros(200)).to_string(), "cpu:200us");
    }
}

mod verdicts {
    use muxlab::bench::results::{Cell, Figures};
    use muxlab::bench::scenario::parse;
    use muxlab::bench::verdict::verdict;

    fn cell(target: &str, conns: usize, repeat: usize, rps: f64, cpu: f64, syscalls: f64, bound: bool) -> Cell {
        Cell {
            experiment: "e".into(),
            target: target.into(),
            connections: conns,
            repeat,
            status: "ok".into(),
            seconds: 1.0,
            figures: Figures {
                throughput_rps: rps,
                requests: 1000,
                p99_us: 1e6 / rps,
                server_cpu_us_per_req: Some(cpu),
                syscalls_per_req: Some(syscalls),
                client_bound: bound,
                ..Figures::default()
            },
            load: serde_json::Value::Null,
            server_stats: serde_json::Value::Null,
        }
    }

    fn experiment() -> muxlab::bench::scenario::Experiment {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\", \"poll\", \"thread\"]\nconnections = [10, 100]\nduration = \"1s\"\n";
        parse(text, "t").unwrap().experiments.remove(0)
    }

    /// Ranked over every count, the best can still lose at the largest, whose values are
    /// quoted: the sentence says so instead of calling the smaller number the worse one.
    #[test]
    fn a_best_that_loses_at_the_largest_count_is_said_to_flip_there() {
        let mut cells = Vec::new();
        for r in 0..3 {
            let j = r as f64 * 0.01;
            for n in [10, 50] {
                cells.push(cell("epoll", n, r, 100_000.0, 2.0 + j, 2.0, false));
                cells.push(cell("poll", n, r, 100_000.0, 6.0 + j, 2.0, false));
            }
            cells.push(cell("epoll", 100, r, 100_000.0, 5.5 + j, 2.0, false));
            cells.push(cell("poll", 100, r, 100_000.0, 5.0 + j, 2.0, false));
        }
        let v = verdict(&experiment(), &cells, 3);
        assert!(
            v.text.contains("Server CPU per request: epoll is best over all counts")
                && v.text.contains("at 100 connections, where the order flips"),
            "{}",
            v.text
        );
    }

    /// Paired rounds drift: nginx's median (9.5) is below epoll's (10.2), yet epoll was cheaper
    /// than nginx in two of the three rounds, by 11% and 13%, and dearer in one by 24%. Ranked
    /// within rounds, epoll is the runner-up to uring and nginx is last, as the rounds' ratios say.
    #[test]
    fn paired_rounds_are_ranked_within_rounds_not_by_drifting_medians() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    paired = true\nmodels = [\"epoll\", \"uring\"]\npeers = [\"nginx\"]\nconnections = [50]\nduration = \"1s\"\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        let rounds = [(8.51, 7.42, 9.51), (10.34, 7.0, 8.33), (10.2, 9.7, 11.78)];
        let mut cells = Vec::new();
        for (r, (epoll, uring, nginx)) in rounds.into_iter().enumerate() {
            cells.push(cell("epoll", 50, r, 100_000.0, epoll, 2.0, false));
            cells.push(cell("uring", 50, r, 100_000.0, uring, 0.3, false));
            cells.push(cell("nginx", 50, r, 100_000.0, nginx, 2.0, false));
        }
        let cpu = |x: &muxlab::bench::scenario::Experiment| {
            let v = verdict(x, &cells, 3);
            let f = v.findings.into_iter().find(|f| f.metric == "server CPU per request");
            (f.unwrap(), v.text)
        };
        let (f, text) = cpu(&x);
        assert_eq!((f.best.as_str(), f.runner_up.as_str()), ("uring", "epoll"), "{text}");
        assert_eq!(f.last.as_ref().unwrap().0, "nginx", "{text}");
        // Unpaired, the medians rank nginx second.
        let mut unpaired = x.clone();
        unpaired.paired = false;
        let (f, text) = cpu(&unpaired);
        assert_eq!(f.runner_up, "nginx", "{text}");
    }

    /// The report's table bolds, in paired rounds, the target best within rounds: B's raw
    /// median CPU (9.5) is below A's (10.0), but A was cheaper in 2 of 3 rounds.
    #[test]
    fn a_paired_table_marks_the_best_within_rounds() {
        let text = "name = \"x\"\ndescription = \"d\"\nrepeats = 3\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    paired = true\nmodels = [\"epoll\", \"poll\"]\nconnections = [50]\nduration = \"1s\"\n";
        let scenario = parse(text, "t").unwrap();
        let mut cells = Vec::new();
        // Round 1 has the median throughput: its cells are the ones the table shows.
        for (r, (a, b)) in [(5.0, 6.0), (10.0, 9.5), (10.0, 11.0)].into_iter().enumerate() {
            let rps = 90_000.0 + 10_000.0 * r as f64;
            cells.push(cell("epoll", 50, r, rps, a, 2.0, false));
            cells.push(cell("poll", 50, r, rps, b, 2.0, false));
        }
        let mut results = muxlab::bench::results::Results {
            scenario,
            environment: serde_json::Value::Null,
            cells,
            interrupted: false,
            verdicts: Vec::new(),
        };
        let page = muxlab::report::html::render(&results);
        assert!(page.contains("<td class=\"best\">10.0<br>"), "epoll's CPU is marked");
        assert!(
            !page.contains("<td class=\"best\">9.5<br>"),
            "poll's lower median is not"
        );
        // Unpaired, the lower median is the best.
        results.scenario.experiments[0].paired = false;
        let page = muxlab::report::html::render(&results);
        assert!(page.contains("<td class=\"best\">9.5<br>"));
    }

    #[test]
    fn the_sign_test_counts_the_chance_of_so_many_wins() {
        use muxlab::bench::results::sign_test;
        assert!((sign_test(8, 8) - 1.0 / 256.0).abs() < 1e-12);
        assert!((sign_test(0, 8) - 1.0).abs() < 1e-12);
        assert!((sign_test(7, 8) - 9.0 / 256.0).abs() < 1e-12);
        assert!(sign_test(6, 8) > 0.05);
    }

    /// Paired rounds: a target better in 7 of 8 rounds is clearly better even where the two
    /// ranges overlap (the machine drifted between rounds); better in 5 of 8 is not.
    #[test]
    fn a_paired_experiment_calls_a_difference_by_the_rounds_it_wins() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    paired = true\nmodels = [\"epoll\", \"poll\"]\nconnections = [100]\nduration = \"1s\"\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        for (wins, clear) in [(7, true), (5, false)] {
            let mut cells = Vec::new();
            for r in 0..8 {
                // The machine's state moves every round by far more than the gap.
                let drift = 1.0 + 0.1 * r as f64;
                let gap = if r < wins { 0.95 } else { 1.02 };
                cells.push(cell("epoll", 100, r, 100_000.0, 5.0 * drift * gap, 2.0, false));
                cells.push(cell("poll", 100, r, 100_000.0, 5.0 * drift, 2.0, false));
            }
            let v = verdict(&x, &cells, 8);
            let cpu = v
                .findings
                .iter()
                .find(|f| f.metric == "server CPU per request")
                .unwrap();
            assert_eq!((cpu.best.as_str(), cpu.clear), ("epoll", clear), "{}", v.text);
            if !clear {
                assert!(v.text.contains("not better in enough of 8 paired rounds"), "{}", v.text);
            }
        }
    }

    #[test]
    fn a_clear_winner_is_named_with_its_ratio_and_the_counters_behind_it() {
        let mut cells = Vec::new();
        for r in 0..3 {
            let j = r as f64;
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 100_000.0 + j * 1000.0, 5.0 + j * 0.1, 2.0, false));
                cells.push(cell("poll", n, r, 80_000.0 + j * 1000.0, 6.5 + j * 0.1, 6.0, false));
                cells.push(cell("thread", n, r, 50_000.0 + j * 1000.0, 11.0, 2.0, true));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        let cpu = v
            .findings
            .iter()
            .find(|f| f.metric == "server CPU per request")
            .unwrap();
        assert_eq!(
            (cpu.best.as_str(), cpu.runner_up.as_str(), cpu.clear),
            ("epoll", "poll", true)
        );
        assert!((cpu.ratio - 6.6 / 5.1).abs() < 0.01, "{}", cpu.ratio);
        assert!(
            v.text.contains("Server CPU per request: epoll is best, 1.29× poll"),
            "{}",
            v.text
        );
        assert!(v.text.contains("last is thread"), "{}", v.text);
        assert!(
            v.text
                .contains("Why: epoll has 2.00 syscalls per request against 6.00 (≈ 1.1 µs), of the 1.5 µs gap in server CPU per request to poll."),
            "{}",
            v.text
        );
        assert!(v.text.contains("client was saturated in 6 of 18 cells"), "{}", v.text);
    }

    /// Two syscalls cannot cover 20 µs: a counter that differs a lot but accounts for little
    /// of the gap is not given as its reason.
    #[test]
    fn a_counter_too_small_to_cover_the_gap_is_not_its_reason() {
        let mut cells = Vec::new();
        for r in 0..3 {
            let j = r as f64 * 0.1;
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 10_000.0, 114.0 + j, 0.05, false));
                cells.push(cell("poll", n, r, 9_000.0, 134.0 + j, 2.08, false));
            }
        }
        let costs = muxlab::bench::costs::UnitCosts::DOCUMENTED;
        let v = muxlab::bench::verdict::verdict_with(&experiment(), &cells, 3, &costs);
        assert!(v.reasons.is_empty(), "{:?}", v.reasons);
        assert!(!v.text.contains("Why:"), "{}", v.text);
        assert!(
            v.text.contains(
                "The counters muxlab keeps do not explain the gap of 20.0 µs between epoll and poll: \
                 0.05 syscalls per request against 2.08 (≈ 0.5 µs) (epoll) account for too little of it."
            ),
            "{}",
            v.text
        );
        // The same counter at 80 syscalls' difference covers it.
        let more: Vec<Cell> = cells
            .into_iter()
            .map(|mut c| {
                if c.target == "poll" {
                    c.figures.syscalls_per_req = Some(80.0);
                }
                c
            })
            .collect();
        let v = muxlab::bench::verdict::verdict_with(&experiment(), &more, 3, &costs);
        assert!(
            v.text.contains("Why: epoll has 0.05 syscalls per request against 80"),
            "{}",
            v.text
        );
    }

    #[test]
    fn a_row_says_steal_time_above_two_percent_and_dashes_what_was_not_measured() {
        let mut c = cell("epoll", 10, 0, 1000.0, 5.0, 2.0, false);
        c.figures.steal_pct = Some(3.46);
        assert!(muxlab::report::table::row(&c).contains("steal 3.5%"));
        c.figures.steal_pct = Some(1.9);
        assert!(!muxlab::report::table::row(&c).contains("steal"));
        c.figures.server_cpu_us_per_req = None;
        c.figures.server_cpu_cores = None;
        let row = muxlab::report::table::row(&c);
        assert!(row.contains(" – ") && !row.contains(" 0.0 "), "{row}");
    }

    /// A paired run measures its first model twice per round; the twin is never ranked, and
    /// the largest difference between the two is the smallest this machine resolved.
    #[test]
    fn the_a_a_twin_is_not_ranked_and_its_spread_is_said() {
        let mut cells = Vec::new();
        for r in 0..3 {
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 100_000.0, 5.0, 2.0, false));
                cells.push(cell("poll", n, r, 80_000.0, 6.5, 2.0, false));
                let twin = if r == 1 { 5.2 } else { 4.95 };
                cells.push(cell("epoll (A/A)", n, r, 200_000.0, twin, 2.0, false));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        let aa = v.aa.as_ref().unwrap();
        assert_eq!((aa.target.as_str(), aa.rounds), ("epoll", 6));
        assert!((aa.max_diff_pct - 4.0).abs() < 1e-9, "{aa:?}");
        assert!((aa.median_diff_pct - 1.0101).abs() < 0.001, "{aa:?}");
        assert!(
            v.text.contains(
                "A/A: epoll against itself in the same rounds was 1.0% apart in server CPU per request (median; up to 4.0%, 6 rounds)"
            ),
            "{}",
            v.text
        );
        assert!(
            v.text.contains("Throughput: epoll is best"),
            "the twin's 200k must not rank: {}",
            v.text
        );
        assert!(!v
            .findings
            .iter()
            .any(|f| f.best.contains("A/A") || f.runner_up.contains("A/A")));
    }

    /// A gap the rounds separate but smaller than what the first model differed from itself
    /// by is not resolved: no clear difference, and the sentence says why.
    #[test]
    fn a_gap_under_the_a_a_difference_is_no_clear_difference() {
        let mut cells = Vec::new();
        for r in 0..3 {
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 100_000.0, 5.0, 2.0, false));
                cells.push(cell("poll", n, r, 80_000.0, 5.1, 2.0, false));
                cells.push(cell("epoll (A/A)", n, r, 100_000.0, 5.25, 2.0, false));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        let cpu = v
            .findings
            .iter()
            .find(|f| f.metric == "server CPU per request")
            .unwrap();
        assert!(!cpu.clear, "{}", v.text);
        assert!(
            v.text
                .contains("Server CPU per request: no clear difference between epoll and poll (1.02×, under the 5.0% the A/A pair differed by)"),
            "{}",
            v.text
        );
        assert!(v.text.contains("Throughput: epoll is best"), "{}", v.text);
    }

    #[test]
    fn a_gap_inside_the_spread_is_no_clear_difference_and_one_target_is_said() {
        let mut cells = Vec::new();
        for (r, (a, b)) in [(100_000.0, 99_000.0), (90_000.0, 101_000.0), (95_000.0, 94_000.0)]
            .into_iter()
            .enumerate()
        {
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, a, 5.0, 2.0, false));
                cells.push(cell("poll", n, r, b, 5.0, 2.0, false));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        assert!(v.text.contains("Throughput: no clear difference between"), "{}", v.text);
        assert!(v.text.contains("inside the spread of 3 runs"), "{}", v.text);
        let only: Vec<Cell> = cells.into_iter().filter(|c| c.target == "epoll").collect();
        assert!(verdict(&experiment(), &only, 3).text.contains("only epoll finished"));
        assert!(verdict(&experiment(), &[], 3).text.contains("no cell finished"));
    }
}

mod steer {
    use muxlab::bench::scenario::parse;
    use muxlab::bench::steer::rps_mask;

    #[test]
    fn cpu_masks_are_hex_in_32_bit_groups() {
        assert_eq!(rps_mask(&[1]), "2");
        assert_eq!(rps_mask(&[0, 1]), "3");
        assert_eq!(rps_mask(&[2, 3]), "c");
        assert_eq!(rps_mask(&[33]), "2,00000000");
        assert_eq!(rps_mask(&[0, 32]), "1,00000001");
    }

    /// Steering is for this machine's loopback: a scenario with hosts is refused, naming the field.
    #[test]
    fn steer_rx_is_refused_for_servers_on_other_hosts() {
        let text =
            "name = \"x\"\ndescription = \"d\"\nsteer_rx = true\nserver_host = \"h1\"\n[[experiment]]\nname = \"e\"\n\
                    proto = \"http\"\nmodels = [\"epoll\"]\nconnections = [10]\nduration = \"1s\"\n";
        let e = parse(text, "t").unwrap_err().to_string();
        assert!(e.contains("field 'steer_rx'") && e.contains("drop server_host"), "{e}");
        assert!(parse(&text.replace("server_host = \"h1\"\n", ""), "t").is_ok());
    }
}

mod compare {
    use muxlab::bench::results::{Cell, Figures, Results};
    use muxlab::bench::scenario::parse;
    use muxlab::report::compare::{html, rows, table};

    fn results(rps: &[(&str, f64)]) -> Results {
        let text = "name = \"x\"\ndescription = \"d\"\nrepeats = 2\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\", \"poll\"]\nconnections = [10]\nduration = \"1s\"\n";
        let scenario = parse(text, "t").unwrap();
        let cells = rps
            .iter()
            .enumerate()
            .map(|(i, (t, v))| Cell {
                experiment: "e".into(),
                target: t.to_string(),
                connections: 10,
                repeat: i,
                status: "ok".into(),
                seconds: 1.0,
                figures: Figures {
                    throughput_rps: *v,
                    p99_us: 100.0,
                    server_cpu_us_per_req: Some(1e6 / v),
                    ..Figures::default()
                },
                load: serde_json::Value::Null,
                server_stats: serde_json::Value::Null,
            })
            .collect();
        Results {
            scenario,
            environment: serde_json::Value::Null,
            cells,
            interrupted: false,
            verdicts: Vec::new(),
        }
    }

    #[test]
    fn changes_beyond_the_noise_are_marked_and_the_rest_are_not() {
        let a = results(&[("epoll", 100.0), ("epoll", 104.0), ("poll", 100.0), ("poll", 110.0)]);
        let b = results(&[("epoll", 120.0), ("epoll", 124.0), ("poll", 105.0), ("poll", 95.0)]);
        let r = rows(&a, &b, false);
        assert_eq!(r.len(), 2);
        let epoll = &r[0].changes[0].as_ref().unwrap();
        assert!((epoll.ratio - 122.0 / 102.0).abs() < 1e-9);
        assert_eq!(epoll.verdict, Some(true), "throughput up beyond the spread is better");
        assert_eq!(
            r[0].changes[2].as_ref().unwrap().verdict,
            Some(true),
            "less CPU is better"
        );
        assert_eq!(
            r[1].changes[0].as_ref().unwrap().verdict,
            None,
            "overlapping ranges are noise"
        );
        let t = table("A", "B", &r);
        assert!(t.contains("better") && t.contains("1 better and 0 worse"), "{t}");
        assert!(html("A", "B", &r).contains("class=\"better\""));
    }

    /// `reference = "epoll"` in a paired experiment: poll at 0.9× epoll's CPU in each of 8
    /// drifting rounds is cheaper beyond the noise, said in words, in the terminal table and in
    /// the report; the reference is not compared with itself.
    #[test]
    fn every_target_is_compared_with_the_reference_round_by_round() {
        use muxlab::report::compare::against_reference;
        let drift = [100.0, 150.0, 80.0, 120.0, 95.0, 130.0, 90.0, 110.0];
        let mut r = results(&[]);
        r.scenario.experiments[0].paired = true;
        r.scenario.experiments[0].reference = Some("epoll".into());
        let mut all = results(&drift.map(|v| ("epoll", v)));
        all.cells.extend(results(&drift.map(|v| ("poll", v / 0.9))).cells);
        r.cells = all.cells;
        let a = against_reference(&r);
        assert_eq!(a.len(), 1);
        assert_eq!(
            a[0].rows.len(),
            1,
            "only poll: the reference is not compared with itself"
        );
        let cpu = a[0].rows[0].changes[2].as_ref().unwrap();
        assert!((cpu.ratio - 0.9).abs() < 1e-9, "{cpu:?}");
        assert_eq!(cpu.verdict, Some(true), "cheaper in 8 of 8 rounds");
        let words = a[0].sentence();
        assert!(
            words.contains("1 of 1 cells cheaper") && words.contains("the cheapest is poll at 10 connections, 0.90×"),
            "{words}"
        );
        assert!(words.contains("cheaper in 8 of 8 paired rounds"), "{words}");
        assert!(a[0].table().contains("lowest–highest round"));
        let page = muxlab::report::html::render(&r);
        assert!(page.contains("Against the reference") && page.contains("CPU/request / epoll"));
        assert!(page.contains("Paired rounds: this table shows each target's own medians"));
        // Without a reference, nothing is said.
        r.scenario.experiments[0].reference = None;
        assert!(against_reference(&r).is_empty());
        assert!(!muxlab::report::html::render(&r).contains("Against the reference"));
    }

    /// A reference that is not one of the experiment's targets is refused, naming the field.
    #[test]
    fn a_reference_that_is_not_a_target_is_refused() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\"]\npeers = [\"nginx\"]\nreference = \"ngnix\"\nconnections = [10]\nduration = \"1s\"\n";
        let e = parse(text, "t").unwrap_err().to_string();
        assert!(
            e.contains("field 'reference'") && e.contains("\"ngnix\" is not one of its models or peers"),
            "{e}"
        );
        assert!(parse(&text.replace("ngnix", "nginx"), "t").is_ok());
    }

    /// One paired run with a baseline: each round's B/A counts. B 5% faster in every one of
    /// five rounds is beyond the noise though the machine's drift makes the ranges overlap;
    /// compared as two separate runs, it is not.
    #[test]
    fn paired_rounds_of_one_run_compare_round_by_round() {
        let drift = [100.0, 150.0, 80.0, 120.0, 95.0];
        let a = results(&drift.map(|v| ("epoll", v)));
        let b = results(&drift.map(|v| ("epoll", v * 1.05)));
        let (mut pa, mut pb) = (a.clone(), b.clone());
        pa.scenario.experiments[0].paired = true;
        pb.scenario.experiments[0].paired = true;
        let paired = rows(&pa, &pb, true);
        let t = paired[0].changes[0].as_ref().unwrap();
        assert!(
            (t.ratio - 1.05).abs() < 1e-9 && (t.spread.0 - 1.05).abs() < 1e-9,
            "{t:?}"
        );
        assert_eq!(t.verdict, Some(true));
        assert_eq!(rows(&pa, &pb, false)[0].changes[0].as_ref().unwrap().verdict, None);
        assert_eq!(rows(&a, &b, true)[0].changes[0].as_ref().unwrap().verdict, None);
    }
}

mod sampling {
    use muxlab::bench::hosts::Sampler;

    /// A sample that cannot be taken is an error naming what failed (the runner records it as
    /// the cell's status), never a zero.
    #[test]
    fn a_server_whose_processes_cannot_be_read_fails_the_sample_with_its_reason() {
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id() as i32;
        gone.wait().unwrap();
        let mut s = Sampler::new(pid, None).unwrap();
        let e = s.tree().unwrap_err().to_string();
        assert!(e.contains("sampling the server's processes failed"), "{e}");
        let e = s.all().unwrap_err().to_string();
        assert!(e.contains("sampling the server's processes failed"), "{e}");
    }
}
