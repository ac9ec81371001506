# shellcheck shell=bash
# scripts/lib/gguf-python.sh: what the model writers of scripts/models/
# share (make-real-shape-model, make-sortformer-model), sourced by them, not
# run by itself: their --help, and a Python with the PyPI packages gguf and
# numpy (tests/fixtures/requirements.txt) to run their generator with.
#
#   ROOT=...                     the repository
#   . "$ROOT/scripts/lib/gguf-python.sh"
#   gguf_python_exec NAME GENERATOR "$@"
#
# NAME is the script's name in messages, GENERATOR the Python file to run
# (from the repository root, where it cds). With -h or --help first, it
# prints the calling script's header (from line 2 to `set -euo`) instead.
# Python: $PYTHON if set (it must have the packages), else python3 if it has
# them, else a virtual environment under target/real-shape/venv, made and
# filled on first use.

gguf_has_deps() { "$1" -c 'import gguf, numpy' 2>/dev/null; }

gguf_python_exec() {
    local name="$1" generator="$2"
    shift 2
    cd "$ROOT"

    case "${1:-}" in
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
            exit 0
            ;;
    esac

    local python="${PYTHON:-}"
    local venv="$ROOT/target/real-shape/venv"
    if [ -z "$python" ]; then
        if gguf_has_deps python3; then
            python=python3
        else
            if ! gguf_has_deps "$venv/bin/python" 2>/dev/null; then
                echo "$name: python3 has no gguf/numpy; installing them into $venv" >&2
                if ! python3 -m venv "$venv" ||
                    ! "$venv/bin/pip" install -q -r tests/fixtures/requirements.txt; then
                    echo "$name: could not make $venv; install the packages yourself:" >&2
                    echo "  pip install -r tests/fixtures/requirements.txt   (or: apt-get install python3-venv)" >&2
                    exit 1
                fi
            fi
            python="$venv/bin/python"
        fi
    elif ! gguf_has_deps "$python"; then
        echo "$name: $python lacks gguf/numpy:" >&2
        echo "  $python -m pip install -r tests/fixtures/requirements.txt" >&2
        exit 1
    fi

    exec "$python" "$generator" "$@"
}
