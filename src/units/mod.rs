//! Parsing of the units users type: durations (`200us`, `1.5s`), CPU lists (`0,2-3`),
//! address ranges (`127.0.0.2-127.0.0.20`); why a value is refused (`bad`), and how figures
//! are shown to a person (`show`).

mod bad;
mod show;

use bad::number_and_unit;
pub use bad::{AddrFault, BadValue, CpuFault, DurationFault, SizeFault};
pub use show::{clock, exact_duration, fmt_us, format_duration, or_dash, si, span, thousands};

use std::net::Ipv4Addr;
use std::time::Duration;

/// Parses `10us`, `5ms`, `1.5s`, `2m`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    let s = s.trim();
    let bad = |fault| BadValue::Duration {
        given: s.to_string(),
        fault,
    };
    let (num, unit) = number_and_unit(s);
    let v: f64 = num.parse().map_err(|_| bad(DurationFault::NotANumber))?;
    let secs = match unit {
        "ns" => v / 1e9,
        "us" | "µs" => v / 1e6,
        "ms" => v / 1e3,
        "" | "s" => v,
        "m" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(bad(DurationFault::UnknownUnit)),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(bad(DurationFault::OutOfRange));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a byte count: `100000`, `64KiB` / `64k`, `1MiB` / `1m`, `1GiB` / `1g`.
pub fn parse_size(s: &str) -> Result<usize, BadValue> {
    let bad = |fault| BadValue::Size {
        given: s.to_string(),
        fault,
    };
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        "g" | "gib" | "gb" => 1 << 30,
        _ => return Err(bad(SizeFault::UnknownUnit)),
    };
    let n = num.parse::<usize>().map_err(|_| bad(SizeFault::NotANumber))?;
    n.checked_mul(scale).ok_or_else(|| bad(SizeFault::TooLarge))
}

/// Splits `s` at commas outside parentheses.
pub(crate) fn split_top(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Serde forms of the units above, so a scenario file and a command line read one value the
/// same way: durations and sizes as the strings a person types (`"3s"`, `"64KiB"`; a size may
/// also be a number), address ranges as `"127.0.0.2-127.0.0.20"`.
pub(crate) mod serde_as {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// A duration as text: `"200us"`, `"1.5s"`.
    pub(crate) mod duration {
        use super::*;
        pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&crate::units::exact_duration(*d))
        }
    }

    /// An optional duration as text.
    pub(crate) mod opt_duration {
        use super::*;
        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => s.serialize_str(&crate::units::exact_duration(*d)),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|t| crate::units::parse_duration(&t).map_err(serde::de::Error::custom))
                .transpose()
        }
    }

    /// A duration as a number of seconds (`2.5`): how documents carry measured times.
    pub(crate) mod secs {
        use super::*;
        pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_f64(d.as_secs_f64())
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
            let v = f64::deserialize(d)?;
            if !(v.is_finite() && v >= 0.0) {
                return Err(serde::de::Error::custom(format!("{v} is not a number of seconds")));
            }
            Ok(Duration::from_secs_f64(v))
        }
    }

    /// An optional byte count: `"64KiB"` or a number.
    pub(crate) mod opt_size {
        use super::*;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Size {
            Number(usize),
            Text(String),
        }
        pub fn serialize<S: Serializer>(v: &Option<usize>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(n) => s.serialize_u64(*n as u64),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
            match Option::<Size>::deserialize(d)? {
                None => Ok(None),
                Some(Size::Number(n)) => Ok(Some(n)),
                Some(Size::Text(t)) => crate::units::parse_size(&t).map(Some).map_err(serde::de::Error::custom),
            }
        }
    }

    /// A list of values that parse from and print to text (`--mix` entries).
    pub(crate) mod text_list {
        use super::*;
        pub fn serialize<T: std::fmt::Display, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(v.iter().map(|x| x.to_string()))
        }
        pub fn deserialize<'de, T, D>(d: D) -> Result<Vec<T>, D::Error>
        where
            T: std::str::FromStr,
            T::Err: std::fmt::Display,
            D: Deserializer<'de>,
        {
            Vec::<String>::deserialize(d)?
                .iter()
                .map(|t| t.parse::<T>().map_err(serde::de::Error::custom))
                .collect()
        }
    }

    /// Any optional value that parses from and prints to text (`AddrRange`, `CpuList`).
    pub(crate) mod opt_text {
        use super::*;
        pub fn serialize<T: std::fmt::Display, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => s.collect_str(v),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
        where
            T: std::str::FromStr,
            T::Err: std::fmt::Display,
            D: Deserializer<'de>,
        {
            Option::<String>::deserialize(d)?
                .map(|t| t.parse::<T>().map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

/// A set of CPUs, as typed on the command line (`0,2-3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

impl std::str::FromStr for CpuList {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Self, BadValue> {
        parse_cpus(s).map(CpuList)
    }
}

impl std::fmt::Display for CpuList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|c| c.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

/// Parses a CPU list: `0`, `0,2`, `1-3`, `0,4-5`.
pub fn parse_cpus(s: &str) -> Result<Vec<usize>, BadValue> {
    let bad = |fault| BadValue::Cpus {
        given: s.to_string(),
        fault,
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once('-') {
            let (a, b): (usize, usize) = (
                a.parse().map_err(|_| bad(CpuFault::NotACpu))?,
                b.parse().map_err(|_| bad(CpuFault::NotACpu))?,
            );
            if a > b {
                return Err(bad(CpuFault::Reversed));
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad(CpuFault::NotACpu))?);
        }
    }
    if out.is_empty() {
        return Err(bad(CpuFault::NoCpu));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Source addresses as typed on the command line (`127.0.0.2-127.0.0.20`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrRange(pub Vec<Ipv4Addr>);

impl std::str::FromStr for AddrRange {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Self, BadValue> {
        let mut all = Vec::new();
        for part in s.split(',') {
            all.extend(parse_ipv4_range(part)?);
        }
        Ok(AddrRange(all))
    }
}

/// The addresses as [`AddrRange`]'s parser reads them: runs as `A-B`, joined by commas.
impl std::fmt::Display for AddrRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut runs: Vec<(Ipv4Addr, Ipv4Addr)> = Vec::new();
        for &a in &self.0 {
            match runs.last_mut() {
                Some((_, end)) if u32::from(*end).checked_add(1) == Some(u32::from(a)) => *end = a,
                _ => runs.push((a, a)),
            }
        }
        let text: Vec<String> = runs
            .iter()
            .map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
            .collect();
        f.write_str(&text.join(","))
    }
}

/// Parses `127.0.0.2` or an inclusive range `127.0.0.2-127.0.0.20` ([`AddrRange`] also takes
/// several, joined by commas).
pub fn parse_ipv4_range(s: &str) -> Result<Vec<Ipv4Addr>, BadValue> {
    let bad = |fault| BadValue::Addresses {
        given: s.to_string(),
        fault,
    };
    let addr = |t: &str| t.trim().parse::<Ipv4Addr>().map_err(|_| bad(AddrFault::NotAnAddress));
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (addr(a)?, addr(b)?),
        None => {
            let a = addr(s)?;
            (a, a)
        }
    };
    let (x, y) = (u32::from(a), u32::from(b));
    if x > y {
        return Err(bad(AddrFault::Reversed));
    }
    if y - x > 65_535 {
        return Err(bad(AddrFault::TooMany));
    }
    Ok((x..=y).map(Ipv4Addr::from).collect())
}

/// The keys serde reads for the struct `T` (its field names as renamed): how a scenario tells
/// one struct's keys from another's in a table they share.
pub fn serde_fields<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Fields<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for Fields<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::units::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("200us").unwrap(), Duration::from_micros(200));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(matches!(
            parse_duration("fast"),
            Err(BadValue::Duration {
                fault: DurationFault::NotANumber,
                ..
            })
        ));
        let e = parse_duration(" 5 parsecs").unwrap_err();
        assert!(matches!(
            e,
            BadValue::Duration {
                fault: DurationFault::UnknownUnit,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "'5 parsecs' has an unknown unit ' parsecs': use ns, us, ms, s, m or h"
        );
        let e = parse_duration("-1s").unwrap_err();
        assert_eq!(
            e.to_string(),
            "'-1s' is not a duration: write e.g. 200us, 5ms, 1.5s, 2m"
        );
        let e = parse_duration("2000000000s").unwrap_err();
        assert!(matches!(
            e,
            BadValue::Duration {
                fault: DurationFault::OutOfRange,
                ..
            }
        ));
        assert_eq!(e.to_string(), "'2000000000s' is out of range");
        assert_eq!(format_duration(Duration::from_micros(200)), "200us");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_micros(2500)), "2.5ms");
    }

    #[test]
    fn cpus_and_ranges() {
        assert_eq!(parse_cpus("0,2-3").unwrap(), vec![0, 2, 3]);
        let e = parse_cpus("3-1").unwrap_err();
        assert!(matches!(
            e,
            BadValue::Cpus {
                fault: CpuFault::Reversed,
                ..
            }
        ));
        assert_eq!(e.to_string(), "'3-1' is not a CPU list: write e.g. 0 or 0,2 or 1-3");
        let e = parse_cpus(" , ").unwrap_err();
        assert!(matches!(
            e,
            BadValue::Cpus {
                fault: CpuFault::NoCpu,
                ..
            }
        ));
        assert_eq!(e.to_string(), "' , ' names no CPU");
        assert_eq!(parse_ipv4_range("127.0.0.2-127.0.0.4").unwrap().len(), 3);
        let e = parse_ipv4_range("127.0.0.9-127.0.0.4").unwrap_err();
        assert!(matches!(
            e,
            BadValue::Addresses {
                fault: AddrFault::Reversed,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "'127.0.0.9-127.0.0.4' is not an IPv4 address or range: write e.g. 127.0.0.2-127.0.0.20"
        );
        assert!(matches!(
            parse_ipv4_range("10.0.0.0-10.1.0.0"),
            Err(BadValue::Addresses {
                fault: AddrFault::TooMany,
                ..
            })
        ));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        for (given, fault) in [
            ("64 parsecs", SizeFault::UnknownUnit),
            ("KiB", SizeFault::NotANumber),
            ("99999999999999999999g", SizeFault::NotANumber),
            ("17179869184g", SizeFault::TooLarge),
        ] {
            let e = parse_size(given).unwrap_err();
            assert_eq!(
                e,
                BadValue::Size {
                    given: given.into(),
                    fault
                }
            );
            assert_eq!(
                e.to_string(),
                format!("'{given}' is not a size: write e.g. 100000, 64KiB or 1MiB")
            );
        }
    }
}
