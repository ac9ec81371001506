# Sourced: puts ccache in front of the C and C++ compilers of the CMake
# builds (transcribe.cpp and ggml, through transcribe-cpp-sys's build
# script), when ccache is installed (scripts/setup installs it) and
# VOXTRALRT_CCACHE is not 0.
#
# CI and fresh-check build from a fresh clone every run, and the engine's
# C++ is most of that build's time (about 3 minutes of 2 cores) though it
# rarely changes. ccache keys each object on the preprocessed source and the
# flags, so an unchanged file is taken from the cache and a changed one is
# compiled: nothing stale can come back. The cache is shared by every clone
# (~/.cache/voxtralrt/ccache; CCACHE_DIR wins): paths under the clone are
# hashed relative to it (CCACHE_BASEDIR), so /check/work/main and a
# developer's checkout hit the same entries.
#
# CMake reads CMAKE_<LANG>_COMPILER_LAUNCHER from the environment when it
# configures a build directory for the first time; an existing target dir
# keeps what it was configured with.
if [ "${VOXTRALRT_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    export CMAKE_C_COMPILER_LAUNCHER=ccache
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache
    export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/voxtralrt/ccache}"
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
    export CCACHE_NOHASHDIR=true
    export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-3G}"
fi
