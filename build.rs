use std::env;
use std::path::{Path, PathBuf};

fn main() {
    gst_plugin_version_helper::info();
    if env::var_os("CARGO_FEATURE_CUDA").is_some() {
        link_cuda_libraries();
    }
    plugin_runpath();
}

/// The `dynamic-backends` build (the Debian package): where the installed
/// plugin finds libtranscribe and ggml's modules, a private folder next to
/// GStreamer's plugin folder, `$ORIGIN/../gst-plugin-voxtralrt`
/// (scripts/package), or VOXTRALRT_RPATH. Only the plugin gets it; the
/// static default build needs none.
///
/// No `rerun-if-env-changed` here: any `rerun-if` line makes cargo rerun
/// this script only for what those lines name, and then the plugin's
/// COMMIT_ID (gst-plugin-version-helper) would go stale. The feature is part
/// of cargo's fingerprint, and scripts/package sets the same path each time.
fn plugin_runpath() {
    if env::var_os("CARGO_FEATURE_DYNAMIC_BACKENDS").is_none() {
        return;
    }
    let path = env::var("VOXTRALRT_RPATH")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "$ORIGIN/../gst-plugin-voxtralrt".to_owned());
    println!("cargo:rustc-link-arg-cdylib=-Wl,-rpath,{path}");
}

/// The CUDA libraries ggml-cuda links (runtime, cuBLAS, the driver), as
/// CMake found them when transcribe.cpp was configured.
const CUDA_LIBRARIES: [&str; 4] = ["cudart", "cublas", "cublasLt", "cuda_driver"];

/// transcribe-cpp-sys 0.4's link manifest names Vulkan's and ROCm's libraries
/// but not CUDA's, so a `cuda` build fails to link without these lines. The
/// paths come from the CMake cache of that build, so they are the ones
/// ggml-cuda was compiled against.
fn link_cuda_libraries() {
    let Some(cache) = transcribe_cmake_cache() else {
        println!("cargo:warning=CUDA build: transcribe.cpp's CMakeCache.txt was not found; the CUDA libraries must be on the linker's path");
        return;
    };
    println!("cargo:rerun-if-changed={}", cache.display());
    let text = std::fs::read_to_string(&cache).unwrap_or_default();
    if !cache_flag_is_on(&text, "CMAKE_POSITION_INDEPENDENT_CODE") {
        // Said here, before the linker's page of relocation errors.
        panic!(
            "the CUDA build needs TRANSCRIBE_CMAKE_ARGS=-DCMAKE_POSITION_INDEPENDENT_CODE=ON \
             (nvcc's objects go into the plugin, a shared library; scripts/setup and meson \
             add it): set it and build again"
        );
    }
    for lib in CUDA_LIBRARIES {
        match cached_library(&text, lib) {
            Some(path) => emit_link_to(&path),
            None => println!(
                "cargo:warning=CUDA build: CMake did not find lib{lib} (CUDA_{lib}_LIBRARY in {})",
                cache.display()
            ),
        }
    }
}

/// The sys crate installs into OUT_DIR/lib and configures in OUT_DIR/build.
fn transcribe_cmake_cache() -> Option<PathBuf> {
    let lib_dir = PathBuf::from(env::var_os("DEP_TRANSCRIBE_LIB_DIR")?);
    let cache = lib_dir.parent()?.join("build").join("CMakeCache.txt");
    cache.is_file().then_some(cache)
}

/// A CMake cache entry's value: `NAME:TYPE=VALUE`.
fn cache_value<'a>(cache: &'a str, name: &str) -> Option<&'a str> {
    cache.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.split(':').next() == Some(name)).then_some(value)
    })
}

/// `CUDA_cudart_LIBRARY:FILEPATH=/usr/local/cuda/lib64/libcudart.so`
fn cached_library(cache: &str, lib: &str) -> Option<PathBuf> {
    let value = cache_value(cache, &format!("CUDA_{lib}_LIBRARY"))?;
    (!value.is_empty() && !value.ends_with("NOTFOUND")).then(|| PathBuf::from(value))
}

fn cache_flag_is_on(cache: &str, name: &str) -> bool {
    cache_value(cache, name).is_some_and(|value| {
        ["ON", "TRUE", "YES", "1"].contains(&value.to_ascii_uppercase().as_str())
    })
}

fn emit_link_to(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), library_name(path)) else {
        println!("cargo:rustc-link-arg={}", path.display());
        return;
    };
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib={name}");
}

/// `libcublas.so` or `libcublas.so.13` -> `cublas`.
fn library_name(path: &Path) -> Option<&str> {
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_prefix("lib")?;
    stem.find(".so").map(|end| &stem[..end])
}
