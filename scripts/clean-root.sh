# scripts/clean-root.sh: a clean Debian root for checks, sourced by
# scripts/fresh-check and scripts/package (not run by itself).
#
# A minimal Debian 12 or 13 root made by mmdebstrap, with this machine's CA
# bundle (the registries may be reached through a local CA), its rustup
# toolchains mounted read-only and a fresh CARGO_HOME, /proc and /dev
# mounted, and a cleanup on exit that stops what still runs in the root,
# undoes every mount, checks with findmnt and only then removes the root
# (rm --one-file-system: never through a bind mount).
#
# Usage (in a bash script with set -euo pipefail):
#
#   PROG=scripts/NAME; say() {...}; warn() {...}; die() {...}
#   keep=0                         # 1: keep the root (unmounted) at the end
#   . "$REPO/scripts/clean-root.sh"
#   clean_root_need_tools          # git, chroot, mount, ...; installs mmdebstrap
#   clean_root_find_rust           # RUSTUP_BIN, RUSTUP_HOME_HOST
#   clean_root_find_ca             # CA_BUNDLE
#   clean_root_traps               # cleanup on EXIT, INT, TERM
#   clean_root_make NAME           # ROOTFS=$FRESH_CHECK_TMP/NAME.XXXXXX
#   clean_root_debootstrap SUITE LOG PACKAGES   # mmdebstrap --include=PACKAGES
#   clean_root_ca; clean_root_rust # CA bundle, Rust, /proc, /dev
#   do_mount TARGET MOUNT-ARGS...  # more mounts, undone by the cleanup
#   clean_root_env                 # ROOT_ENV: the environment for chroot
#   run_job LOG chroot "$ROOTFS" /usr/bin/env -i "${ROOT_ENV[@]}" CMD...
#
# Environment:
#   FRESH_CHECK_TMP   where the root is built (default /var/tmp)
#   SSL_CERT_FILE     the CA bundle copied into the root (default
#                     /etc/ssl/certs/ca-certificates.crt)

ROOTFS=""     # the root being built; empty until it exists
MOUNTS=()     # what we mounted under it, in order
JOB_PID=""    # the background job being waited for (mmdebstrap or a command)
TAIL_PID="${TAIL_PID:-}"   # --verbose: a tail -f showing a command's log
keep="${keep:-0}"

clean_root_need_tools() {
    local tool
    for tool in git chroot mount umount findmnt; do
        command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found"
    done
    if ! command -v mmdebstrap >/dev/null 2>&1; then
        say "installing mmdebstrap (Debian package) to build the root"
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null 2>&1; then
            DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null ||
                die "could not install mmdebstrap: apt-get install mmdebstrap"
        fi
    fi
}

clean_root_find_rust() {
    # rustup's proxies (cargo, rustc, ...) are links to or copies of the rustup
    # binary; the toolchains are under RUSTUP_HOME.
    RUSTUP_BIN="$(command -v rustup || true)"
    if [ -z "$RUSTUP_BIN" ] && [ -x "$HOME/.cargo/bin/rustup" ]; then
        RUSTUP_BIN="$HOME/.cargo/bin/rustup"
    fi
    [ -n "$RUSTUP_BIN" ] || die "rustup not found: the root uses this machine's rustup toolchains (install Rust with rustup first, e.g. scripts/setup)"
    RUSTUP_HOME_HOST="$("$RUSTUP_BIN" show home)"
    [ -d "$RUSTUP_HOME_HOST/toolchains" ] || die "no toolchains in rustup's home $RUSTUP_HOME_HOST"
    RUSTUP_HOME_HOST="$(cd "$RUSTUP_HOME_HOST" && pwd -P)"
}

clean_root_find_ca() {
    CA_BUNDLE="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
    [ -f "$CA_BUNDLE" ] || die "CA bundle $CA_BUNDLE not found (set SSL_CERT_FILE to this machine's CA bundle)"
}

# Every process whose root directory is the root (chroot'ed commands, their
# children), by pid.
root_pids() {
    local p link
    for p in /proc/[0-9]*; do
        link="$(readlink "$p/root" 2>/dev/null)" || continue
        if [ "$link" = "$ROOTFS" ]; then
            printf '%s\n' "${p#/proc/}"
        fi
    done
}

# Mount points at or under the root, deepest first.
mounts_under_root() {
    findmnt -rn -o TARGET | awk -v r="$ROOTFS" '$0 == r || index($0, r "/") == 1' | sort -r
}

stop_processes() {
    local pids i
    if [ -n "$JOB_PID" ] && kill -0 "$JOB_PID" 2>/dev/null; then
        # mmdebstrap undoes its own mounts on TERM; give it time to.
        kill -TERM "$JOB_PID" 2>/dev/null || true
        for i in $(seq 1 30); do
            kill -0 "$JOB_PID" 2>/dev/null || break
            sleep 1
        done
    fi
    for i in 1 2 3 4 5 6 7 8 9 10; do
        mapfile -t pids < <(root_pids)
        [ "${#pids[@]}" -gt 0 ] || return 0
        if [ "$i" -eq 1 ]; then
            say "stopping ${#pids[@]} process(es) still running in the root: ${pids[*]}"
        fi
        if [ "$i" -lt 6 ]; then
            kill -TERM "${pids[@]}" 2>/dev/null || true
        else
            kill -KILL "${pids[@]}" 2>/dev/null || true
        fi
        sleep 1
    done
    mapfile -t pids < <(root_pids)
    [ "${#pids[@]}" -eq 0 ] || warn "processes still running in the root: ${pids[*]}"
}

unmount_all() {
    local i m
    # Ours, in reverse order of mounting.
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        m="${MOUNTS[$i]}"
        if findmnt -rn "$m" >/dev/null 2>&1; then
            umount "$m" 2>/dev/null || umount --lazy "$m" || warn "could not unmount $m"
        fi
    done
    MOUNTS=()
    # Anything else under the root (mmdebstrap's, if it was interrupted).
    for i in 1 2 3; do
        local left=()
        mapfile -t left < <(mounts_under_root)
        [ "${#left[@]}" -gt 0 ] || return 0
        for m in "${left[@]}"; do
            umount "$m" 2>/dev/null || umount --lazy "$m" 2>/dev/null || true
        done
    done
}

cleanup() {
    local rc=$?
    # A second Ctrl-C must not stop the cleanup half way.
    trap '' INT TERM
    if [ -n "$TAIL_PID" ]; then
        kill "$TAIL_PID" 2>/dev/null || true
    fi
    if [ -n "$ROOTFS" ] && [ -d "$ROOTFS" ]; then
        stop_processes
        unmount_all
        local left=()
        mapfile -t left < <(mounts_under_root)
        if [ "${#left[@]}" -gt 0 ]; then
            printf '%s: ERROR: still mounted under the root, so it was NOT removed:\n' "$PROG" >&2
            printf '  %s\n' "${left[@]}" >&2
            printf '%s: unmount them (umount PATH), check with findmnt, then: rm -rf --one-file-system %s\n' \
                "$PROG" "$ROOTFS" >&2
            exit 1
        fi
        if [ "$keep" = 1 ]; then
            say "kept the root (nothing mounted): $ROOTFS"
            say "  remove it with: rm -rf --one-file-system $ROOTFS"
        else
            # --one-file-system: never cross into another file system, even if
            # a mount appeared after the check above.
            rm -rf --one-file-system "$ROOTFS" || warn "could not remove $ROOTFS completely"
            if [ -e "$ROOTFS" ]; then
                warn "$ROOTFS is still there"
                rc=1
            else
                say "removed the root $ROOTFS"
            fi
        fi
    fi
    exit "$rc"
}

# run_job LOG COMMAND...: runs the command in the background, its output in
# LOG, and waits for it, so that a signal to this script is handled at once
# (bash runs traps only between commands). The redirection is on the job
# alone: the traps' messages must still reach the terminal.
run_job() {
    local log="$1"
    shift
    "$@" >"$log" 2>&1 &
    JOB_PID=$!
    local rc=0
    wait "$JOB_PID" || rc=$?
    JOB_PID=""
    return "$rc"
}

# do_mount TARGET MOUNT-ARGS...: mount and remember it for the cleanup.
do_mount() {
    local target="$1"
    shift
    mkdir -p "$target"
    mount "$@" "$target" || die "mount $* $target failed"
    MOUNTS+=("$target")
}

duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# The cleanup on exit, and on Ctrl-C or TERM (then exit 130 or 143).
clean_root_traps() {
    trap cleanup EXIT
    trap 'echo; say "interrupted (SIGINT): cleaning up"; exit 130' INT
    trap 'say "terminated (SIGTERM): cleaning up"; exit 143' TERM
}

# clean_root_make NAME: an empty folder for the root, ROOTFS.
clean_root_make() {
    local name="$1" parent="${FRESH_CHECK_TMP:-/var/tmp}"
    mkdir -p "$parent"
    ROOTFS="$(mktemp -d "$parent/$name.XXXXXX")"
    ROOTFS="$(cd "$ROOTFS" && pwd -P)"
    case "$ROOTFS" in
        */"$name".*) ;;
        *) die "unexpected root path '$ROOTFS'" ;;
    esac
}

# clean_root_debootstrap SUITE LOG PACKAGES: the minimal root, with PACKAGES
# (comma-separated) installed.
clean_root_debootstrap() {
    local suite="$1" log="$2" packages="$3" start=$SECONDS
    say "building the root (mmdebstrap --variant=minbase --include=$packages $suite)"
    if ! run_job "$log" \
        mmdebstrap --variant=minbase --include="$packages" "$suite" "$ROOTFS"; then
        tail -n "${TAIL_LINES:-60}" "$log" >&2
        die "mmdebstrap failed (log: $log)"
    fi
    say "root built in $(duration $((SECONDS - start)))"
}

clean_root_ca() {
    # The registries may be reached through a local CA: the root gets this
    # machine's bundle, over its own and in a second copy that an
    # update-ca-certificates run inside (triggered by a package) cannot rewrite.
    cp "$CA_BUNDLE" "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
    cp "$CA_BUNDLE" "$ROOTFS/etc/ssl/fresh-check-ca.crt"
    [ -s "$ROOTFS/etc/resolv.conf" ] || cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
}

clean_root_rust() {
    local proxy name
    # Rust: the rustup proxies in a fresh CARGO_HOME, the toolchains read-only.
    mkdir -p "$ROOTFS/root/.cargo/bin"
    cp "$RUSTUP_BIN" "$ROOTFS/root/.cargo/bin/rustup"
    for proxy in "$(dirname "$RUSTUP_BIN")"/*; do
        name="$(basename "$proxy")"
        if [ "$name" != rustup ] && [ "$proxy" -ef "$RUSTUP_BIN" ]; then
            ln -s rustup "$ROOTFS/root/.cargo/bin/$name"
        fi
    done
    [ -e "$ROOTFS/root/.cargo/bin/cargo" ] || die "no cargo proxy next to $RUSTUP_BIN"

    do_mount "$ROOTFS/proc" -t proc proc
    do_mount "$ROOTFS/dev" --bind /dev
    do_mount "$ROOTFS$RUSTUP_HOME_HOST" --bind "$RUSTUP_HOME_HOST"
    mount -o remount,bind,ro "$ROOTFS$RUSTUP_HOME_HOST" || die "could not make $ROOTFS$RUSTUP_HOME_HOST read-only"
    findmnt -rn -o OPTIONS "$ROOTFS$RUSTUP_HOME_HOST" | grep -Eq '(^|,)ro(,|$)' ||
        die "$ROOTFS$RUSTUP_HOME_HOST is not read-only"
}

clean_root_env() {
    local var
    # A clean environment: nothing of this machine's but the proxy settings.
    ROOT_ENV=(
        HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM=dumb
        PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        RUSTUP_HOME="$RUSTUP_HOME_HOST" CARGO_HOME=/root/.cargo
        SSL_CERT_FILE=/etc/ssl/fresh-check-ca.crt CARGO_HTTP_CAINFO=/etc/ssl/fresh-check-ca.crt
    )
    for var in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
        if [ -n "${!var:-}" ]; then
            ROOT_ENV+=("$var=${!var}")
        fi
    done
}
