//! Live metrics a scraper reads (`serve --metrics`, `load --metrics`): the duration
//! histogram's fixed buckets, the two exposition formats (Prometheus text and OpenMetrics),
//! and the endpoint thread that answers scrapes. Beside `hist` at the bottom: `server` and
//! `load` count into their own memory and render their families with this.

pub mod buckets;
pub mod endpoint;
pub mod exposition;

pub use buckets::{quantile_ns, slot, BOUNDS_NS, SLOTS};
pub use endpoint::{bind, serve_until, start, Endpoint};
pub use exposition::{Exposition, Format, Labels};
