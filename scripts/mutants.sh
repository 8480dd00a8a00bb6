#!/usr/bin/env bash
# Breaks the code each test of this list must guard, runs the test, and puts the code back:
# every line should say "caught". A "MISSED" is a test that passes on code it is meant to
# catch broken (a test that cannot fail). Run from the repository root, on a clean tree (it
# refuses a tree with changes to the files it breaks, so nothing of yours is touched):
#
#   scripts/mutants.sh            every mutant (about 15 minutes here: a build per mutant)
#   scripts/mutants.sh NAME...    the named ones (see the list below)
#
# Each mutant: a file, the exact text it replaces, the text put instead, and the test run
# (`cargo test` arguments) that must fail. The tests that need real peers (redis-server,
# redis-benchmark) run under MUXLAB_REQUIRE_ALL, so a missing peer fails them loudly instead
# of passing by skipping.
set -uo pipefail
cd "$(dirname "$0")/.."

only=("$@")
status=0

# mutant NAME FILE FROM TO TEST-ARGS...: replaces the first FROM in FILE with TO (literal text),
# runs `cargo test TEST-ARGS` and expects it to fail, then puts FILE back.
mutant() {
  local name=$1 file=$2 from=$3 to=$4
  shift 4
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $name "* ]]; then
    return
  fi
  if ! git diff --quiet -- "$file"; then
    echo "$name: $file has changes of yours; commit or stash them first" >&2
    status=2
    return
  fi
  if ! python3 -c 'import sys
path, a, b = sys.argv[1:4]
s = open(path).read()
sys.exit(1) if a not in s else open(path, "w").write(s.replace(a, b, 1))' "$file" "$from" "$to"; then
    echo "$name: the text to break is gone from $file: update scripts/mutants.sh" >&2
    status=2
    return
  fi
  if MUXLAB_REQUIRE_ALL=1 cargo test --quiet "$@" >"/tmp/muxlab-mutant-$name.log" 2>&1; then
    echo "MISSED  $name: cargo test $* passed with $file broken"
    status=1
  else
    echo "caught  $name"
  fi
  git checkout --quiet -- "$file"
}

nl=$'\n'

# advise: designs the rounds separate are not tied (its tie rule made "always"). The bench
# test of advise cannot always catch it: a search that runs out of time ranks nothing.
mutant advise-ties-all src/advise/ranking.rs \
  '.filter(|(i, (_, j))| *i == 0 || j.is_some_and(|j| j.interval().is_some() && !j.clear()))' \
  '.filter(|_| true)' \
  --lib advise::tests::designs_the_rounds_do_not_separate_are_tied_and_one_search_a_side_is_not_judged
# The request classes are ranked wherever the judge's rule ranks them.
mutant classes-never-ranked src/bench/judge/verdict.rs \
  'for (name, _) in classes::names(ok).iter().filter(|_| x.load.slo.is_none()) {' \
  'for (name, _) in classes::names(ok).iter().filter(|_| false) {' \
  --test bench request_classes_reach_the_figures_the_verdict_and_the_report
# A keyed verdict's choice names the best of a clear finding (made to name the runner-up).
mutant choice-names-runner-up src/bench/judge/headline.rs \
  'let mut s = format!("Choose {}: best on {}", f.best, about(f));' \
  'let mut s = format!("Choose {}: best on {}", f.runner_up, about(f));' \
  --test bench_kv keyed_experiments_run_the_real_stores_beside_the_models_and_choose_one
# The server's CPU from its own cgroup where the host has one (the host fact's branch).
mutant cpu-source-never-cgroup src/bench/setup/hosts.rs \
  'Sampler::Local { group: Some(_), .. } => Some(CpuSource::Cgroup),' \
  'Sampler::Local { group: Some(_), .. } => Some(CpuSource::ProcessClocks),' \
  --test bench server_cpu_per_request_adds_up_the_work_of_exited_children_too
# A ramp's series: every request sent answered or in flight at the close.
mutant series-counts-twice src/load/series.rs \
  'a.completed += b.completed;' 'a.completed += 2 * b.completed;' \
  --test gates_series
# A peer doing none of the work is ranked on nothing.
mutant no-work-ranked src/bench/judge/metric/rank.rs \
  'if c.does_no_work {' 'if c.does_no_work && false {' \
  --lib report::placement_tests::a_peer_doing_none_of_the_work_is_ranked_and_marked_on_nothing
# Targets placed differently are never compared.
mutant placements-compared src/bench/judge/metric/rank.rs \
  'self.place == other.place' 'true' \
  --lib report::placement_tests::targets_placed_differently_are_ranked_apart_and_never_compared
# A latency nothing was measured for is null, also read from an older file.
mutant unmeasured-latency-zero src/bench/record/settle.rs \
  '(f.p50_us, f.p99_us, f.p999_us) = (None, None, None);' \
  '(f.p50_us, f.p99_us, f.p999_us) = (Some(0.0), Some(0.0), Some(0.0));' \
  --lib report::placement_tests::a_cell_that_completed_no_request_records_no_latency
# A consumer that orders figures itself (a float comparison) is caught.
mutant seed-orders-raw src/report/html/seed.rs \
  'pubs.sort_by(|a, b| b.1.total_cmp(&a.1));' \
  "pubs.sort_by(|a, b| b.1.total_cmp(&a.1));${nl}        let _ = 1.0_f64.total_cmp(&2.0);" \
  --test structure the_judge_and_its_consumers_order_figures_only_as_ranked
# Only the rule builds a Ranked.
mutant ranked-field-public src/bench/judge/metric/rank.rs \
  "pub struct Ranked {${nl}    value: f64," "pub struct Ranked {${nl}    pub value: f64," \
  --test structure a_ranked_figure_is_built_only_by_the_one_rule
# A circle through a facade: config names the Worker (ctx's, through the facade) while ctx
# names config's Config.
mutant facade-circle src/server/config.rs \
  'use super::error::Error;' 'use super::error::Error;'"${nl}"'#[allow(unused_imports)] use super::Worker;' \
  --test structure no_import_circle_in_src

# 73: a gap is clear only where its whole interval lies past 5 % (not its upper end).
mutant clear-by-upper-end src/bench/judge/interval.rs \
  'self.low > MARGIN' 'self.high > MARGIN' \
  --lib bench::judge::interval
# 73: one round is never judged.
mutant one-round-judged src/bench/judge/interval.rs \
  'if k < 2 {' 'if k < 1 {' \
  --lib bench::judge::interval
# 73: a starved design's memory bound places it behind only where it is behind everyone.
mutant bound-placed-anywhere src/bench/judge/ranking.rs \
  'behind_all.then_some((t, medians))' 'Some((t, medians))' \
  --lib bench::judge::behind_tests::a_starved_design_whose_bound_is_not_behind_everyone_is_not_placed
# 85: a connection with nothing awaited is closed after the window (a serial server then
# answers the connections that waited behind the first; kept open, they are unanswered).
mutant drain-keeps-idle src/load/engine/drain.rs \
  '(true, true) => drop(self.conns[i].close_socket()),' '(true, true) => {}' \
  --test hostile_servers a_serial_server_answers_what_waited_behind_its_first_connection_after_the_window
# 85: what a silent server never answers is counted, per request.
mutant unanswered-uncounted src/load/engine/drain.rs \
  'Self::count_unanswered(&mut self.tally, d, class);
        }' '}' \
  --test hostile_servers a_request_a_silent_server_never_answers_is_unanswered_in_every_protocol
# 74: a too-large memcache `set` unlinks the old value, as memcached does.
mutant mc-set-keeps-old src/proto/memcache/mod.rs \
  'unlink: args.get(0) == b"set",' 'unlink: false,' \
  --lib store::protocol_tests::memcache_data_past_max_value_is_dropped_and_a_bad_chunk_closes
# 74: a RESP bulk over --max-value is redis's invalid bulk length, and the connection closes.
mutant resp-bulk-bound-other-words src/proto/resp/mod.rs \
  'if len > self.max_value {' 'if false && len > self.max_value {' \
  --test keyed keyed_commands_are_answered_byte_for_byte_as_redis_and_memcached_answer_them
# 74: an idle uring server drops its expired keys on its ticker.
mutant uring-idle-keeps-expired src/models/uring.rs \
  'self.slots.shed_idle(now);
                w.sweep_store();' 'self.slots.shed_idle(now);' \
  --test keyed expired_keys_are_dropped_within_a_second_on_an_idle_server_by_every_model
# 74: a reset whose error a write took before the pause still reads as the peer gone.
mutant peer-gone-error-only src/sys/socket.rs \
  'Ok(info.tcpi_state == TCP_CLOSE)' 'Ok(info.tcpi_state == TCP_CLOSE && false)' \
  --lib sys::peer_gone_tests::a_reset_whose_error_a_write_took_before_the_pause_is_still_a_peer_gone
# 85: nothing is sent in the drain, a socket's unused tickets included.
mutant drain-sends-tickets src/load/engine/issue.rs \
  'if self.drain.is_some() {
            // After the window nothing is sent' 'if false {
            // After the window nothing is sent' \
  --test hostile_servers nothing_is_sent_after_the_window_whatever_a_socket_has_left_to_send
# 85: a parent passes a signal on to its parts (a part left running passes the liveness bound).
mutant parts-not-told src/load/processes.rs \
  'let _ = sys::process::kill(pid, sys::signal::SIGTERM);' 'let _ = pid;' \
  --test hostile_servers a_signal_to_a_run_split_over_processes_stops_every_part
# A thread whose share is nothing still says its connecting is over.
mutant idle-thread-silent src/load/engine/thread.rs \
  'if self.ramp.leaving() {' 'if false && self.ramp.leaving() {' \
  --test load a_run_of_fewer_requests_than_threads_ends_with_each_request

# 74.1: an answer built on another thread draws its values from the connection's room; its
# rest is asked again; the front answer takes its first value anyway (else nothing moves).
mutant room-ignored src/proto/keyed/room.rs \
  'let ok = self.used + n <= grant || (self.first_anyway && self.used == 0);' \
  'let ok = true;' \
  --test keyed answers_built_on_other_threads_hold_a_never_reading_client_to_its_bound
mutant rest-dropped src/proto/answer.rs \
  'Op::Get { keys, .. } if (o.answered as usize) < keys.len() =>' \
  'Op::Get { keys, .. } if false && (o.answered as usize) < keys.len() =>' \
  --lib store::later_tests::answers_built_elsewhere_stay_within_the_bound_and_come_whole_as_the_client_reads
mutant front-waits-too src/proto/keyed/room.rs \
  'first_anyway: front,' 'first_anyway: false,' \
  --lib store::later_tests::answers_built_elsewhere_stay_within_the_bound_and_come_whole_as_the_client_reads
# 74.1: a thread holding a read's rest holds its connection's later commands behind it (else a
# SET sent after an MGET changes what the MGET answers); TLS asks a rest anyway only once its
# records have gone too (else each answer read next takes a value past the bound).
mutant parked-ignored src/server/crossing/parked.rs \
  'match self.held.iter_mut().find(|h| Arc::ptr_eq(&h.room, room)) {' \
  'match self.held.iter_mut().find(|h| false && Arc::ptr_eq(&h.room, room)) {' \
  --test keyed answers_built_on_other_threads_hold_a_never_reading_client_to_its_bound
# The commands waiting on another thread count against the bound; a rest is asked while output
# waits only as far as the room goes.
mutant cost-ignored src/proto/keyed_session/later.rs \
  'self.q.iter().map(|s| s.after.len() + s.got.len() + s.cost).sum()' \
  'self.q.iter().map(|s| s.after.len() + s.got.len()).sum()' \
  --lib store::later_tests::commands_waiting_behind_a_read_answered_in_part_count_against_the_bound
mutant resume-past-room src/proto/keyed_session/later.rs \
  'if !(out == 0 && each.sent_all()) && each.room(self.pending(out, |p| each.room(p))) == 0 {' \
  'if !(out == 0 && each.sent_all()) && false {' \
  --lib store::later_tests::answers_built_elsewhere_stay_within_the_bound_and_come_whole_as_the_client_reads
# The connection tells the threads building its answers the room its output left once it drains.
mutant drain-not-told src/proto/keyed_session/later.rs \
  'self.publish(bound.saturating_sub(self.behind()));' 'let _ = bound;' \
  --lib store::later_tests::an_answer_built_after_the_client_read_gets_the_room_the_output_has_then

# Issue 75: time reaches a connection through one channel. A timer it no longer holds does
# nothing; a held timer that came early is armed again; shedding is one of its timeouts; the
# earlier of its deadlines wins; its cancellations reach the pool through its wiring.
mutant stale-timer-fires src/server/connection/timer.rs \
  'if at.is_some_and(|at| self.at != Some(at)) {' 'if false {' \
  --lib server::connection::time_tests::one_timer_brings_every_timeout_and_a_deadline_that_moves_later_costs_no_new_one
mutant sooner-timeout-not-armed src/server/connection/timer.rs \
  'if self.at.is_some_and(|held| held > now && held <= due) {' 'if self.at.is_some() {' \
  --lib server::connection::time_tests::a_timeout_sooner_than_the_held_timer_gets_a_timer_of_its_own
mutant shed-not-a-timeout src/server/connection/mod.rs \
  'None => match self.shed.due(&self.session, &self.out, self.deadlines.last()) {' 'None => match None::<Instant> {' \
  --lib server::connection::
mutant later-deadline-wins src/server/connection/deadline.rs \
  '(Some(h), Some(q)) if q.0 < h.0 => Some(q),' '(Some(_), Some(q)) => Some(q),' \
  --lib server::connection::time_tests::a_head_past_the_header_timeout_gets_408_and_is_counted
mutant due-output-not-progress-yet src/server/connection/mod.rs \
  'self.deadlines.output(now);
                    continue;' 'self.moved.output = true;
                    continue;' \
  --lib server::connection::time_tests::an_event_after_a_silence_longer_than_the_idle_timeout_gets_a_whole_send_timeout
mutant fresh-timer-again src/server/connection/timer.rs \
  '        self.fresh = false;
        self.hold(made + floor, made)' '        self.hold(made + floor, made)' \
  --lib server::connection::time_tests::a_timer_that_came_is_never_armed_again_for_a_time_that_has_passed
mutant cancel-not-performed src/server/connection/wire.rs \
  'pool.cancel(w, &tickets);' 'let _ = (pool, tickets);' \
  --lib server::connection::tests::pooled_work_names_its_connection_and_its_completion_writes_the_response

# A protocol is one type: a Detect that chose hands the protocol chosen what it held; HTTP's
# session, through the one dispatch, answers a head that timed out with its 408.
mutant detect-drops-held src/proto/session.rs \
  'self.feed_each(&held, out, each)' 'self.feed_each(&[], out, each)' \
  --lib proto::tests::h2::
mutant timeout-response-silent src/proto/http/session.rs \
  '        REQUEST_TIMEOUT
' '        b""
' \
  --lib server::connection::time_tests::a_head_past_the_header_timeout_gets_408_and_is_counted
# The one dispatch's file has no catch-all arm: one after a block arm (as rustfmt lays it out)
# is read too.
mutant catch-all-arm src/proto/session.rs \
  '            Choice::Http1 => Speaks::Http(http::HttpSession::new(limits.max_body)),' '            Choice::Http1 => {
                Speaks::Http(http::HttpSession::new(limits.max_body))
            }
            #[allow(unreachable_patterns)]
            _ => unreachable!(),' \
  --test structure every_protocol_implements_the_one_trait_and_one_dispatch_forwards_to_it
mutant tls-answers-timeout src/proto/tls.rs \
  "fn timeout_response(&self) -> &'static [u8] {
        b\"\"" "fn timeout_response(&self) -> &'static [u8] {
        self.inner.timeout_response()" \
  --lib proto::tests::only_http1_answers_a_head_that_timed_out
mutant keyed-answers-not-owed src/proto/resp/mod.rs \
  '    fn answers_owed(&self) -> bool {
        self.core.owes()' '    fn answers_owed(&self) -> bool {
        false' \
  --test keyed a_client_that_stops_sending_gets_every_answer_another_thread_owes_it

# Issue 77: errors are types. A layer's error read by kind for the exit code; a message built
# in Display; a String-only variant the structure test must see.
mutant exit-load-not-read src/cli/exit.rs \
  '        || e.downcast_ref::<load::Error>().is_some_and(load::Error::is_usage)
' '' \
  --test exit_codes
mutant server-io-is-usage src/server/error.rs \
  '        !matches!(self, Error::Io(_))' '        true' \
  --lib cli::exit::
mutant gate-words-lost src/load/gates/gate.rs \
  "\"'{}' in '{s}' is not a figure a gate holds: p50, p90, p99, p99.9, max, errors, rps\"" "\"'{}' in '{s}' is not a figure\"" \
  --test exit_codes
mutant string-only-variant src/remote/error.rs \
  '/// Why a command over ssh, or a run over' '#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Said(pub String);

/// Why a command over ssh, or a run over' \
  --test structure no_error_outside_cli_carries_only_a_string

exit $status
