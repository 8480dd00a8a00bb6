# Sourced by callgrind_serve.sh and syscalls_serve.sh: targets beside muxlab's models.
#   floor         the frozen floor server (scripts/floor/floor.c, built here; HTTP keep-alive)
#   redis-server  Debian's redis-server (RESP: MUXLAB_PROTO=resp), nothing on disk
# `peer_command TARGET` sets `server` to the command that runs TARGET and `peer_port` to the
# port it will listen on (empty: it prints muxlab's listening line, port 0 chosen by it);
# returns 1 for a muxlab model.
peer_command() {
  peer_port=
  case "$1" in
    floor)
      scripts/floor/build.sh >/dev/null
      server=(target/floor 0) ;;
    redis-server)
      command -v redis-server >/dev/null || { echo "redis-server is missing: apt-get install redis-server" >&2; exit 2; }
      peer_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      server=(redis-server --port "$peer_port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no
              --protected-mode no --loglevel warning) ;;
    *) return 1 ;;
  esac
}

# The port the server started with `log` as its output listens on, once it does (20 s at most).
peer_listening() {
  local log=$1
  for _ in $(seq 1 200); do
    if [ -n "$peer_port" ]; then
      (exec 3<>"/dev/tcp/127.0.0.1/$peer_port") 2>/dev/null && { echo "$peer_port"; return; }
    else
      grep -q listening "$log" && { sed -n 's/.*"addr":"[^"]*:\([0-9]*\)".*/\1/p' "$log" | head -n 1; return; }
    fi
    sleep 0.1
  done
  echo "the server did not listen within 20 s" >&2; exit 1
}
