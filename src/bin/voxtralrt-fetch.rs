// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrt-fetch MODEL`: fetches a model by preset name (`q4_k_m`,
//! `q8_0`, ...) or `hf://` reference into the Hugging Face cache with a
//! progress bar, and prints its local path (for `scripts/transcribe-sample
//! --model`). A cached model is printed at once, with no request.

use std::process::ExitCode;

use gstvoxtralrt::models::hub::fetch_with_progress_bar;
use gstvoxtralrt::models::{preset_names, ModelRef};

fn usage() -> String {
    format!(
        "usage: voxtralrt-fetch MODEL\n\n  MODEL  a preset ({}) or hf://OWNER/REPO[@REVISION]/FILE or hf://OWNER/REPO:QUANT\n\n\
         Prints the path of the model in the Hugging Face cache ($HF_HOME/hub),\n\
         downloading it first if needed. Follows HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE.",
        preset_names()
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name] = args.as_slice() else {
        eprintln!("{}", usage());
        return ExitCode::from(2);
    };
    if name == "--help" || name == "-h" {
        println!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let file = match ModelRef::from_model_name(name) {
        Ok(ModelRef::Hub(file)) => file,
        Ok(ModelRef::Path(path)) => {
            println!("{}", path.display());
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("voxtralrt-fetch: {msg}");
            return ExitCode::from(2);
        }
    };
    let result = fetch_with_progress_bar(&file);
    match result {
        Ok(path) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("voxtralrt-fetch: {e}");
            ExitCode::FAILURE
        }
    }
}
