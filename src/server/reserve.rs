//! `--reserve under=D:K`: workers of an offloading pool kept for short work, as the flag reads
//! it and why it may not.

use std::str::FromStr;
use std::time::Duration;

use crate::units::{parse_duration, BadValue};

/// `--reserve under=D:K`: K workers for work whose mean is under D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserve {
    pub under: Duration,
    pub workers: usize,
}

impl FromStr for Reserve {
    type Err = BadReserve;
    fn from_str(s: &str) -> Result<Reserve, BadReserve> {
        let bad = |fault| BadReserve {
            given: s.to_string(),
            fault,
        };
        let rest = s.strip_prefix("under=").ok_or_else(|| bad(ReserveFault::NotUnderDK))?;
        let (d, k) = rest.rsplit_once(':').ok_or_else(|| bad(ReserveFault::NotUnderDK))?;
        let under = parse_duration(d).map_err(|e| bad(ReserveFault::Under(e)))?;
        let workers: usize = k.parse().map_err(|_| bad(ReserveFault::NotUnderDK))?;
        if workers == 0 || under.is_zero() {
            return Err(bad(ReserveFault::Nothing));
        }
        Ok(Reserve { under, workers })
    }
}

/// A `--reserve` that does not read: the text given and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadReserve {
    pub given: String,
    pub fault: ReserveFault,
}

/// What is wrong with a `--reserve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReserveFault {
    /// Not `under=D:K` with K a whole number.
    NotUnderDK,
    /// D is not a duration.
    Under(BadValue),
    /// No worker reserved, or for work under 0.
    Nothing,
}

impl std::fmt::Display for BadReserve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.given;
        match &self.fault {
            ReserveFault::NotUnderDK => write!(f, "--reserve '{s}': give under=D:K, e.g. under=1ms:1"),
            ReserveFault::Under(e) => e.fmt(f),
            ReserveFault::Nothing => write!(
                f,
                "--reserve '{s}': reserve at least one worker, for work under more than 0"
            ),
        }
    }
}

impl std::error::Error for BadReserve {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            ReserveFault::Under(e) => Some(e),
            _ => None,
        }
    }
}
