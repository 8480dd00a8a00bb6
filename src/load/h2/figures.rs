//! What an HTTP/2 run counts (its part of a tally, added up losslessly like the rest) and the
//! figures a document derives from it: streams in flight, refusals, frames per request, HPACK's
//! savings, fairness across stream lanes.

use serde::{Deserialize, Serialize};

/// Frames and header bytes, for the figures (HPACK's savings, frames per request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub frames_in: u64,
    pub frames_out: u64,
    /// Request header blocks: their bytes, and their fields as text lines.
    pub request_block: u64,
    pub request_text: u64,
    /// Response header blocks likewise.
    pub response_block: u64,
    pub response_text: u64,
}

impl Counts {
    /// Adds `o` in.
    pub fn add(&mut self, o: &Counts) {
        self.frames_in += o.frames_in;
        self.frames_out += o.frames_out;
        self.request_block += o.request_block;
        self.request_text += o.request_text;
        self.response_block += o.response_block;
        self.response_text += o.response_text;
    }
}

/// What an HTTP/2 run's streams did inside the window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct H2Tally {
    /// Streams opened (one per request sent, retries included).
    pub streams: u64,
    /// Streams the server refused (REFUSED_STREAM): sent again.
    pub refused: u64,
    /// Streams the server reset otherwise (each an error, `stream_reset`).
    pub reset: u64,
    /// GOAWAYs received.
    pub goaway: u64,
    /// Requests sent again on another stream: refused, or above a GOAWAY's last stream.
    pub retried: u64,
    /// Frames each way; header block bytes each way, and the same heads in HTTP/1.1.
    #[serde(flatten)]
    pub counts: Counts,
    /// The most streams open on one connection (as one opened, itself included).
    pub in_flight_max: u64,
    /// The lifetimes of the streams completed in the window, added (in ns): over the window's
    /// length, the streams in flight on average (Little's law).
    #[serde(default)]
    pub stream_ns: u64,
    /// Completions per stream lane (each connection's `--streams` places), for fairness.
    pub per_lane: Vec<u64>,
}

impl H2Tally {
    pub fn merge(&mut self, o: &H2Tally) {
        self.streams += o.streams;
        self.refused += o.refused;
        self.reset += o.reset;
        self.goaway += o.goaway;
        self.retried += o.retried;
        self.counts.add(&o.counts);
        self.in_flight_max = self.in_flight_max.max(o.in_flight_max);
        self.stream_ns += o.stream_ns;
        self.per_lane.extend_from_slice(&o.per_lane);
    }
}

/// What an HTTP/2 run's streams did (figures `null` where nothing was measured).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct H2Figures {
    /// Streams opened in the window (retries included).
    pub streams: u64,
    /// Streams the server refused (REFUSED_STREAM; sent again), reset otherwise (errors), and
    /// GOAWAYs received.
    pub refused: u64,
    pub reset: u64,
    pub goaway: u64,
    /// Requests sent again: refused, or above a GOAWAY's last stream.
    pub retried: u64,
    /// Streams in flight per connection over the window, on average (the lifetimes of the
    /// streams completed in it, over its length: Little's law; with `--close` a lifetime starts
    /// at the connect), and the most open on one connection (`null`: no stream opened).
    pub in_flight_mean: Option<f64>,
    pub in_flight_max: Option<u64>,
    /// Frames per completed request, each way.
    pub frames_in_per_request: Option<f64>,
    pub frames_out_per_request: Option<f64>,
    /// Header bytes per request each way: the HPACK blocks, and the same head as HTTP/1.1
    /// text (a request: its request line, Host, `-H` lines and Content-Length as this run would
    /// send them over HTTP/1.1; a response: `HTTP/1.1 NNN`, no reason phrase, and its fields);
    /// the share HPACK saved.
    pub request_header_bytes: Option<f64>,
    pub request_text_bytes: Option<f64>,
    pub request_hpack_saved: Option<f64>,
    pub response_header_bytes: Option<f64>,
    pub response_text_bytes: Option<f64>,
    pub response_hpack_saved: Option<f64>,
    /// How evenly the stream lanes (connections × `--streams`; a lane is a closed loop of its
    /// own, or in an open loop a place the requests take in turn) were served.
    pub lanes: usize,
    pub lanes_jain: Option<f64>,
    pub lanes_starved: usize,
}

impl H2Figures {
    /// The figures of `t`, whose run completed `requests` over `secs` on `connections`.
    pub fn of(t: &H2Tally, requests: u64, secs: f64, connections: usize) -> H2Figures {
        let per = |x: u64| (requests > 0).then(|| x as f64 / requests as f64);
        let saved = |block: u64, text: u64| (text > 0).then(|| 1.0 - block as f64 / text as f64);
        H2Figures {
            streams: t.streams,
            refused: t.refused,
            reset: t.reset,
            goaway: t.goaway,
            retried: t.retried,
            in_flight_mean: (secs > 0.0 && connections > 0 && requests > 0)
                .then(|| t.stream_ns as f64 / 1e9 / secs / connections as f64),
            in_flight_max: (t.streams > 0).then_some(t.in_flight_max),
            frames_in_per_request: per(t.counts.frames_in),
            frames_out_per_request: per(t.counts.frames_out),
            request_header_bytes: (t.streams > 0).then(|| t.counts.request_block as f64 / t.streams as f64),
            request_text_bytes: (t.streams > 0).then(|| t.counts.request_text as f64 / t.streams as f64),
            request_hpack_saved: saved(t.counts.request_block, t.counts.request_text),
            response_header_bytes: per(t.counts.response_block),
            response_text_bytes: per(t.counts.response_text),
            response_hpack_saved: saved(t.counts.response_block, t.counts.response_text),
            lanes: t.per_lane.len(),
            lanes_jain: crate::load::jain(&t.per_lane),
            lanes_starved: t.per_lane.iter().filter(|&&n| n == 0).count(),
        }
    }
}
