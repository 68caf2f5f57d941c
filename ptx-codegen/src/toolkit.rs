//! Finding NVIDIA's tools on a machine that may have no CUDA toolkit: `ptxas` (to check
//! generated PTX) and `libdevice.10.bc` (NVIDIA's math library as LLVM bitcode).
//!
//! Looked up, in order: an explicit environment variable; a CUDA toolkit (`CUDA_HOME`,
//! `CUDA_PATH`, `/usr/local/cuda`); the NVIDIA wheels from PyPI (`nvidia-cuda-nvcc`,
//! `nvidia-cuda-nvcc-cu12`, `nvidia-nvvm`) installed where the project's setup puts them
//! (`GPU_TOOLS_DIR`, default `~/.cache/gpu-vectorize/nvidia`) or into Python's own
//! site-packages.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where the project's setup script installs the NVIDIA wheels.
pub fn tools_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("GPU_TOOLS_DIR") {
        return Some(PathBuf::from(d));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/gpu-vectorize/nvidia"))
}

/// Directories that may hold an `nvidia/` wheel tree: each wheel's directory under
/// [`tools_dir`], then Python's site-packages.
fn wheel_roots() -> Vec<PathBuf> {
    let mut roots = tools_dir_roots();
    roots.extend(python_site_packages().iter().cloned());
    roots
}

/// Each wheel's directory under [`tools_dir`], then [`tools_dir`] itself.
fn tools_dir_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(dir) = tools_dir() {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut subdirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
            subdirs.sort();
            roots.extend(subdirs);
        }
        roots.push(dir);
    }
    roots
}

/// Python's site-packages directories that contain an `nvidia` package (asked once per
/// process: starting Python takes tens of milliseconds).
fn python_site_packages() -> &'static [PathBuf] {
    static PYTHON: OnceLock<Vec<PathBuf>> = OnceLock::new();
    PYTHON.get_or_init(ask_python)
}

fn ask_python() -> Vec<PathBuf> {
    let script = "import nvidia, os\nfor p in nvidia.__path__: print(os.path.dirname(p))";
    let Ok(out) = Command::new("python3").args(["-c", script]).output() else {
        return Vec::new();
    };
    if !out.status.success() {
        return Vec::new();
    }
    String::from_utf8_lossy(&out.stdout).lines().map(PathBuf::from).collect()
}

fn toolkit_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> =
        ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"].iter().filter_map(std::env::var_os).map(PathBuf::from).collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots
}

/// Every `ptxas` this machine has, explicit choice (`PTXAS`) first.
pub fn ptxas_candidates() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("PTXAS") {
        found.push(PathBuf::from(p));
    }
    for root in toolkit_roots() {
        found.push(root.join("bin/ptxas"));
    }
    for root in wheel_roots() {
        found.push(root.join("nvidia/cu13/bin/ptxas"));
        found.push(root.join("nvidia/cuda_nvcc/bin/ptxas"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            found.push(dir.join("ptxas"));
        }
    }
    let mut unique: Vec<PathBuf> = Vec::new();
    for p in found {
        if p.is_file() && !unique.contains(&p) {
            unique.push(p);
        }
    }
    unique
}

/// The CUDA release of a `ptxas` (e.g. (13, 5)).
pub fn ptxas_release(ptxas: &Path) -> Option<(u32, u32)> {
    let out = Command::new(ptxas).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rest = &text[text.find("release ")? + "release ".len()..];
    let version: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let mut parts = version.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Whether a CUDA release's `ptxas` can assemble for `arch` (`sm_70`, `sm_90a`, …).
pub fn release_supports(release: (u32, u32), arch: &str) -> bool {
    let Some(sm) = arch.strip_prefix("sm_").and_then(|s| s.trim_end_matches('a').parse::<u32>().ok()) else {
        return false;
    };
    let min_release = match sm {
        ..=72 => (9, 0),
        75 => (10, 0),
        80 => (11, 0),
        86 | 87 => (11, 1),
        89 | 90 => (11, 8),
        _ => (12, 8),
    };
    // CUDA 13 dropped the architectures before Turing.
    let max_release_major = if sm < 75 { 12 } else { u32::MAX };
    release >= min_release && release.0 <= max_release_major
}

/// A `ptxas` that can assemble PTX for `arch`, if this machine has one.
pub fn find_ptxas(arch: &str) -> Option<PathBuf> {
    ptxas_candidates().into_iter().find(|p| ptxas_release(p).is_some_and(|r| release_supports(r, arch)))
}

/// Files per `ptxas` run in [`assemble`]: it takes several inputs, which saves a process
/// each. `ptxas` 13.5 (V13.5.37) aborted with a double free, or hung, on 24 or more of
/// the fuzz corpus's files at once (not on every 24 files: 25 of the ptx-codegen corpus
/// went through), so a batch stays well below that; a crash only costs the retry file by
/// file, and a hang is stopped at [`ASSEMBLE_LIMIT`].
pub const ASSEMBLE_BATCH: usize = 16;

/// How long one `ptxas` run in [`assemble`] may take. A run stopped at the limit counts as
/// failed: a batch is repeated file by file, and a single file is reported as rejected.
pub const ASSEMBLE_LIMIT: Duration = Duration::from_secs(120);

/// Checks PTX files with `ptxas` for `arch`: syntax, types, and the instructions the target
/// has. Returns each file it rejects, with its message. The files go to `ptxas` several at
/// a time, and a run that fails (or crashes, or outlasts [`ASSEMBLE_LIMIT`]) is repeated
/// file by file to name the ones it rejects. One run assembles its inputs as one program,
/// so files that define the same `.entry` fail together and are checked one by one: give
/// such files in separate calls. At `-O0`: the optimiser is not what is checked, and it
/// takes most of `ptxas`'s time.
pub fn assemble(ptxas: &Path, arch: &str, files: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let run = |batch: &[PathBuf]| {
        let mut command = Command::new(ptxas);
        command.arg(format!("-arch={arch}")).arg("-O0").args(batch).args(["-o", "/dev/null"]);
        run_bounded(&mut command, ASSEMBLE_LIMIT)
    };
    let mut rejected = Vec::new();
    for batch in files.chunks(ASSEMBLE_BATCH) {
        if matches!(run(batch), Ok(Ran::Finished(ref o)) if o.status.success()) {
            continue;
        }
        for file in batch {
            match run(std::slice::from_ref(file)) {
                Ok(Ran::Finished(o)) if o.status.success() => {}
                Ok(Ran::Finished(o)) => rejected.push((file.clone(), String::from_utf8_lossy(&o.stderr).into_owned())),
                Ok(Ran::Stopped) => rejected
                    .push((file.clone(), format!("{} did not finish within {ASSEMBLE_LIMIT:?}", ptxas.display()))),
                Err(e) => rejected.push((file.clone(), format!("{} did not run: {e}", ptxas.display()))),
            }
        }
    }
    rejected
}

/// How a bounded run ended.
enum Ran {
    /// On its own: its status and output (stdout is not kept).
    Finished(Output),
    /// Stopped at the limit.
    Stopped,
}

/// `command` run to its end, or killed once it has run for `limit`.
fn run_bounded(command: &mut Command, limit: Duration) -> std::io::Result<Ran> {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn()?;
    // Read on another thread, so that a full pipe cannot stall the child.
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).map(|_| bytes)
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            child.kill().ok();
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = reader.join().unwrap_or_else(|_| Ok(Vec::new()))?;
    Ok(match status {
        Some(status) => Ran::Finished(Output { status, stdout: Vec::new(), stderr }),
        None => Ran::Stopped,
    })
}

/// `libdevice.10.bc`: `GPU_LIBDEVICE` (a file), a CUDA toolkit, or the `nvidia-nvvm` wheel.
pub fn find_libdevice() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GPU_LIBDEVICE") {
        return Some(PathBuf::from(p));
    }
    let in_wheel = |root: &PathBuf| {
        ["nvidia/cu13/nvvm/libdevice/libdevice.10.bc", "nvidia/nvvm/libdevice/libdevice.10.bc"].map(|p| root.join(p))
    };
    let mut before_python = toolkit_roots()
        .into_iter()
        .map(|r| r.join("nvvm/libdevice/libdevice.10.bc"))
        .chain(tools_dir_roots().iter().flat_map(in_wheel).collect::<Vec<_>>());
    // Python is asked only when nothing before it has libdevice: every build looks for it
    // (the PTX cache's key names it).
    before_python
        .find(|p| p.is_file())
        .or_else(|| python_site_packages().iter().flat_map(in_wheel).find(|p| p.is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run past its limit is stopped, not waited for: a hung `ptxas` cannot stall the
    /// suite.
    #[test]
    fn a_run_past_its_limit_is_stopped() {
        let started = Instant::now();
        let ran = run_bounded(Command::new("sleep").arg("30"), Duration::from_millis(200)).unwrap();
        assert!(matches!(ran, Ran::Stopped));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    #[test]
    fn a_run_within_its_limit_gives_its_status_and_message() {
        let ran = run_bounded(Command::new("sh").args(["-c", "echo refused >&2; exit 3"]), Duration::from_secs(60));
        match ran.unwrap() {
            Ran::Finished(o) => assert_eq!((o.status.code(), o.stderr.as_slice()), (Some(3), &b"refused\n"[..])),
            Ran::Stopped => panic!("stopped within its limit"),
        }
    }

    #[test]
    fn releases_and_architectures() {
        assert!(release_supports((12, 9), "sm_70"));
        assert!(!release_supports((13, 5), "sm_70"));
        assert!(release_supports((13, 5), "sm_90"));
        assert!(release_supports((12, 0), "sm_90a"));
        assert!(!release_supports((11, 4), "sm_90"));
        assert!(!release_supports((13, 0), "compute_90"));
    }
}
