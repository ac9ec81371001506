# shellcheck shell=bash
# Sourced by what builds the plugin for use (scripts/setup,
# scripts/transcribe-sample, meson/cargo-build): the CMake arguments for
# transcribe.cpp's CPU code, and what the CUDA backend needs
# (CARGO_FEATURES with cuda).
#
# By default the build is tuned to the CPU it is built on (GGML_NATIVE=ON:
# ggml's SIMD kernels for every extension that CPU has: AVX2 and FMA here,
# AVX-512 and VNNI where present), since a machine that builds its own plugin
# runs it there. VOXTRALRT_PORTABLE=1 builds for any x86-64 CPU instead
# (TRANSCRIBE_X86_CONSERVATIVE: the SSE2 baseline, ggml's generic C kernels,
# several times slower; docs/benchmarks.md, "Native or portable").
# GGML_NATIVE=OFF alone is not that: ggml then turns AVX2, FMA and F16C on,
# unless SOURCE_DATE_EPOCH is set (as under dpkg-buildpackage), so the same
# arguments gave a binary that needs AVX2 from a shell and a baseline one
# from a package build. A package for CPUs from about 2015 on can keep the
# AVX2 kernels with TRANSCRIBE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON
# -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
# -DTRANSCRIBE_USE_SYSTEM_BLAS=OFF" (not measured here).
# TRANSCRIBE_CMAKE_ARGS, when set, wins over both.
if [ -z "${TRANSCRIBE_CMAKE_ARGS+set}" ]; then
    if [ "${VOXTRALRT_PORTABLE:-0}" = 1 ]; then
        TRANSCRIBE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DTRANSCRIBE_X86_CONSERVATIVE=ON -DTRANSCRIBE_USE_SYSTEM_BLAS=OFF"
    else
        TRANSCRIBE_CMAKE_ARGS="-DGGML_NATIVE=ON -DTRANSCRIBE_USE_SYSTEM_BLAS=OFF"
    fi
fi
# The CUDA objects go into the plugin, a shared library, but nvcc makes
# position-independent code only when CMake is asked to (transcribe-cpp-sys
# 0.4.1 asks for HIP only): without it the link fails on relocations.
case ",${CARGO_FEATURES:-}," in
    *,cuda,*) TRANSCRIBE_CMAKE_ARGS="$TRANSCRIBE_CMAKE_ARGS -DCMAKE_POSITION_INDEPENDENT_CODE=ON" ;;
esac
export TRANSCRIBE_CMAKE_ARGS
