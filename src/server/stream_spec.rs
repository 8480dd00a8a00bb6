//! What an event stream is asked to be (`events=N&every=D&size=B&first=D0`, a query's or
//! `--stream`'s) and the server's bounds on it (`--max-stream`): parsed here, beside the
//! configuration that reads them, below the serving of streams ([`super::events`]).

use std::time::Duration;

use crate::server::work::{parse_dist, Dist};
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
    pub fn parse_over(spec: &str, defaults: &StreamSpec) -> Result<StreamSpec, BadValue> {
        let mut s = defaults.clone();
        for pair in pairs(spec) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| BadValue(format!("'{pair}': give key=value (events, every, size, first)")))?;
            match key {
                "events" => {
                    s.events = value
                        .parse()
                        .map_err(|_| BadValue(format!("events={value}: give a whole number of events")))?
                }
                "every" => s.every = parse_dist(value)?,
                "first" => s.first = Some(parse_dist(value)?),
                "size" => s.size = parse_size(value)?,
                _ => {
                    return Err(BadValue(format!(
                        "'{key}' is not a stream key: events=N, every=D, size=B, first=D"
                    )))
                }
            }
        }
        if s.events == 0 {
            return Err(BadValue("events=0: a stream has at least one event".into()));
        }
        Ok(s)
    }

    /// The stream's time on average: its first gap and the other gaps' means.
    pub fn mean_time(&self) -> Duration {
        let first = self.first.as_ref().unwrap_or(&self.every).mean();
        first + self.every.mean() * self.events.saturating_sub(1)
    }

    /// Why the stream is over `bounds`, if it is.
    pub fn over(&self, bounds: &StreamBounds) -> Option<String> {
        if self.events > bounds.events {
            return Some(format!(
                "events={} is over --max-stream events={}",
                self.events, bounds.events
            ));
        }
        if self.size > bounds.size {
            return Some(format!("size={} is over --max-stream size={}", self.size, bounds.size));
        }
        let t = self.mean_time();
        (t > bounds.time).then(|| {
            format!(
                "the stream takes {} on average, over --max-stream time={}",
                format_duration(t),
                format_duration(bounds.time)
            )
        })
    }
}

impl std::str::FromStr for StreamSpec {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<StreamSpec, BadValue> {
        StreamSpec::parse_over(s, &StreamSpec::default())
    }
}

impl std::str::FromStr for StreamBounds {
    type Err = BadValue;
    fn from_str(spec: &str) -> Result<StreamBounds, BadValue> {
        let mut b = StreamBounds::default();
        for pair in pairs(spec) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| BadValue(format!("'{pair}': give events=N, time=D or size=B")))?;
            match key {
                "events" => {
                    b.events = value
                        .parse()
                        .map_err(|_| BadValue(format!("events={value}: give a whole number")))?
                }
                "time" => b.time = parse_duration(value)?,
                "size" => b.size = parse_size(value)?,
                _ => return Err(BadValue(format!("'{key}': --max-stream takes events, time and size"))),
            }
        }
        Ok(b)
    }
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
        for bad in ["events=0", "events=x", "every=soon", "colour=red", "size"] {
            assert!(bad.parse::<StreamSpec>().is_err(), "{bad}");
        }
        let b: StreamBounds = "events=100,time=1s,size=1KiB".parse().unwrap();
        let over = |spec: &str| spec.parse::<StreamSpec>().unwrap().over(&b);
        assert!(over("events=100&every=10ms&size=1KiB").is_none());
        assert!(over("events=101&every=1ms").unwrap().contains("events"));
        assert!(over("events=10&every=1ms&size=2KiB").unwrap().contains("size"));
        assert!(over("events=100&every=exp(20ms)").unwrap().contains("time"));
        assert!("colour=red".parse::<StreamBounds>().is_err());
    }
}
