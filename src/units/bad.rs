//! Why a value the user typed is refused ([`BadValue`]): the text given and a typed fault,
//! its words built in `Display`.

/// A value the user typed that does not parse: the text given and what is wrong with it. The
/// message (its `Display`) says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    /// Not a duration (`200us`, `1.5s`); `given` as read, trimmed.
    Duration { given: String, fault: DurationFault },
    /// Not a byte count (`100000`, `64KiB`).
    Size { given: String, fault: SizeFault },
    /// Not a CPU list (`0,2-3`).
    Cpus { given: String, fault: CpuFault },
    /// Not an IPv4 address or range (`127.0.0.2-127.0.0.20`).
    Addresses { given: String, fault: AddrFault },
}

/// What is wrong with a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationFault {
    /// No number before the unit.
    NotANumber,
    /// A unit other than ns, us, ms, s, m or h.
    UnknownUnit,
    /// Negative, not finite, or over 10^9 seconds.
    OutOfRange,
}

/// What is wrong with a byte count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeFault {
    /// A unit other than b, k/KiB/kB, m/MiB/MB, g/GiB/GB.
    UnknownUnit,
    /// No whole number before the unit.
    NotANumber,
    /// More bytes than a `usize` holds.
    TooLarge,
}

/// What is wrong with a CPU list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuFault {
    /// A part that is not a CPU number or a range of them.
    NotACpu,
    /// A range whose start is past its end (`3-1`).
    Reversed,
    /// Nothing but commas and spaces.
    NoCpu,
}

/// What is wrong with an IPv4 address or range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrFault {
    /// An end that is not an IPv4 address.
    NotAnAddress,
    /// A range whose start is past its end.
    Reversed,
    /// A range of more than 65,536 addresses.
    TooMany,
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadValue::Duration { given: s, fault } => match fault {
                DurationFault::NotANumber => write!(f, "'{s}' is not a duration: write e.g. 200us, 5ms, 1.5s, 2m"),
                DurationFault::UnknownUnit => write!(
                    f,
                    "'{s}' has an unknown unit '{}': use ns, us, ms, s, m or h",
                    number_and_unit(s).1
                ),
                DurationFault::OutOfRange => write!(f, "'{s}' is out of range"),
            },
            BadValue::Size { given: s, .. } => write!(f, "'{s}' is not a size: write e.g. 100000, 64KiB or 1MiB"),
            BadValue::Cpus { given: s, fault } => match fault {
                CpuFault::NoCpu => write!(f, "'{s}' names no CPU"),
                CpuFault::NotACpu | CpuFault::Reversed => {
                    write!(f, "'{s}' is not a CPU list: write e.g. 0 or 0,2 or 1-3")
                }
            },
            BadValue::Addresses { given: s, .. } => write!(
                f,
                "'{s}' is not an IPv4 address or range: write e.g. 127.0.0.2-127.0.0.20"
            ),
        }
    }
}

impl std::error::Error for BadValue {}

/// A duration's text split where its number ends: (`1.5`, `ms`).
pub(super) fn number_and_unit(s: &str) -> (&str, &str) {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    s.split_at(split)
}
