//! Closed forms the simulation is checked against: M/M/1 and M/M/k (Poisson arrivals,
//! exponential service, FIFO), the latency being the time in the system (wait and service).

/// Erlang C: the chance an arrival waits, with `k` servers offered `a` = λ/μ erlangs (a < k).
pub fn erlang_c(k: usize, a: f64) -> f64 {
    // Erlang B by its recurrence (stable for large k), then C from B.
    let mut b = 1.0;
    for i in 1..=k {
        b = a * b / (i as f64 + a * b);
    }
    let rho = a / k as f64;
    b / (1.0 - rho + rho * b)
}

/// The chance that the time in an M/M/k system exceeds `t` (seconds), at arrival rate `lambda`
/// and service rate `mu` per server: the wait (zero, or exponential at rate kμ − λ, with chance
/// Erlang C) plus the service (exponential at rate μ).
pub fn mmk_sojourn_tail(k: usize, lambda: f64, mu: f64, t: f64) -> f64 {
    let c = erlang_c(k, lambda / mu);
    let theta = k as f64 * mu - lambda;
    let service = (-mu * t).exp();
    // Exponential(θ) + Exponential(μ) exceeds t with this chance (θ ≠ μ); its limit when equal.
    let both = if (theta - mu).abs() < 1e-9 * mu {
        (1.0 + mu * t) * (-mu * t).exp()
    } else {
        (theta * (-mu * t).exp() - mu * (-theta * t).exp()) / (theta - mu)
    };
    (1.0 - c) * service + c * both
}

/// The `q` quantile of the time in an M/M/k system (seconds), by bisection on its tail.
pub fn mmk_sojourn_quantile(k: usize, lambda: f64, mu: f64, q: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0 / mu);
    while mmk_sojourn_tail(k, lambda, mu, hi) > 1.0 - q {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if mmk_sojourn_tail(k, lambda, mu, mid) > 1.0 - q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The `q` quantile of the time in an M/M/1 system: exponential at rate μ − λ.
pub fn mm1_sojourn_quantile(lambda: f64, mu: f64, q: f64) -> f64 {
    -(1.0 - q).ln() / (mu - lambda)
}
