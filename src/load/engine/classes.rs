//! Request classes in the engine: each class's HTTP/1.1 request bytes (or an HTTP/2 run's
//! plan, every class's request), made once, and the pick of a class for each request by the
//! classes' weights (`--mix`).

use std::sync::Arc;

use crate::load::h2::H2Plan;
use crate::load::{Payload, Spec};

/// Each class's request bytes (the target's alone without `--mix`).
pub(super) fn requests(spec: &Spec) -> Vec<Vec<u8>> {
    let one = |method: &str, path: &str, payload: &Payload| {
        let target = crate::load::Target {
            path: path.to_string(),
            ..spec.target().clone()
        };
        crate::load::http_request(method, &target, spec.headers(), spec.close(), payload, spec.chunked())
    };
    match spec.classes.is_empty() {
        true => vec![one(&spec.method, &spec.target().path, &spec.payload)],
        false => spec
            .classes
            .iter()
            .map(|c| one(&c.method, &c.path, &c.payload))
            .collect(),
    }
}

/// The classes' cumulative weights, ending at 1.0 (empty without `--mix`).
pub(super) fn cumulative(spec: &Spec) -> Vec<f64> {
    let total: f64 = spec.classes.iter().map(|c| c.weight).sum();
    let mut sum = 0.0;
    let mut c: Vec<f64> = spec
        .classes
        .iter()
        .map(|c| {
            sum += c.weight;
            sum / total
        })
        .collect();
    if let Some(last) = c.last_mut() {
        *last = 1.0;
    }
    c
}

/// A request's class, by the classes' weights (0 without `--mix`).
pub(super) fn pick(cumulative: &[f64], rng: &mut crate::rng::Rng) -> u8 {
    match cumulative.len() {
        0 | 1 => 0,
        _ => rng.pick(cumulative) as u8,
    }
}

/// What every connection of an HTTP/2 run sends (`None` for other runs).
pub(super) fn h2_plan(spec: &Spec) -> Option<Arc<H2Plan>> {
    spec.h2.then(|| Arc::new(H2Plan::of(spec)))
}
