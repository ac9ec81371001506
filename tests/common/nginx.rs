// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A real nginx (Debian's package) on 127.0.0.1, run unprivileged in the
//! foreground with everything it writes in a scratch directory, stopped
//! when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::process::Guarded;

pub struct Nginx {
    _process: Guarded,
    pub dir: PathBuf,
}

/// The fenced block of `lang` in `doc` (a path from the repository's
/// root), as the docs give it.
pub fn block_of(doc: &str, lang: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let fence = format!("```{lang}\n");
    let start = text
        .find(&fence)
        .unwrap_or_else(|| panic!("{doc} has no {lang} block"))
        + fence.len();
    let len = text[start..].find("```").unwrap();
    text[start..start + len].to_owned()
}

impl Nginx {
    /// nginx with `http` in its http context (and `main` in the main
    /// one, for modules such as rtmp), waiting until `port` accepts.
    pub fn start(name: &str, main: &str, http: &str, port: u16) -> Nginx {
        let nginx = Path::new("/usr/sbin/nginx");
        assert!(
            nginx.exists(),
            "nginx is not installed (Debian package nginx; scripts/setup installs it)"
        );
        let dir = super::scratch_dir(&format!("nginx-{name}-{port}"));
        let conf = format!(
            "pid {dir}/nginx.pid;\n\
             error_log {dir}/error.log info;\n\
             {main}\n\
             events {{ worker_connections 256; }}\n\
             http {{\n\
                 access_log {dir}/access.log;\n\
                 client_body_temp_path {dir}/body;\n\
                 proxy_temp_path {dir}/proxy;\n\
                 fastcgi_temp_path {dir}/fastcgi;\n\
                 uwsgi_temp_path {dir}/uwsgi;\n\
                 scgi_temp_path {dir}/scgi;\n\
                 {http}\n\
             }}\n",
            dir = dir.display()
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let process = Guarded::spawn(
            Command::new(nginx)
                .arg("-p")
                .arg(&dir)
                .arg("-c")
                .arg(dir.join("nginx.conf"))
                .args(["-g", "daemon off; master_process off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap()),
            "nginx",
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen on {port}: {}",
                std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default()
                    + &std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx {
            _process: process,
            dir,
        }
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}
