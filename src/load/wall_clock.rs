//! The wall clock runs agree on: milliseconds since the Unix epoch (`--start-at`, the window's
//! start in a document, so that pieces run by different processes or hosts line up).

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
