//! A plugin author's machine, for the tests of `plugin new` and of the plugin
//! tutorial: the built `hookgate` run in a directory of one's own, and cargo or a
//! shell with none of the outer build's variables, building into target dirs
//! beside the workspace's that persist between runs (so repeat runs are
//! incremental).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cli::{CliRun, cli_words};

/// What the outer `cargo test` sets that a plugin author's build must not see:
/// its target dir and flags, its wrappers and its package.
const OUTER_BUILD_VARS: [&str; 8] = [
    "CARGO_TARGET_DIR",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
];

/// The client variables a user may have set, which would leak into the tests.
const CLIENT_VARS: [&str; 4] = [
    "HOOKGATE_URL",
    "HOOKGATE_TOKEN",
    "HOOKGATE_TENANT",
    "HOOKGATE_WEBHOOK_SECRET",
];

/// Runs `hookgate` with a command line (split by [`cli_words`]) in `cwd`.
pub fn hookgate_in(cwd: &Path, line: &str) -> CliRun {
    let out = Command::new(env!("CARGO_BIN_EXE_hookgate"))
        .current_dir(cwd)
        .args(cli_words(line))
        .stdin(Stdio::null())
        .output()
        .expect("hookgate runs");
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `<target>/NAME`, beside the workspace's own build (`<target>/debug/deps/it-*`
/// is this test binary).
pub fn target_dir_beside_workspace(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe.ancestors().nth(3).expect("the target dir");
    target.join(name)
}

/// `program` in `cwd` as a plugin author runs it: the built `hookgate` first on
/// `PATH`, none of the outer build's or the user's client variables, and crates
/// only from the local cache (the tests never reach the network).
fn author_command(program: impl Into<OsString>, cwd: &Path) -> Command {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hookgate"))
        .parent()
        .expect("the binary's directory");
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let paths = std::iter::once(bin_dir.to_owned()).chain(std::env::split_paths(&inherited));
    let path = std::env::join_paths(paths).expect("a PATH");
    let mut cmd = Command::new(program.into());
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .env("PATH", path)
        .env("CARGO_NET_OFFLINE", "true");
    for var in OUTER_BUILD_VARS.into_iter().chain(CLIENT_VARS) {
        cmd.env_remove(var);
    }
    cmd
}

/// What to do about a tool the machine lacks.
const INSTALL_HINT: &str = "`bash tests/run.sh` installs what the tests need";

/// Runs `cmd` to the end, asserting success; returns its stdout. `what` names it
/// in the failure.
fn succeed(mut cmd: Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} did not start ({e}); {INSTALL_HINT}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    // 127 is the shell's "command not found".
    let hint = if out.status.code() == Some(127) {
        INSTALL_HINT
    } else {
        ""
    };
    assert!(
        out.status.success(),
        "{what} failed ({}) {hint}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

/// `cargo ARGS` in `dir` as a plugin author runs it, building into `target_dir`.
pub fn cargo_in(dir: &Path, args: &[&str], target_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = author_command(cargo, dir);
    cmd.args(args).env("CARGO_TARGET_DIR", target_dir);
    succeed(cmd, &format!("cargo {args:?} in {}", dir.display()));
}

/// Runs a shell `script` under `bash -e -o pipefail` in `dir` as a plugin author
/// would, with `env` set; returns its stdout.
pub fn bash_in(dir: &Path, script: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = author_command("bash", dir);
    cmd.args(["-e", "-o", "pipefail", "-c", script])
        .envs(env.iter().copied());
    succeed(cmd, &format!("in {}:\n{script}\n", dir.display()))
}
