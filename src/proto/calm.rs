//! What a server sets of HTTP/2's budgets per connection ([`Calm`], each a [`Rate`]:
//! `--h2-client-resets`, `--h2-server-resets`, `--h2-quiet-frames`) and which one a connection
//! went past ([`Cause`]): values a connection's limits and a feed's report carry. HTTP/2's
//! session keeps the running tally (`h2::budget`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::units::{exact_duration, parse_duration, BadValue};

/// At most `max` events in any `per` (`off`: no budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub max: u32,
    pub per: Duration,
}

impl Rate {
    /// No budget at all.
    pub const OFF: Rate = Rate {
        max: u32::MAX,
        per: Duration::from_secs(1),
    };

    /// Client resets of open and answered streams: Netty's server default since the Rapid
    /// Reset fix (`decoderEnforceMaxRstFramesPerWindow`, 4.1.100, Oct 2023): 200 RST_STREAM
    /// frames per 30 s.
    pub const CLIENT_RESETS: Rate = Rate {
        max: 200,
        per: Duration::from_secs(30),
    };

    /// Resets the server sends for stream errors the client caused: Netty's
    /// `encoderEnforceMaxRstFramesPerWindow` (its MadeYouReset fix, 2025), the same 200 per
    /// 30 s; hyper/h2's `max_local_error_reset_streams` (1,024 in all) bounds the same thing.
    pub const SERVER_RESETS: Rate = Rate {
        max: 200,
        per: Duration::from_secs(30),
    };

    /// Frames that produce no output: Netty's bound on control frames a peer may make it
    /// queue (`maxQueuedControlFrames`, 10,000, its fix for the 2019 ping and settings floods,
    /// CVE-2019-9512 and -9515), and nginx's 10,000 frames before "http2 flood detected", per
    /// 10 s: a browser's PRIORITY_UPDATE per request stays far below it, a flood meets it in
    /// milliseconds.
    pub const QUIET_FRAMES: Rate = Rate {
        max: 10_000,
        per: Duration::from_secs(10),
    };
}

impl FromStr for Rate {
    type Err = BadCalm;

    /// `N/DURATION` (`200/30s`), or `off`.
    fn from_str(s: &str) -> Result<Rate, BadCalm> {
        if s.trim() == "off" {
            return Ok(Rate::OFF);
        }
        let bad = |fault| BadCalm {
            given: s.to_string(),
            fault,
        };
        let (n, per) = s.split_once('/').ok_or_else(|| bad(CalmFault::NoSlash))?;
        let max: u32 = n.trim().parse().map_err(|_| bad(CalmFault::CountNotWhole))?;
        let per = parse_duration(per.trim()).map_err(|e| bad(CalmFault::Window(e)))?;
        if max == 0 {
            return Err(bad(CalmFault::ZeroCount));
        }
        if per < Duration::from_millis(1) || per > Duration::from_secs(86_400) {
            return Err(bad(CalmFault::WindowOutOfRange { per }));
        }
        Ok(Rate { max, per })
    }
}

/// A budget's rate (`--h2-client-resets` and the like) that does not read: the text given and
/// what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCalm {
    pub given: String,
    pub fault: CalmFault,
}

/// What is wrong with a budget's rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CalmFault {
    /// No `/` between the count and the window.
    NoSlash,
    /// A count that is not a whole number.
    CountNotWhole,
    /// A window that is not a duration.
    Window(BadValue),
    /// A count of zero.
    ZeroCount,
    /// A window under 1ms or over a day.
    WindowOutOfRange { per: Duration },
}

impl fmt::Display for BadCalm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}': ", self.given)?;
        match &self.fault {
            CalmFault::NoSlash => f.write_str("no '/'"),
            CalmFault::CountNotWhole => f.write_str("the count is not a whole number"),
            CalmFault::Window(e) => write!(f, "{e}"),
            CalmFault::ZeroCount => f.write_str("the count must be more than zero"),
            CalmFault::WindowOutOfRange { .. } => f.write_str("the window must be from 1ms to a day"),
        }?;
        f.write_str(" (write N/DURATION, e.g. 200/30s, or off)")
    }
}

impl std::error::Error for BadCalm {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            CalmFault::Window(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self == Rate::OFF {
            true => f.write_str("off"),
            false if self.per.subsec_nanos() == 0 => write!(f, "{}/{}s", self.max, self.per.as_secs()),
            false => write!(f, "{}/{}", self.max, exact_duration(self.per)),
        }
    }
}

/// The budgets of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calm {
    pub client_resets: Rate,
    pub server_resets: Rate,
    pub quiet_frames: Rate,
}

impl Default for Calm {
    fn default() -> Calm {
        Calm {
            client_resets: Rate::CLIENT_RESETS,
            server_resets: Rate::SERVER_RESETS,
            quiet_frames: Rate::QUIET_FRAMES,
        }
    }
}

/// Which budget a connection went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    ClientResets,
    ServerResets,
    QuietFrames,
}
