//! [`Setup`]: what every connection of a run is made from, read once from its [`Spec`] — its
//! protocol, each class's HTTP/1.1 request bytes or the HTTP/2 plan, the keyed plan — and the
//! figures each protocol keeps beside the run's.

use std::sync::Arc;

use super::{Connection, Echo, Http1, Keyed, Reuse, Session, H2};
use crate::load::h2::{H2Conn, H2Plan};
use crate::load::keyed::{KeyedConn, KeyedTally};
use crate::load::{http_request, H2Tally, HttpReader, Kind, Payload, Spec, Tally, Target};

/// What every connection of a run is made from.
pub struct Setup<'a> {
    spec: &'a Spec,
    requests: Arc<Vec<Vec<u8>>>,
    h2: Option<Arc<H2Plan>>,
    host: Arc<str>,
}

impl<'a> Setup<'a> {
    /// The setup of `spec`'s run.
    pub fn of(spec: &'a Spec) -> Setup<'a> {
        let http = spec.target().kind == Kind::Http && !spec.h2;
        Setup {
            spec,
            requests: Arc::new(if http { requests(spec) } else { Vec::new() }),
            h2: spec.h2.then(|| Arc::new(H2Plan::of(spec))),
            host: spec.target().host.as_str().into(),
        }
    }

    /// The session of the connection in slot `slot` (over the run).
    pub fn session(&self, slot: u64) -> Session {
        let spec = self.spec;
        // A keyed target (resp://, memcache://) always has its plan.
        if let Some(plan) = &spec.keyed {
            return Session::Keyed(Box::new(Keyed::new(KeyedConn::new(plan, slot))));
        }
        match (spec.target().kind, &self.h2) {
            (Kind::Http, Some(plan)) => Session::H2(Box::new(H2::new(
                H2Conn::new(plan.clone(), slot),
                spec.pipeline(),
                self.host.clone(),
            ))),
            (Kind::Http, None) => {
                let head_only = spec.method.eq_ignore_ascii_case("HEAD");
                let (reader, body) = match spec.payload {
                    Payload::Generated(size) => (
                        HttpReader::new(head_only).verifying(slot, size),
                        Some((size, spec.chunked())),
                    ),
                    _ => (HttpReader::new(head_only), None),
                };
                Session::Http1(Http1::new(
                    reader.all_event_streams(spec.sse()),
                    self.requests.clone(),
                    body,
                ))
            }
            _ => Session::Echo(Echo::new(spec.size())),
        }
    }

    /// The connection in slot `slot` (over the run), the `index`th of its thread, down from
    /// `t0`, its sockets used as `reuse` says.
    pub fn connection(&self, slot: u64, index: usize, t0: std::time::Instant, reuse: Reuse) -> Connection {
        Connection::new(slot, index, t0, self.session(slot), reuse, self.spec.sse())
    }

    /// A thread's empty figures over `conns` connections, with the protocol's own.
    pub fn tally(&self, conns: usize) -> Tally {
        let spec = self.spec;
        Tally {
            per_conn: vec![0; conns],
            classes: vec![Default::default(); spec.classes.len()],
            h2: self.h2.as_ref().map(|_| H2Tally {
                per_lane: vec![0; conns * spec.pipeline()],
                ..Default::default()
            }),
            keyed: spec.keyed.as_ref().map(|p| KeyedTally {
                checks: p.check_mode().to_string(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

/// Each class's request bytes (the target's alone without `--mix`).
fn requests(spec: &Spec) -> Vec<Vec<u8>> {
    let one = |method: &str, path: &str, payload: &Payload| {
        let target = Target {
            path: path.to_string(),
            ..spec.target().clone()
        };
        http_request(method, &target, spec.headers(), spec.close(), payload, spec.chunked())
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
