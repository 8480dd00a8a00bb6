# Sourced by callgrind_serve.sh and syscalls_serve.sh: targets beside muxlab's models.
#   floor         the frozen floor server (scripts/floor/floor.c; HTTP keep-alive only)
#   redis-server  Debian's redis-server (RESP only: MUXLAB_PROTO=resp), nothing on disk

# Refuses a target that does not serve `proto` (`close`: 1 for one request per connection),
# and builds the floor server; at the top level, where a failure stops the script.
peer_check() {
  local target=$1 proto=$2 close=${3:-}
  case "$target" in
    floor)
      [ "$proto" = http ] && [ -z "$close" ] || { echo "floor serves HTTP keep-alive only" >&2; exit 2; }
      scripts/floor/build.sh >/dev/null ;;
    redis-server)
      [ "$proto" = resp ] || { echo "redis-server speaks RESP only: MUXLAB_PROTO=resp" >&2; exit 2; }
      command -v redis-server >/dev/null || { echo "redis-server is missing: apt-get install redis-server" >&2; exit 2; } ;;
  esac
}

# Sets `server` to the command that runs TARGET and `peer_port` to the port it will listen on
# (empty: it prints muxlab's listening line, on a port it chose); returns 1 for a muxlab model.
peer_command() {
  peer_port=
  case "$1" in
    floor) server=(target/floor 0) ;;
    redis-server)
      peer_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      server=(redis-server --port "$peer_port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no
              --protected-mode no --loglevel warning) ;;
    *) return 1 ;;
  esac
}

# The port the server `pid` (its output in `log`) listens on, once it does; it is stopped and
# the script fails where it exits first or does not listen within 20 s.
peer_listening() {
  local log=$1 pid=$2
  for _ in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || { echo "the server exited at start: $(tail -n 3 "$log")" >&2; exit 1; }
    if [ -n "$peer_port" ]; then
      (exec 3<>"/dev/tcp/127.0.0.1/$peer_port") 2>/dev/null && { echo "$peer_port"; return; }
    else
      grep -q listening "$log" && { sed -n 's/.*"addr":"[^"]*:\([0-9]*\)".*/\1/p' "$log" | head -n 1; return; }
    fi
    sleep 0.1
  done
  # Its children first: under strace the server is strace's child, and strace outlives a TERM.
  pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null
  echo "the server did not listen within 20 s" >&2; exit 1
}
