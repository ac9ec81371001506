# shellcheck shell=bash
# scripts/lib/servers.sh: what the test servers of scripts/servers/ share
# (vllm-server, llama-server), sourced by them, not run by itself: their
# messages, the venv they install into, the dispatch of their commands, path,
# start, stop and their usage.
#
# The script sets, before sourcing:
#   NAME      its name in messages (vllm-server)
#   HOME_DIR  where it installs (its server-PORT.log and .pid go there too)
#   VENV      its virtual environment
#   PORT      the port a server listens on
# and defines `installed` (true when everything is in place), `install`, and
# a function `command_NAME` for each of its other commands; it ends with
# `server_main "$@"`.

say() { printf '%s: %s\n' "$NAME" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$NAME" "$*" >&2; exit 1; }

# Dies, saying how to install, when the script's `installed` says no.
need_installed() {
    installed || die "not installed (run: scripts/servers/$NAME install)"
}

# The `path` command: HOME_DIR, or exit 1 when not installed.
server_path() {
    installed && echo "$HOME_DIR" || { say "not installed (run: scripts/servers/$NAME install)"; exit 1; }
}

# server_venv PYTHON: makes VENV with PYTHON unless it is there. Debian's
# python3 keeps venv (ensurepip) in a package of its own: as root, with
# apt-get, python3-venv is installed and the venv made again.
server_venv() {
    local py="$1"
    [ -x "$VENV/bin/python" ] && return
    say "creating the venv in $VENV"
    if ! "$py" -m venv "$VENV" 2>/dev/null; then
        rm -rf "$VENV"
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
            say "installing python3-venv"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv >/dev/null
        fi
        "$py" -m venv "$VENV" || die "python -m venv failed (Debian: apt-get install python3-venv)"
    fi
}

# server_start SECONDS URL COMMAND...: COMMAND in the background, in a
# session of its own (`stop` ends its process group), its output in
# HOME_DIR/server-PORT.log; waits up to SECONDS for /health, then prints
# URL and exits 0.
server_start() {
    local wait="$1" url="$2" log="$HOME_DIR/server-$PORT.log" pidf="$HOME_DIR/server-$PORT.pid"
    shift 2
    setsid "$@" >"$log" 2>&1 &
    echo $! >"$pidf"
    for _ in $(seq 1 "$wait"); do
        if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
            echo "$url"
            exit 0
        fi
        kill -0 "$(cat "$pidf")" 2>/dev/null || die "the server exited; log: $log"
        sleep 1
    done
    die "no /health after $wait s; log: $log"
}

# The `stop` command: ends the server that `start` started on PORT.
server_stop() {
    local pidf="$HOME_DIR/server-$PORT.pid"
    [ -f "$pidf" ] || die "no server started on port $PORT"
    kill -- -"$(cat "$pidf")" 2>/dev/null || kill "$(cat "$pidf")" 2>/dev/null || true
    rm -f "$pidf"
}

# server_main ARGS...: the command ARGS names. install, path and stop are
# every server's; any other is the script's `command_NAME`, run with the
# rest of ARGS once `installed` says yes. None, or a name without such a
# function: the usage.
server_main() {
    local cmd="${1:-}"
    [ $# -gt 0 ] && shift
    case "$cmd" in
        install) install ;;
        path) server_path ;;
        stop) server_stop ;;
        *)
            [[ "$cmd" =~ ^[a-z]+$ ]] && declare -F "command_$cmd" >/dev/null || server_usage
            need_installed
            "command_$cmd" "$@"
            ;;
    esac
}

# No or an unknown command: the script's header (line 2 to `set -euo`) on
# stderr, exit status 2.
server_usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}
