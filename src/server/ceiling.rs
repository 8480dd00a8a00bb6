//! How many connections a design holds on this machine, and which setting stops it there:
//! descriptors per process (RLIMIT_NOFILE's hard limit, times the processes), a mapping per
//! thread stack (`vm.max_map_count`), a process or thread each (`kernel.pid_max`), memory.
//! `serve --max-conns N` past the ceiling is refused naming the setting; `muxlab models` prints
//! each design's. Nothing here changes a setting.

use super::bound::{Bound, BYTES_PER_CONNECTION};
use super::config::Config;
use super::error::Error;
use super::registry::{Model, Streams};
use crate::sys::settings::Settings;

/// Bytes a held connection costs beyond [`BYTES_PER_CONNECTION`] where it has a thread, a
/// green thread or a process of its own (its stack, the kernel's task and the task's kernel
/// stack). Measured (issue 82): the machine's `MemAvailable` before and while `load -c N
/// --active 0%` held N connections (both ends), less what the same N cost `epoll` (3.6 KB
/// each): thread 47.8 KB at 10,000, green 37.6 KB at 10,000, fork 40.5 KB at 3,000.
pub fn task_bytes(streams: super::registry::Streams) -> u64 {
    match streams {
        Streams::ThreadEach => 44 * 1024,
        Streams::GreenEach => 34 * 1024,
        Streams::ProcessEach => 37 * 1024,
        _ => 0,
    }
}

/// The most connections `model` holds at once with `workers` workers in each of `procs`
/// processes on a machine with `settings`, and what stops it there (`None`: one connection at
/// a time per worker, or nothing could be read).
pub fn of(model: &Model, procs: usize, workers: usize, s: &Settings) -> Option<(u64, Bound)> {
    if model.one_conn_per_worker {
        return None;
    }
    let mut bounds: Vec<(u64, Bound)> = Vec::new();
    let processes = match model.workers {
        super::Workers::Processes => workers as u64,
        _ => procs as u64,
    };
    if let Some(hard) = s.nofile_hard {
        let per_process = hard.saturating_sub(super::group::reserve(procs, workers));
        if model.streams != Streams::ProcessEach {
            bounds.push((
                processes * per_process,
                Bound::Descriptors {
                    processes,
                    per_process,
                    hard,
                },
            ));
        }
    }
    let mappings = match model.streams {
        Streams::ThreadEach => Some(4),
        Streams::GreenEach => Some(2),
        _ => None,
    };
    if let (Some(per_connection), Some(max_map_count)) = (mappings, s.max_map_count) {
        bounds.push((
            max_map_count / per_connection,
            Bound::Mappings {
                max_map_count,
                per_connection,
            },
        ));
    }
    if let (Streams::ThreadEach | Streams::ProcessEach, Some(pid_max)) = (model.streams, s.pid_max) {
        bounds.push((pid_max, Bound::Pids { pid_max }));
    }
    if model.streams == Streams::UnderFdSetSize {
        bounds.push((1024, Bound::FdSetSize));
    }
    if let Some(available) = s.mem_available {
        let per_connection = BYTES_PER_CONNECTION + task_bytes(model.streams);
        bounds.push((
            available / per_connection,
            Bound::Memory {
                available,
                per_connection,
            },
        ));
    }
    bounds.into_iter().min_by_key(|(n, _)| *n)
}

/// `--max-conns` past what this machine's settings hold for the design: refused, naming the
/// setting that stops it (a lowered `--nofile` is the user's own limit, not checked here; so is
/// select's FD_SETSIZE, a bound of the design it refuses connections past, counted).
pub fn check(model: &'static Model, cfg: &Config, workers: usize) -> Result<(), Error> {
    let Some(asked) = cfg.max_conns else {
        return Ok(());
    };
    match of(model, cfg.procs, workers, &Settings::read()) {
        Some((most, bound)) if asked as u64 > most && bound != Bound::FdSetSize => Err(Error::OverCeiling {
            model: model.name,
            asked,
            most,
            bound,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each design's ceiling on a machine with issue 80's settings, and what stops it.
    #[test]
    fn each_designs_ceiling_is_the_least_of_its_bounds() {
        let here = Settings::issue_80();
        let thread = Model {
            streams: Streams::ThreadEach,
            ..Model::BASE
        };
        let (most, bound) = of(&thread, 1, 2, &here).unwrap();
        let maps = Bound::Mappings {
            max_map_count: 65_530,
            per_connection: 4,
        };
        assert_eq!((most, bound), (16_382, maps));
        let green = Model {
            streams: Streams::GreenEach,
            ..Model::BASE
        };
        // Two mappings a green thread: 32,765, more than one process's descriptors.
        assert!(matches!(of(&green, 1, 2, &here), Some((_, Bound::Descriptors { .. }))));
        let fork = Model {
            streams: Streams::ProcessEach,
            ..Model::BASE
        };
        assert!(matches!(of(&fork, 1, 1, &here), Some((32_768, Bound::Pids { .. }))));
        let select = Model {
            streams: Streams::UnderFdSetSize,
            ..Model::BASE
        };
        assert!(matches!(of(&select, 1, 1, &here), Some((1024, Bound::FdSetSize))));
        let one_at_a_time = Model {
            one_conn_per_worker: true,
            ..Model::BASE
        };
        assert_eq!(of(&one_at_a_time, 1, 2, &here), None);
        // One event loop: its descriptors less what it keeps; sixteen: sixteen times theirs.
        let epoll = Model::BASE;
        let reserve = super::super::group::reserve(1, 1);
        assert_eq!(of(&epoll, 1, 1, &here).unwrap().0, 20_000 - reserve);
        let each = 20_000 - super::super::group::reserve(16, 1);
        assert_eq!(of(&epoll, 16, 1, &here).unwrap().0, 16 * each);
        // Memory binds a big enough group: 22 GiB at 6 KiB a connection.
        let (most, bound) = of(&epoll, 256, 1, &here).unwrap();
        assert_eq!(most, (22u64 << 30) / BYTES_PER_CONNECTION);
        assert!(matches!(bound, Bound::Memory { .. }), "{bound}");
        assert!(bound.to_string().contains("22528 MiB available"), "{bound}");
        // With its mappings and tasks raised, a thread per connection is bounded by memory, at
        // its stack and the kernel's task besides a socket's cost: 50 KiB each.
        let raised = Settings {
            max_map_count: Some(8_000_000),
            pid_max: Some(4_194_304),
            ..here
        };
        // (thread is one process: its descriptors bind first.)
        let (most, bound) = of(&thread, 1, 2, &raised).unwrap();
        assert!(matches!(bound, Bound::Descriptors { .. }), "{bound}");
        assert_eq!(most, 20_000 - super::super::group::reserve(1, 2));
        let (most, bound) = of(&fork, 1, 1, &raised).unwrap();
        assert_eq!(most, (22u64 << 30) / (43 * 1024), "{bound}");
        assert!(
            bound.to_string().contains("about 43 KiB per held connection"),
            "{bound}"
        );
    }
}
