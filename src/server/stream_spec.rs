//! What an event stream is asked to be (`events=N&every=D&size=B&first=D0`, a query's or
//! `--stream`'s) and the server's bounds on it (`--max-stream`): parsed here, beside the
//! configuration that reads them, below the serving of streams ([`super::events`]).

use std::time::Duration;

use crate::server::work::{parse_dist, BadDist, Dist};
use crate::units::{format_duration, parse_duration, parse_size, BadValue};

/// What an event stream is asked to be: `events=N&every=D&size=B&first=D0`.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSpec {
    pub events: u32,
    pub every: Dist,
    /// Before the first event (`None`: a gap like the others).
    pub first: Option<Dist>,
    pub size: usize,
}

impl Default for StreamSpec {
    /// Ten events of 32 bytes, one every 100 ms: what a bare `/stream` gets.
    fn default() -> Self {
        StreamSpec {
            events: 10,
            every: Dist::Fixed(Duration::from_millis(100)),
            first: None,
            size: 32,
        }
    }
}

/// The bounds of `--max-stream events=N,time=D,size=B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBounds {
    pub events: u32,
    /// The stream's time on average (its first gap and the others' means).
    pub time: Duration,
    pub size: usize,
}

impl Default for StreamBounds {
    fn default() -> Self {
        StreamBounds {
            events: 100_000,
            time: Duration::from_secs(3600),
            size: 64 * 1024,
        }
    }
}

/// `key=value` pairs split at `&`, or at `,` outside parentheses (`mix(50%:1ms,50%:2ms)` is one
/// value).
fn pairs(spec: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in spec.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '&' => {}
            ',' if depth == 0 => {}
            _ => continue,
        }
        if c == '&' || (c == ',' && depth == 0) {
            out.push(&spec[start..i]);
            start = i + 1;
        }
    }
    out.push(&spec[start..]);
    out.into_iter().filter(|p| !p.is_empty()).collect()
}

impl StreamSpec {
    /// `defaults` with what `spec` (`events=N&every=D&size=B&first=D0`, or `,`-separated) says
    /// over them; a key it does not know is an error (a query's other keys are the caller's to
    /// drop).
    pub fn parse_over(spec: &str, defaults: &StreamSpec) -> Result<StreamSpec, BadStreamSpec> {
        let mut s = defaults.clone();
        for pair in pairs(spec) {
            let bad = |fault| BadStreamSpec::Pair {
                pair: pair.to_string(),
                fault,
            };
            let (key, value) = pair.split_once('=').ok_or_else(|| bad(PairFault::NoEquals))?;
            match key {
                "events" => s.events = value.parse().map_err(|_| bad(PairFault::Events))?,
                "every" => s.every = parse_dist(value)?,
                "first" => s.first = Some(parse_dist(value)?),
                "size" => s.size = parse_size(value).map_err(BadStreamSpec::Size)?,
                _ => return Err(bad(PairFault::UnknownKey)),
            }
        }
        if s.events == 0 {
            return Err(BadStreamSpec::NoEvents);
        }
        Ok(s)
    }

    /// The stream's time on average: its first gap and the other gaps' means.
    pub fn mean_time(&self) -> Duration {
        let first = self.first.as_ref().unwrap_or(&self.every).mean();
        first + self.every.mean() * self.events.saturating_sub(1)
    }

    /// Why the stream is over `bounds`, if it is.
    pub fn over(&self, bounds: &StreamBounds) -> Option<StreamOver> {
        if self.events > bounds.events {
            return Some(StreamOver::Events {
                events: self.events,
                max: bounds.events,
            });
        }
        if self.size > bounds.size {
            return Some(StreamOver::Size {
                size: self.size,
                max: bounds.size,
            });
        }
        let t = self.mean_time();
        (t > bounds.time).then_some(StreamOver::Time {
            mean: t,
            max: bounds.time,
        })
    }
}

impl std::str::FromStr for StreamSpec {
    type Err = BadStreamSpec;
    fn from_str(s: &str) -> Result<StreamSpec, BadStreamSpec> {
        StreamSpec::parse_over(s, &StreamSpec::default())
    }
}

impl std::str::FromStr for StreamBounds {
    type Err = BadStreamBounds;
    fn from_str(spec: &str) -> Result<StreamBounds, BadStreamBounds> {
        let mut b = StreamBounds::default();
        for pair in pairs(spec) {
            let bad = |fault| BadStreamBounds::Pair {
                pair: pair.to_string(),
                fault,
            };
            let (key, value) = pair.split_once('=').ok_or_else(|| bad(PairFault::NoEquals))?;
            match key {
                "events" => b.events = value.parse().map_err(|_| bad(PairFault::Events))?,
                "time" => b.time = parse_duration(value).map_err(BadStreamBounds::Time)?,
                "size" => b.size = parse_size(value).map_err(BadStreamBounds::Size)?,
                _ => return Err(bad(PairFault::UnknownKey)),
            }
        }
        Ok(b)
    }
}

/// A stream spec (`--stream`, a query's stream keys) that does not read.
#[derive(Debug, thiserror::Error)]
pub enum BadStreamSpec {
    /// A `key=value` pair at fault, as given.
    #[error("{}", pair_words(pair, *fault, Reader::Spec))]
    Pair { pair: String, fault: PairFault },
    /// `every=D` or `first=D` whose D does not read.
    #[error(transparent)]
    Dist(#[from] BadDist),
    /// `size=B` that is not a size.
    #[error(transparent)]
    Size(BadValue),
    /// `events=0`.
    #[error("events=0: a stream has at least one event")]
    NoEvents,
}

/// A `--max-stream` that does not read.
#[derive(Debug, thiserror::Error)]
pub enum BadStreamBounds {
    /// A `key=value` pair at fault, as given.
    #[error("{}", pair_words(pair, *fault, Reader::Bounds))]
    Pair { pair: String, fault: PairFault },
    /// `time=D` that is not a duration.
    #[error(transparent)]
    Time(BadValue),
    /// `size=B` that is not a size.
    #[error(transparent)]
    Size(BadValue),
}

/// What is wrong with a `key=value` pair of a stream spec or of `--max-stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairFault {
    /// No `=`.
    NoEquals,
    /// `events=` not a whole number.
    Events,
    /// A key neither reads.
    UnknownKey,
}

/// Which of the two a pair was read for.
#[derive(Clone, Copy)]
enum Reader {
    Spec,
    Bounds,
}

/// The words for `pair`'s fault, as the spec's or `--max-stream`'s reader says them.
fn pair_words(pair: &str, fault: PairFault, reader: Reader) -> String {
    let key = pair.split_once('=').map_or(pair, |(k, _)| k);
    match (fault, reader) {
        (PairFault::NoEquals, Reader::Spec) => format!("'{pair}': give key=value (events, every, size, first)"),
        (PairFault::NoEquals, Reader::Bounds) => format!("'{pair}': give events=N, time=D or size=B"),
        (PairFault::Events, Reader::Spec) => format!("{pair}: give a whole number of events"),
        (PairFault::Events, Reader::Bounds) => format!("{pair}: give a whole number"),
        (PairFault::UnknownKey, Reader::Spec) => {
            format!("'{key}' is not a stream key: events=N, every=D, size=B, first=D")
        }
        (PairFault::UnknownKey, Reader::Bounds) => format!("'{key}': --max-stream takes events, time and size"),
    }
}

/// How a stream is over `--max-stream`: its value and the bound.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StreamOver {
    #[error("events={events} is over --max-stream events={max}")]
    Events { events: u32, max: u32 },
    #[error("size={size} is over --max-stream size={max}")]
    Size { size: usize, max: usize },
    /// Its mean time (the first gap and the others' means).
    #[error(
        "the stream takes {} on average, over --max-stream time={}",
        format_duration(*mean),
        format_duration(*max)
    )]
    Time { mean: Duration, max: Duration },
}

#[cfg(test)]
mod tests {
    use crate::server::stream_spec::*;

    #[test]
    fn a_spec_reads_from_a_query_or_a_flag_and_is_held_to_its_bounds() {
        let s: StreamSpec = "events=50&every=10ms&size=32".parse().unwrap();
        assert_eq!((s.events, s.size), (50, 32));
        assert_eq!(s.every, Dist::Fixed(Duration::from_millis(10)));
        assert_eq!(s.mean_time(), Duration::from_millis(500));
        // Commas outside parentheses separate too; a mix's commas do not.
        let s: StreamSpec = "events=3,every=mix(50%:1ms,50%:3ms),first=0ms".parse().unwrap();
        assert_eq!(s.every.mean(), Duration::from_millis(2));
        assert_eq!(s.mean_time(), Duration::from_millis(4));
        // Over the defaults of a flag, a query's keys win.
        let d: StreamSpec = "events=7,size=5".parse().unwrap();
        let s = StreamSpec::parse_over("size=9", &d).unwrap();
        assert_eq!((s.events, s.size), (7, 9));
        let refused = |spec: &str| spec.parse::<StreamSpec>().unwrap_err();
        assert!(matches!(refused("events=0"), BadStreamSpec::NoEvents));
        assert!(matches!(refused("every=soon"), BadStreamSpec::Dist(_)));
        assert!(matches!(refused("size=big"), BadStreamSpec::Size(_)));
        for (spec, fault, says) in [
            ("events=x", PairFault::Events, "events=x: give a whole number of events"),
            (
                "colour=red",
                PairFault::UnknownKey,
                "'colour' is not a stream key: events=N, every=D, size=B, first=D",
            ),
            (
                "size",
                PairFault::NoEquals,
                "'size': give key=value (events, every, size, first)",
            ),
        ] {
            let e = refused(spec);
            assert!(
                matches!(&e, BadStreamSpec::Pair { pair, fault: f } if pair == spec && *f == fault),
                "{e:?}"
            );
            assert_eq!(e.to_string(), says);
        }
        let b: StreamBounds = "events=100,time=1s,size=1KiB".parse().unwrap();
        let over = |spec: &str| spec.parse::<StreamSpec>().unwrap().over(&b);
        assert!(over("events=100&every=10ms&size=1KiB").is_none());
        assert_eq!(
            over("events=101&every=1ms"),
            Some(StreamOver::Events { events: 101, max: 100 })
        );
        let size = over("events=10&every=1ms&size=2KiB").unwrap();
        assert!(matches!(size, StreamOver::Size { size: 2048, max: 1024 }));
        assert_eq!(size.to_string(), "size=2048 is over --max-stream size=1024");
        let time = over("events=100&every=exp(20ms)").unwrap();
        assert!(matches!(time, StreamOver::Time { .. }));
        assert_eq!(
            time.to_string(),
            "the stream takes 2s on average, over --max-stream time=1s"
        );
        let e = "colour=red".parse::<StreamBounds>().unwrap_err();
        assert!(matches!(
            &e,
            BadStreamBounds::Pair {
                fault: PairFault::UnknownKey,
                ..
            }
        ));
        assert_eq!(e.to_string(), "'colour': --max-stream takes events, time and size");
        assert!(matches!(
            "time=soon".parse::<StreamBounds>(),
            Err(BadStreamBounds::Time(_))
        ));
        assert_eq!(
            "events=-1".parse::<StreamBounds>().unwrap_err().to_string(),
            "events=-1: give a whole number"
        );
    }
}
