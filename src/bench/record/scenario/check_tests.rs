//! The scenario reader's checks (`check`), as a file's author meets them: every built-in scenario
//! parses, axes expand, and each wrong key or value is refused naming its file, line and field.

use crate::bench::record::scenario::*;

/// A refused value, the words its message holds, and whether its fault is the one meant.
type Case<'a> = (&'a str, &'a str, &'a dyn Fn(&ScenarioFault) -> bool);

/// An experiment's own `repeats` raises its rounds above the scenario's, never below.
#[test]
fn an_experiments_repeats_raise_its_rounds_and_zero_is_refused() {
    let x = experiment_of("\"epoll\"", "1", "repeats = 6\n").unwrap();
    assert_eq!((x.rounds(1), x.rounds(8)), (6, 8));
    let plain = experiment_of("\"epoll\"", "1", "").unwrap();
    assert_eq!(plain.rounds(3), 3);
    let e = experiment_of("\"epoll\"", "1", "repeats = 0\n").unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::ZeroRepeats)) && e.field() == Some("repeats"),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.contains("repeats") && e.contains("at least 1"), "{e}");
}

/// Axes that give two experiments one name (`ratio = ["1:9", "10:90"]`) are refused.
#[test]
fn experiments_with_one_name_are_refused() {
    let text = "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"resp\"\n\
                models = [\"reactor\"]\nconnections = [1]\nduration = \"1s\"\nratio = [\"1:9\", \"10:90\"]\n";
    let e = parse(text, "f.toml").unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::SameName { name }) if name == "e-get90"),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.contains("'e-get90'") && e.contains("twice"), "{e}");
}

#[test]
fn every_builtin_scenario_parses() {
    for (name, text) in BUILTIN {
        let s = parse(text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&s.name, name);
    }
}

#[test]
fn streams_is_an_axis_and_each_value_an_experiment_of_its_own() {
    let base = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nconnections = [1]\nduration = \"1s\"\nmodels = [\"epoll\"]\n";
    let s = parse(&format!("{base}proto = \"h2\"\nstreams = [1, 10, 100]\n"), "f.toml").unwrap();
    let got: Vec<(&str, usize)> = s
        .experiments
        .iter()
        .map(|x| (x.name.as_str(), x.load.streams))
        .collect();
    assert_eq!(got, [("e-1streams", 1), ("e-10streams", 10), ("e-100streams", 100)]);
    // One value is a plain key.
    let s = parse(&format!("{base}proto = \"h2\"\nstreams = 10\n"), "f.toml").unwrap();
    assert_eq!(
        (s.experiments[0].name.as_str(), s.experiments[0].load.streams),
        ("e", 10)
    );
    let axis = |why: AxisFault| move |f: &ScenarioFault| matches!(f, ScenarioFault::Axis(a) if a.why == why);
    let (empty, zero) = (axis(AxisFault::Empty), axis(AxisFault::NotWhole));
    let load = |f: &ScenarioFault| matches!(f, ScenarioFault::Load(_));
    let cases: [Case; 3] = [
        ("proto = \"h2\"\nstreams = []\n", "gives no value", &empty),
        ("proto = \"h2\"\nstreams = [0]\n", "at least 1", &zero),
        ("proto = \"http\"\nstreams = [10]\n", "--streams is HTTP/2's", &load),
    ];
    for (bad, says, kind) in cases {
        let e = parse(&format!("{base}{bad}"), "f.toml").unwrap_err();
        assert!(
            e.fault().is_some_and(kind) && e.field() == Some("streams"),
            "{bad}: {e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("field 'streams'") && e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn bad_files_name_the_line_and_field() {
    let base = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\nconnections = [1]\nduration = \"1s\"\n";
    let e = parse(&format!("{base}models = [\"epol\"]\n"), "f.toml").unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::UnknownModel { name }) if name == "epol"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "f.toml, line 8, field 'models': unknown model 'epol' (see muxlab models)"
    );
    let e = parse(&format!("{base}models = [\"epoll\"]\nconections = [2]\n"), "f.toml").unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::UnknownKey { key }) if key == "conections"),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.contains("line 9") && e.contains("conections"), "{e}");
    let e = parse(&format!("{base}models = [\"epoll\"]\nwork = \"gpu:1s\"\n"), "f.toml").unwrap_err();
    assert!(matches!(e.fault(), Some(ScenarioFault::Work(_))), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("line 9, field 'work'"), "{e}");
    let e = parse("name = \"x\"\ndescription = 3\n", "f.toml").unwrap_err();
    assert!(matches!(e.fault(), Some(ScenarioFault::Toml(_))), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("f.toml, line 2: "), "{e}");
    let e = parse(
        &format!("client_hosts = [\"a\"]\n{base}models = [\"epoll\"]\n"),
        "f.toml",
    )
    .unwrap_err();
    assert!(matches!(e.fault(), Some(ScenarioFault::NoServerForClients)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("field 'client_hosts'") && e.contains("server_addr"), "{e}");
    let e = parse(
        &format!("server_addr = \"nowhere\"\n{base}models = [\"epoll\"]\n"),
        "f.toml",
    )
    .unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::NotAnIp { given, .. }) if given == "nowhere"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "f.toml, line 1, field 'server_addr': 'nowhere' is not an IP address"
    );
}

/// Keys read the old way: `tls = true` is https for http and refused elsewhere; `size` on
/// http (ignored before) is noted and dropped; the alias `headers` points at its own line;
/// a packet experiment's frame size is the one the load sends.
#[test]
fn old_keys_are_read_with_a_note_or_refused_where_they_never_applied() {
    let head = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nmodels = [\"epoll\"]\nconnections = [1]\nduration = \"1s\"\n";
    let s = parse(&format!("{head}proto = \"http\"\ntls = true\nsize = 64\n"), "f").unwrap();
    assert_eq!(s.experiments[0].proto.name(), "https");
    assert_eq!(s.experiments[0].load.size, 128);
    assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
    let e = parse(&format!("{head}proto = \"echo\"\ntls = true\n"), "f").unwrap_err();
    assert!(matches!(e.fault(), Some(ScenarioFault::TlsNotHttp)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("field 'tls'") && e.contains("http only"), "{e}");
    let e = parse(&format!("{head}proto = \"http\"\nheaders = [\"no colon\"]\n"), "f").unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::Value(_) | ScenarioFault::Load(_))),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.contains("line 9, field 'header'"), "{e}");
    let s = parse(&format!("{head}proto = \"packet\"\n"), "f").unwrap();
    let args = s.experiments[0].serve_args("epoll", "127.0.0.1", "0").unwrap();
    assert!(args.windows(2).any(|w| w == ["--packet-size", "128"]), "{args:?}");
}

/// `rate_of`: a share of an earlier experiment, at counts it ran; refused with `rate`, or
/// naming what is not before it.
#[test]
fn rate_of_names_an_earlier_experiment_at_counts_it_ran() {
    let exp = |name: &str, keys: &str| {
        format!("[[experiment]]\nname = \"{name}\"\nproto = \"http\"\nmodels = [\"epoll\"]\nconnections = [100]\nduration = \"1s\"\n{keys}")
    };
    let head = "name = \"x\"\ndescription = \"d\"\n";
    let ok = format!("{head}{}{}", exp("ka", ""), exp("lat", "rate_of = \"50% of ka\"\n"));
    let s = parse(&ok, "f").unwrap();
    assert_eq!(s.experiments[1].rate_of.as_deref(), Some("50% of ka"));
    use crate::bench::record::scenario::{rate_of, RateOfFault};
    assert_eq!(rate_of("50% of ka"), Ok((0.5, "ka")));
    assert_eq!(rate_of("half of ka").map_err(|e| e.why), Err(RateOfFault::Share));
    assert_eq!(rate_of("50%").map_err(|e| e.why), Err(RateOfFault::NoOf));
    let not_before = |f: &ScenarioFault| matches!(f, ScenarioFault::NotBefore { name } if name == "lat");
    let share = |f: &ScenarioFault| matches!(f, ScenarioFault::RateOf(r) if r.why == RateOfFault::Share);
    let no_of = |f: &ScenarioFault| matches!(f, ScenarioFault::RateOf(r) if r.why == RateOfFault::NoOf);
    let given = |f: &ScenarioFault| matches!(f, ScenarioFault::RateGiven);
    let cases: [Case; 4] = [
        (
            "rate_of = \"50% of lat\"\n",
            "not an experiment before this one",
            &not_before,
        ),
        ("rate_of = \"half of ka\"\n", "a share between 0 and 100%", &share),
        ("rate_of = \"50%\"\n", "give \"P% of EXPERIMENT\"", &no_of),
        ("rate_of = \"50% of ka\"\nrate = 100\n", "drop rate", &given),
    ];
    for (keys, says, kind) in cases {
        let e = parse(&format!("{head}{}{}", exp("ka", ""), exp("lat", keys)), "f").unwrap_err();
        assert!(
            e.fault().is_some_and(kind) && e.field() == Some("rate_of"),
            "{keys}: {e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("field 'rate_of'") && e.contains(says), "{keys}: {e}");
    }
    // busy_of: read and refused by the same rules, and never with rate_of.
    let s = parse(
        &format!("{head}{}{}", exp("ka", ""), exp("lat", "busy_of = \"70% of ka\"\n")),
        "f",
    )
    .unwrap();
    assert_eq!(s.experiments[1].busy_of.as_deref(), Some("70% of ka"));
    let two = |f: &ScenarioFault| matches!(f, ScenarioFault::TwoRates);
    let calls = |f: &ScenarioFault| matches!(f, ScenarioFault::BusyOfCalls);
    let cases: [Case; 4] = [
        (
            "busy_of = \"70% of ka\"\nwork = \"cpu:10us+sleep:1ms\"\n",
            "this work blocks",
            &calls,
        ),
        (
            "busy_of = \"70% of lat\"\n",
            "not an experiment before this one",
            &not_before,
        ),
        ("busy_of = \"70% of ka\"\nrate = 100\n", "drop rate", &given),
        (
            "busy_of = \"70% of ka\"\nrate_of = \"50% of ka\"\n",
            "rate_of and busy_of each work out the rate: give one",
            &two,
        ),
    ];
    for (keys, says, kind) in cases {
        let e = parse(&format!("{head}{}{}", exp("ka", ""), exp("lat", keys)), "f").unwrap_err();
        assert!(
            e.fault().is_some_and(kind) && e.field() == Some("busy_of"),
            "{keys}: {e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("field 'busy_of'") && e.contains(says), "{keys}: {e}");
    }
}

/// The runtimes' servers draw fixed times and exp(MEAN) only: an experiment that sets them
/// other work is refused when it is read, naming the peer and the work, not measured as if
/// served alike.
#[test]
fn a_product_given_work_it_cannot_draw_is_refused_naming_it() {
    let base = "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"green\"]\nconnections = [1]\nduration = \"1s\"\n";
    use crate::bench::record::scenario::peer::PeerWorkFault;
    let e = parse(
        &format!("{base}peers = [\"go\"]\nwork = \"sleep:lognormal(1ms,1)\"\n"),
        "f.toml",
    )
    .unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::PeerWork(w))
            if w.peer == "go" && matches!(&w.fault, PeerWorkFault::DrawsWork { work } if work == "sleep:lognormal(1ms,1)")),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(
        e.contains("\"go\"") && e.contains("fixed times and exp(MEAN) only, not work 'sleep:lognormal(1ms,1)'"),
        "{e}"
    );
    let e = parse(
        &format!(
            "{base}peers = [\"node\"]\nwork_from_request = true\nmix = [\"a=1:/?cpu=20us\", \"b=1:/?cpu=pareto(1ms,2)\"]\n"
        ),
        "f.toml",
    )
    .unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::PeerWork(w))
            if matches!(&w.fault, PeerWorkFault::DrawsClass { class, .. } if class == "b")),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(
        e.contains("\"node\" (a server in products/) draws fixed times and exp(MEAN) only, not class 'b'"),
        "{e}"
    );
    // Fixed and exp are served; nginx does no work and is not held to it.
    assert!(parse(
        &format!("{base}peers = [\"go\", \"nginx\"]\nwork = \"cpu:20us+sleep:exp(1ms)\"\n"),
        "f.toml"
    )
    .is_ok());
    let e = parse(&format!("{base}peers = [\"go GOMAXPROCS=99\"]\n"), "f.toml").unwrap_err();
    assert!(
        matches!(e.fault(), Some(ScenarioFault::Peer(p)) if p.why == peer::PeerFault::Count { what: "GOMAXPROCS" }),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(e.contains("GOMAXPROCS takes 1 to 64"), "{e}");
}

/// An `expect` entry names a metric, the experiment's targets and its classes; a wrong one is
/// refused naming the field.
#[test]
fn entries_name_a_metric_known_targets_and_known_classes() {
    let x = experiment_expecting("\"short p99: thread < reactor\", \"throughput: reactor < dispatch\"").unwrap();
    let s = super::expect::read(&x.expect[1], &x).unwrap();
    assert_eq!(
        s.targets,
        vec!["reactor", "dispatch --workers 2"],
        "a model's name stands for its entry"
    );
    use super::expect::ExpectFault as X;
    for (bad, says, why) in [
        ("\"p99 thread < reactor\"", "no ':'", X::NoColon),
        (
            "\"p42: thread < reactor\"",
            "unknown metric 'p42'",
            X::UnknownMetric { metric: "p42".into() },
        ),
        (
            "\"medium p99: thread < reactor\"",
            "no request class 'medium'",
            X::NoClass {
                class: "medium".into(),
                known: vec!["short".into(), "long".into()],
            },
        ),
        ("\"short cpu: thread < reactor\"", "latency only", X::ClassNotLatency),
        (
            "\"p99: thread < nginx\"",
            "'nginx' is not one of the experiment's models",
            X::NotATarget { name: "nginx".into() },
        ),
        ("\"p99: thread\"", "compares nothing", X::NothingCompared),
    ] {
        let e = experiment_expecting(bad).unwrap_err();
        assert!(
            matches!(e.fault(), Some(ScenarioFault::Expect(x)) if x.fault == why) && e.field() == Some("expect"),
            "{bad}: {e:?}"
        );
        let e = e.to_string();
        assert!(e.contains(says) && e.contains("field 'expect'"), "{bad}: {e}");
    }
}

/// Connections held (`active`) past serve's idle timeout: bench raises the servers' timeout
/// to the hold and a minute more, says so in the command line, and refuses a model entry's
/// own timeout that would close them before the hold ends.
#[test]
fn a_hold_past_the_idle_timeout_raises_it_and_an_entrys_shorter_one_is_refused() {
    let experiment_of = |models: &str, connections: &str, keys: &str| {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
             models = [{models}]\nconnections = [{connections}]\n{keys}"
        );
        parse(&text, "test").map(|mut s| s.experiments.remove(0))
    };
    let x = experiment_of("\"epoll\"", "1000", "active = \"1%\"\nduration = \"90s\"\n").unwrap();
    // 5 s to connect, no warm-up, 90 s: held 95 s.
    assert_eq!(x.hold(), std::time::Duration::from_secs(95));
    let args = x.serve_args("epoll", "127.0.0.1", "0").unwrap();
    let idle = args.windows(2).find(|w| w[0] == "--idle-timeout").map(|w| w[1].clone());
    let idle = idle.and_then(|t| crate::units::parse_duration(&t).ok());
    assert_eq!(idle, Some(std::time::Duration::from_secs(155)), "{args:?}");
    // Short runs keep serve's default; so do runs where every connection sends.
    let short = experiment_of("\"epoll\"", "1000", "active = \"1%\"\nduration = \"10s\"\n").unwrap();
    assert_eq!(short.idle_timeout(), None);
    let all = experiment_of("\"epoll\"", "1000", "duration = \"90s\"\n").unwrap();
    assert_eq!(all.idle_timeout(), None);
    // A model's own, long enough, wins; one too short is refused.
    let own = experiment_of(
        "\"epoll --idle-timeout 200s\"",
        "1000",
        "active = \"1%\"\nduration = \"90s\"\n",
    )
    .unwrap();
    let args = own.serve_args("epoll --idle-timeout 200s", "127.0.0.1", "0").unwrap();
    assert_eq!(args.iter().filter(|a| *a == "--idle-timeout").count(), 1, "{args:?}");
    let e = experiment_of(
        "\"epoll --idle-timeout 30s\"",
        "1000",
        "active = \"1%\"\nduration = \"90s\"\n",
    )
    .unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("closes held connections before the experiment's hold of 95s"),
        "{e}"
    );
}
