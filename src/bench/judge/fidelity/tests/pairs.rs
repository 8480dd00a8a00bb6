//! Which products and models make pairs: the entries that stand for a product, and what is
//! no pair.

use super::*;
use crate::bench::record::peer::Peer;

#[test]
fn without_a_product_beside_its_model_there_is_no_fidelity_verdict() {
    let xs = scenario(
        "[[experiment]]\nname = \"plain\"\nproto = \"http\"\nmodels = [\"thread\"]\npeers = [\"nginx\"]\n\
         connections = [100]\nduration = \"1s\"\n",
    );
    let mut cells = rounds("plain", "thread", 60.0, 100.0, 5.0, 0.5, EVEN);
    cells.extend(rounds("plain", "nginx", 60.0, 100.0, 5.0, 0.5, EVEN));
    assert!(verdict(&xs, &cells).is_none());
}

/// nginx serves a fixed body whatever the work: beside a model doing the work it is another
/// load, and a capacity search sets each target at its own rate: neither is a pair.
#[test]
fn a_product_doing_none_of_the_work_or_a_capacity_search_is_no_pair() {
    let text = |extra: &str| {
        format!(
            "[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
             models = [\"procs-accept --workers 1\", \"green\"]\npeers = [\"nginx\", \"go\"]\nconnections = [100]\nduration = \"1s\"\n{extra}"
        )
    };
    let mut cells = Vec::new();
    for t in ["procs-accept --workers 1", "nginx", "green", "go"] {
        cells.extend(rounds("e", t, 60.0, 100.0, 5.0, 0.5, EVEN));
    }
    let pairs = |extra: &str| -> Vec<String> {
        let xs = scenario(&text(extra));
        super::rows(&xs, &cells).iter().map(|r| r.product.clone()).collect()
    };
    assert_eq!(pairs(""), ["nginx", "go"]);
    assert_eq!(pairs("work = \"cpu:50us\"\n"), ["go"]);
    assert!(pairs("work = \"cpu:50us\"\nslo = \"p99<=10ms\"\n").is_empty());
}

/// Of several entries of a model, the one with as many workers as the product has threads
/// serving stands beside it; memcached has two designs beside it (dispatch, multi-reactor).
#[test]
fn the_model_entry_with_the_products_worker_count_is_its_pair() {
    let xs = scenario(
        "[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
         models = [\"green --workers 1\", \"green --workers 4\", \"offload\"]\n\
         peers = [\"go GOMAXPROCS=4\", \"go\", \"node worker_threads=2\"]\nworkers = 2\nconnections = [100]\nduration = \"1s\"\n",
    );
    let pair = |p: &str| -> Vec<String> {
        models_for(&xs[0], Peer::parse(p).unwrap())
            .into_iter()
            .cloned()
            .collect()
    };
    assert_eq!(pair("go GOMAXPROCS=4"), ["green --workers 4"]);
    // GOMAXPROCS from the experiment's workers (2): no entry has 2, the first stands.
    assert_eq!(pair("go"), ["green --workers 1"]);
    // offload's workers are the experiment's 2, as the pool's threads.
    assert_eq!(pair("node worker_threads=2"), ["offload"]);
    // Node's one loop is one thread serving (reactor has no --workers to match it against).
    assert_eq!(Peer::parse("node").unwrap().serving_threads(Some(4)), Some(1));
    let kv = scenario(
        "[[experiment]]\nname = \"mc\"\nproto = \"memcache\"\n\
         models = [\"dispatch --workers 2 --store striped:8\", \"multi-reactor --workers 2 --store striped:8\", \"dispatch --workers 1 --store striped:8\"]\n\
         peers = [\"memcached -t 2\"]\nconnections = [10]\nduration = \"1s\"\n",
    );
    assert_eq!(
        models_for(&kv[0], Peer::parse("memcached -t 2").unwrap()),
        [&kv[0].models[0], &kv[0].models[1]]
    );
}
