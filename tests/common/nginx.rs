//! A Debian nginx started for a test (see `muxlab::bench::nginx::launch_nginx`): stopped
//! gracefully and its directory removed when the test is done with it.

use std::path::PathBuf;
use std::process::{Child, Command};

/// The nginx process and its directory (configuration, pid file, logs).
pub struct Running {
    pub child: Child,
    pub dir: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-QUIT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
