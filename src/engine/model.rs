// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Loaded models and the sessions bound to them.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use transcribe_cpp_sys as ffi;

use super::gguf::{self, FrameGeometry, Header};
use super::{log, Error};

/// The architecture name of Voxtral Realtime GGUF files.
pub const VOXTRAL_REALTIME_ARCH: &str = "voxtral_realtime";

/// Where the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// The best device found at load time, falling back to the CPU.
    #[default]
    Auto,
    /// The CPU only.
    Cpu,
    /// An NVIDIA GPU (needs the `cuda` cargo feature).
    Cuda,
    /// A Vulkan GPU (needs the `vulkan` cargo feature).
    Vulkan,
}

impl Backend {
    /// The short name used in properties and messages.
    pub fn nick(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::Vulkan => "vulkan",
        }
    }

    fn request(self) -> ffi::transcribe_backend_request {
        match self {
            Backend::Auto => ffi::transcribe_backend_request::TRANSCRIBE_BACKEND_AUTO,
            Backend::Cpu => ffi::transcribe_backend_request::TRANSCRIBE_BACKEND_CPU,
            Backend::Cuda => ffi::transcribe_backend_request::TRANSCRIBE_BACKEND_CUDA,
            Backend::Vulkan => ffi::transcribe_backend_request::TRANSCRIBE_BACKEND_VULKAN,
        }
    }

    /// Whether this build and machine can serve the backend at all.
    pub fn is_available(self) -> bool {
        init_backends();
        match self {
            Backend::Auto | Backend::Cpu => true,
            // SAFETY: a plain query without pointers.
            _ => unsafe { ffi::transcribe_backend_available(self.request()) },
        }
    }
}

/// What to load: the file, and where to run it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelSpec {
    pub path: PathBuf,
    pub backend: Backend,
    /// Index of the compute device; `None` lets the backend choose.
    pub device: Option<u32>,
    /// On the CPU, keep the matmul weights that ggml has a repack layout for
    /// in that layout, laid out once at load (default). `false` keeps the
    /// file's layout, as the stock engine does: for side-by-side
    /// measurements (the library's `TRANSCRIBE_NO_CPU_REPACK=1` does the same
    /// for every load in a process).
    pub cpu_repack: bool,
}

impl ModelSpec {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            backend: Backend::Auto,
            device: None,
            cpu_repack: true,
        }
    }
}

pub(crate) fn status_name(status: ffi::transcribe_status) -> String {
    // SAFETY: returns a static string for any integer.
    let raw = unsafe { ffi::transcribe_status_string(status.0 as i32) };
    if raw.is_null() {
        return format!("status {}", status.0);
    }
    // SAFETY: non-null, NUL-terminated and static.
    unsafe { CStr::from_ptr(raw) }
        .to_string_lossy()
        .into_owned()
}

pub(crate) fn engine_error(
    operation: &'static str,
    status: ffi::transcribe_status,
    detail: String,
) -> Error {
    match status {
        ffi::transcribe_status::TRANSCRIBE_ERR_ABORTED => Error::Aborted,
        ffi::transcribe_status::TRANSCRIBE_ERR_OOM => Error::OutOfMemory { detail },
        _ => Error::Engine {
            operation,
            status: status_name(status),
            detail,
        },
    }
}

/// Where a loaded model's weights live, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightMemory {
    /// Pages of the memory-mapped file (shared with other processes).
    pub mapped: u64,
    /// Copied into backend memory in the file's layout.
    pub copied: u64,
    /// Copied into ggml's CPU repack layout, laid out once for the CPU's
    /// matrix kernels (not mapped).
    pub repacked: u64,
    /// Tensors in the CPU repack layout.
    pub repacked_tensors: u32,
}

/// A model loaded by transcribe.cpp.
pub struct Model {
    ptr: NonNull<ffi::transcribe_model>,
    id: u64,
    spec: ModelSpec,
    backend_name: String,
    load_time: Duration,
    frames: FrameGeometry,
    memory: WeightMemory,
}

// SAFETY: transcribe.cpp documents model calls as thread-safe; the model is
// read-only after load and freed once, in Drop.
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

impl Model {
    /// Loads a Voxtral Realtime model, with a distinct error for each way
    /// this can fail.
    pub fn load(spec: &ModelSpec) -> Result<Model, Error> {
        log::install();
        let path = spec.path.as_path();
        let frames = check_file(path)?;
        check_backend(spec)?;
        let started = Instant::now();
        let ptr = load_file(path, spec)?;
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let mut model = Model {
            ptr,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            spec: spec.clone(),
            backend_name: String::new(),
            load_time: started.elapsed(),
            frames,
            memory: WeightMemory::default(),
        };
        model.check_stream_support()?;
        model.backend_name = model.query_backend();
        model.memory = model.query_memory();
        gst::info!(
            log::CAT,
            "loaded {} in {:?} on {}: {} MiB mapped, {} MiB copied, {} tensors ({} MiB) repacked \
             for the CPU",
            path.display(),
            model.load_time,
            model.backend_name,
            model.memory.mapped >> 20,
            model.memory.copied >> 20,
            model.memory.repacked_tensors,
            model.memory.repacked >> 20
        );
        if !model.has_80_ms_frames() {
            gst::warning!(
                log::CAT,
                "{} does not have Voxtral Realtime's 80 ms audio frames ({:?}): word \
                 timestamps will be off, and a stream the model ends is noticed only when its \
                 text stops",
                path.display(),
                model.frames
            );
        }
        Ok(model)
    }

    /// Whether the header gives the model Voxtral Realtime's frames, which
    /// the element's timing and its view of the decoder assume.
    pub fn has_80_ms_frames(&self) -> bool {
        self.frames.is_voxtral_realtime()
    }

    pub(crate) fn as_ptr(&self) -> *mut ffi::transcribe_model {
        self.ptr.as_ptr()
    }

    /// A number unique to this load in this process.
    pub fn instance_id(&self) -> u64 {
        self.id
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// The backend the library actually chose (e.g. "CPU", "CUDA0").
    pub fn backend_name(&self) -> &str {
        &self.backend_name
    }

    /// How long the library took to load the file.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// Where the weights live: mapped, copied, repacked for the CPU.
    pub fn memory(&self) -> WeightMemory {
        self.memory
    }

    fn query_memory(&self) -> WeightMemory {
        let mut memory = std::mem::MaybeUninit::<ffi::transcribe_model_memory>::zeroed();
        // SAFETY: the init function fills the struct; the query writes at
        // most its declared size.
        let memory = unsafe {
            ffi::transcribe_model_memory_init(memory.as_mut_ptr());
            let mut memory = memory.assume_init();
            if ffi::transcribe_model_get_memory(self.ptr.as_ptr(), &mut memory)
                != ffi::transcribe_status::TRANSCRIBE_OK
            {
                return WeightMemory::default();
            }
            memory
        };
        WeightMemory {
            mapped: memory.mapped_bytes,
            copied: memory.copied_bytes,
            repacked: memory.repacked_bytes,
            repacked_tensors: memory.n_repacked.max(0) as u32,
        }
    }

    fn arch(&self) -> String {
        // SAFETY: valid model; returns a string owned by the model or NULL.
        let raw = unsafe { ffi::transcribe_model_arch_string(self.ptr.as_ptr()) };
        if raw.is_null() {
            return String::from("unknown");
        }
        // SAFETY: non-null NUL-terminated string alive as long as the model.
        unsafe { CStr::from_ptr(raw) }
            .to_string_lossy()
            .into_owned()
    }

    fn query_backend(&self) -> String {
        // SAFETY: as in `arch`.
        let raw = unsafe { ffi::transcribe_model_backend(self.ptr.as_ptr()) };
        if raw.is_null() {
            return String::from("unknown");
        }
        // SAFETY: as in `arch`.
        unsafe { CStr::from_ptr(raw) }
            .to_string_lossy()
            .into_owned()
    }

    fn check_stream_support(&self) -> Result<(), Error> {
        let arch = self.arch();
        if arch != VOXTRAL_REALTIME_ARCH {
            return Err(Error::WrongArchitecture {
                path: self.spec.path.clone(),
                found: arch,
            });
        }
        // SAFETY: valid model; a pure query.
        let accepts = unsafe {
            ffi::transcribe_model_accepts_ext_kind(
                self.ptr.as_ptr(),
                ffi::transcribe_ext_slot::TRANSCRIBE_EXT_SLOT_STREAM,
                ffi::TRANSCRIBE_EXT_KIND_VOXTRAL_REALTIME_STREAM,
            )
        };
        if accepts {
            Ok(())
        } else {
            Err(Error::NoStreamExtension {
                path: self.spec.path.clone(),
                arch,
            })
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: every session of this model holds it (`Session`), so none is
        // left, and the pointer is not used after this.
        unsafe { ffi::transcribe_model_free(self.ptr.as_ptr()) };
    }
}

/// Checks what can be checked without the library, so that each failure gets
/// a message naming its cause; returns the frame geometry the header gives.
fn check_file(path: &Path) -> Result<FrameGeometry, Error> {
    let unreadable = |reason: String| Error::ModelUnreadable {
        path: path.to_owned(),
        reason,
    };
    if path.as_os_str().is_empty() {
        return Err(Error::ModelMissing {
            path: path.to_owned(),
        });
    }
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::ModelMissing {
                path: path.to_owned(),
            })
        }
        Err(e) => return Err(unreadable(e.to_string())),
        Ok(m) if m.is_dir() => return Err(unreadable("it is a directory, not a file".into())),
        Ok(m) if m.len() == 0 => {
            return Err(Error::NotGguf {
                path: path.to_owned(),
                detail: "the file is empty".into(),
            })
        }
        Ok(_) => {}
    }
    match gguf::read_header(path) {
        Err(e) => Err(unreadable(e.to_string())),
        Ok(Header::NotGguf) => Err(Error::NotGguf {
            path: path.to_owned(),
            detail: "the file does not start with the GGUF signature".into(),
        }),
        Ok(Header::Damaged(detail)) => Err(Error::NotGguf {
            path: path.to_owned(),
            detail,
        }),
        Ok(Header::Gguf {
            architecture: None, ..
        }) => Err(Error::NotGguf {
            path: path.to_owned(),
            detail: "the header has no general.architecture".into(),
        }),
        Ok(Header::Gguf {
            architecture: Some(arch),
            ..
        }) if arch != VOXTRAL_REALTIME_ARCH => Err(Error::WrongArchitecture {
            path: path.to_owned(),
            found: arch,
        }),
        Ok(Header::Gguf { frames, .. }) => Ok(frames),
    }
}

/// Registers the compute backends once per process. A `dynamic-backends`
/// build (the Debian package, docs/gpu.md) has no backend compiled in: ggml's
/// CPU variants (one module per x86-64 tier, the best one for this CPU picked
/// at run time) and any GPU module are loaded from the directory that holds
/// libtranscribe. In the default static build this is a no-op.
fn init_backends() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        // SAFETY: no arguments; the library resolves its own directory.
        let status = unsafe { ffi::transcribe_init_backends_default() };
        if status != ffi::transcribe_status::TRANSCRIBE_OK {
            // Said where it can be seen; the model load then fails with the
            // backend's own error.
            gst::error!(
                log::CAT,
                "transcribe.cpp found no compute backend modules next to libtranscribe ({}): \
                 is the package complete?",
                status_name(status)
            );
        }
    });
}

fn check_backend(spec: &ModelSpec) -> Result<(), Error> {
    if spec.backend.is_available() {
        return Ok(());
    }
    let detail = match build_hint(spec.backend) {
        Some(hint) => format!("this plugin was built without it: {hint}"),
        None => format!(
            "no {} device was found; devices: {}",
            spec.backend.nick(),
            devices_found()
        ),
    };
    Err(Error::BackendUnavailable {
        backend: spec.backend,
        detail,
    })
}

/// How to build with `backend`, if this build lacks it.
fn build_hint(backend: Backend) -> Option<&'static str> {
    match backend {
        Backend::Cuda if !cfg!(feature = "cuda") => Some(
            "build with `cargo build --release --features cuda` or `meson setup -Dcuda=enabled` \
             (needs the CUDA toolkit, docs/gpu.md)",
        ),
        Backend::Vulkan if !cfg!(feature = "vulkan") => Some(
            "build with `cargo build --release --features vulkan` or `meson setup -Dvulkan=enabled` \
             (needs Vulkan headers 1.3.272 or newer and glslc: Debian 13, SETUP_VULKAN=1 \
             scripts/setup; docs/gpu.md)",
        ),
        _ => None,
    }
}

/// The devices the runtime has, by index, name and kind.
fn devices_found() -> String {
    init_backends();
    // SAFETY: plain queries; handles and their strings are runtime-owned and
    // live for the process.
    let names: Vec<String> = unsafe {
        (0..ffi::transcribe_device_count())
            .filter_map(|i| {
                let device = ffi::transcribe_device_get(i);
                let mut info = std::mem::MaybeUninit::<ffi::transcribe_device_info>::zeroed();
                ffi::transcribe_device_info_init(info.as_mut_ptr());
                let mut info = info.assume_init();
                if device.is_null()
                    || ffi::transcribe_device_get_info(device, &mut info)
                        != ffi::transcribe_status::TRANSCRIBE_OK
                {
                    return None;
                }
                let text = |p: *const std::os::raw::c_char| {
                    if p.is_null() {
                        String::new()
                    } else {
                        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
                    }
                };
                Some(format!(
                    "{i}: {} {} ({})",
                    text(info.name),
                    text(info.description),
                    text(info.kind)
                ))
            })
            .collect()
    };
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn device_handle(spec: &ModelSpec) -> Result<ffi::transcribe_device_t, Error> {
    init_backends();
    let Some(index) = spec.device else {
        return Ok(std::ptr::null_mut());
    };
    // SAFETY: a plain query; handles are owned by the runtime.
    let handle = unsafe { ffi::transcribe_device_get(index as i32) };
    if handle.is_null() {
        return Err(Error::BackendUnavailable {
            backend: spec.backend,
            detail: format!("there is no device {index}; devices: {}", devices_found()),
        });
    }
    Ok(handle)
}

pub(crate) fn load_file(
    path: &Path,
    spec: &ModelSpec,
) -> Result<NonNull<ffi::transcribe_model>, Error> {
    init_backends();
    let c_path = path
        .to_str()
        .and_then(|p| CString::new(p).ok())
        .ok_or_else(|| Error::ModelUnreadable {
            path: path.to_owned(),
            reason: "the path is not valid UTF-8".into(),
        })?;
    let mut params = std::mem::MaybeUninit::<ffi::transcribe_model_load_params>::zeroed();
    // SAFETY: the init function fills the whole struct.
    let mut params = unsafe {
        ffi::transcribe_model_load_params_init(params.as_mut_ptr());
        params.assume_init()
    };
    params.backend = spec.backend.request();
    params.device = device_handle(spec)?;
    params.no_cpu_repack = !spec.cpu_repack;
    let mut out: *mut ffi::transcribe_model = std::ptr::null_mut();
    // SAFETY: valid C string, initialised params, and an out pointer.
    let (status, detail) = log::capture(|| unsafe {
        ffi::transcribe_model_load_file(c_path.as_ptr(), &params, &mut out)
    });
    if status == ffi::transcribe_status::TRANSCRIBE_OK {
        if let Some(ptr) = NonNull::new(out) {
            return Ok(ptr);
        }
    }
    let path = path.to_owned();
    Err(match status {
        ffi::transcribe_status::TRANSCRIBE_ERR_FILE_NOT_FOUND => Error::ModelMissing { path },
        ffi::transcribe_status::TRANSCRIBE_ERR_GGUF => Error::NotGguf { path, detail },
        ffi::transcribe_status::TRANSCRIBE_ERR_UNSUPPORTED_ARCH
        | ffi::transcribe_status::TRANSCRIBE_ERR_UNSUPPORTED_VARIANT => Error::WrongArchitecture {
            path,
            found: if detail.is_empty() {
                "unsupported".into()
            } else {
                detail
            },
        },
        ffi::transcribe_status::TRANSCRIBE_ERR_BACKEND => Error::BackendUnavailable {
            backend: spec.backend,
            detail,
        },
        other => engine_error("loading the model", other, detail),
    })
}
