// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Names of model files: a local path, an `hf://OWNER/REPO[@REVISION]/FILE`
//! reference, or a preset.

use std::fmt;
use std::path::PathBuf;

use super::presets::{preset, preset_names};

/// A file in a Hub model repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubFile {
    /// `OWNER/REPO`.
    pub repo: String,
    /// A branch, tag or commit; `main` when not given.
    pub revision: Option<String>,
    pub file: FileChoice,
}

/// How the file is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChoice {
    /// By its path in the repository.
    Name(String),
    /// The one GGUF file whose name carries this quantisation tag (as
    /// llama.cpp's `-hf OWNER/REPO:Q4_K_M`).
    Quant(String),
}

impl HubFile {
    pub fn revision(&self) -> &str {
        self.revision.as_deref().unwrap_or("main")
    }
}

impl fmt::Display for HubFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hf://{}", self.repo)?;
        if let Some(revision) = &self.revision {
            write!(f, "@{revision}")?;
        }
        match &self.file {
            FileChoice::Name(name) => write!(f, "/{name}"),
            FileChoice::Quant(tag) => write!(f, ":{tag}"),
        }
    }
}

/// What a `model-path` or `model` property names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelRef {
    Path(PathBuf),
    Hub(HubFile),
}

const HF_SCHEME: &str = "hf://";

impl ModelRef {
    /// `model-path`: a local path or an `hf://` reference.
    pub fn from_model_path(value: &str) -> Result<ModelRef, String> {
        match value.strip_prefix(HF_SCHEME) {
            Some(rest) => parse_hub(rest).map(ModelRef::Hub),
            None => Ok(ModelRef::Path(PathBuf::from(value))),
        }
    }

    /// `model`: a preset name or an `hf://` reference.
    pub fn from_model_name(value: &str) -> Result<ModelRef, String> {
        if let Some(rest) = value.strip_prefix(HF_SCHEME) {
            return parse_hub(rest).map(ModelRef::Hub);
        }
        preset(value)
            .map(|p| ModelRef::Hub(p.hub_file()))
            .ok_or_else(|| {
                format!(
                    "unknown model \"{value}\": use a preset ({}), an hf://OWNER/REPO/FILE \
                     reference, or model-path for a local file",
                    preset_names()
                )
            })
    }
}

/// Parses `OWNER/REPO[@REVISION]/FILE` or `OWNER/REPO[@REVISION]:TAG`.
/// Nothing in it may leave the repository's folder in the cache: empty,
/// `.` and `..` parts, backslashes and absolute paths are refused.
fn parse_hub(rest: &str) -> Result<HubFile, String> {
    let refuse = |why: &str| {
        Err(format!(
            "hf://{rest}: {why} (the form is hf://OWNER/REPO[@REVISION]/FILE)"
        ))
    };
    let mut parts = rest.splitn(3, '/');
    let (Some(owner), Some(repo_part)) = (parts.next(), parts.next()) else {
        return refuse("no OWNER/REPO");
    };
    let file = parts.next();
    let (repo_part, tag) = match (file, repo_part.split_once(':')) {
        (None, Some((repo, tag))) => (repo, Some(tag)),
        _ => (repo_part, None),
    };
    let (repo, revision) = match repo_part.split_once('@') {
        Some((repo, revision)) => (repo, Some(revision)),
        None => (repo_part, None),
    };
    for name in [owner, repo] {
        if !is_repo_name(name) {
            return refuse(&format!("\"{name}\" is not a repository owner or name"));
        }
    }
    if let Some(revision) = revision {
        if !is_safe_path(revision) {
            return refuse(&format!("\"{revision}\" is not a revision"));
        }
    }
    let file = match (file, tag) {
        (Some(file), None) if is_safe_path(file) => FileChoice::Name(file.to_owned()),
        (Some(file), None) => return refuse(&format!("\"{file}\" is not a file in a repository")),
        (None, Some(tag)) if is_repo_name(tag) => FileChoice::Quant(tag.to_owned()),
        _ => return refuse("no FILE"),
    };
    Ok(HubFile {
        repo: format!("{owner}/{repo}"),
        revision: revision.map(str::to_owned),
        file,
    })
}

fn is_repo_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A relative path with no part that is empty, `.` or `..`.
fn is_safe_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::PRESET_REPO;

    fn hub(s: &str) -> HubFile {
        match ModelRef::from_model_path(s).unwrap() {
            ModelRef::Hub(h) => h,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_plain_value_of_model_path_is_a_local_file() {
        assert_eq!(
            ModelRef::from_model_path("/models/v.gguf").unwrap(),
            ModelRef::Path("/models/v.gguf".into())
        );
    }

    #[test]
    fn an_hf_reference_names_repository_revision_and_file() {
        let h = hub("hf://owner/repo@v1.0/sub/model-Q8_0.gguf");
        assert_eq!(h.repo, "owner/repo");
        assert_eq!(h.revision(), "v1.0");
        assert_eq!(h.file, FileChoice::Name("sub/model-Q8_0.gguf".into()));
        let h = hub("hf://owner/repo/model.gguf");
        assert_eq!(h.revision(), "main");
        assert_eq!(h.to_string(), "hf://owner/repo/model.gguf");
    }

    #[test]
    fn an_hf_reference_may_name_a_quantisation_instead_of_a_file() {
        let h = hub("hf://owner/repo:Q4_K_M");
        assert_eq!(h.file, FileChoice::Quant("Q4_K_M".into()));
        assert_eq!(h.to_string(), "hf://owner/repo:Q4_K_M");
    }

    #[test]
    fn nothing_may_leave_the_repository() {
        for bad in [
            "hf://a/b/../../x",
            "hf://a/b/../x.gguf",
            "hf://a/b/./x.gguf",
            "hf://a/b//x.gguf",
            "hf://../b/x.gguf",
            "hf://a/../x.gguf",
            "hf://a/b@../../x/y.gguf",
            "hf://a/b/x\\..\\y.gguf",
            "hf://a/b/",
            "hf://a",
            "hf://a/b",
        ] {
            let err = ModelRef::from_model_path(bad).unwrap_err();
            assert!(err.contains("hf://OWNER/REPO"), "{bad}: {err}");
        }
    }

    #[test]
    fn presets_name_a_quantisation_of_the_published_repository() {
        let ModelRef::Hub(h) = ModelRef::from_model_name("Q4_K_M").unwrap() else {
            panic!()
        };
        assert_eq!(h.repo, PRESET_REPO);
        assert_eq!(h.file, FileChoice::Quant("Q4_K_M".into()));
        let err = ModelRef::from_model_name("q3").unwrap_err();
        assert!(
            err.contains("q4_k_m") && err.contains("model-path"),
            "{err}"
        );
    }
}
