//! Request classes in the engine: the pick of a class for each request by the classes' weights
//! (`--mix`). What each class's request is, is its protocol session's (`load::client`).

use crate::load::Spec;

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
