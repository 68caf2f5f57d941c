//! `cargo run --bin gpu-info [-- --json]`: the NVIDIA driver, every CUDA device with its
//! memory, and a self-test per device that runs a vectorized kernel, checks its result and
//! reports the bandwidth it reached. Without a driver or a device it says what is missing
//! and exits with status 2; a failed self-test exits with 1.

use std::process::ExitCode;
use std::time::Instant;

use gpu_runtime::{Device, DeviceInfo, DeviceVec, Error, vectorize};

#[vectorize(target = "cuda")]
fn self_test(a: f32, b: f32) -> f32 {
    a * 2.0 + b
}

struct SelfTest {
    ok: bool,
    elements: usize,
    gbps: f64,
    detail: String,
}

fn run_self_test(device: &Device) -> gpu_runtime::Result<SelfTest> {
    device.scope(|| {
        let n = 1usize << 26;
        let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let (da, db) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&b)?);
        let mut out = DeviceVec::<f32>::zeros(n)?;
        self_test::into(&mut out, &da, &db)?;
        device.synchronize()?;
        let reps = 10;
        let t = Instant::now();
        for _ in 0..reps {
            self_test::into(&mut out, &da, &db)?;
        }
        device.synchronize()?;
        let per_call = t.elapsed().as_secs_f64() / reps as f64;
        let got = out.to_vec()?;
        let bad = (0..n).find(|&i| got[i] != self_test::scalar(a[i], b[i]));
        Ok(SelfTest {
            ok: bad.is_none(),
            elements: n,
            gbps: 12.0 * n as f64 / per_call / 1e9,
            detail: match bad {
                None => "every element matches the CPU".to_string(),
                Some(i) => format!("element {i}: GPU {} but CPU {}", got[i], self_test::scalar(a[i], b[i])),
            },
        })
    })
}

/// The kernel module's version line, where Linux shows it.
fn kernel_driver() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    let line = text.lines().next()?;
    let version =
        line.split_whitespace().find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))?;
    Some(version.to_string())
}

fn json_str(s: &str) -> String {
    let escaped: String = s
        .chars()
        .flat_map(|c| match c {
            '"' => "\\\"".chars().collect::<Vec<_>>(),
            '\\' => "\\\\".chars().collect(),
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

fn explain(e: &Error) -> &'static str {
    match e {
        Error::NoDriver => {
            "libcuda.so, the NVIDIA driver's CUDA library, is not installed or not on the loader's path: install the NVIDIA driver (and on a container host, the NVIDIA container toolkit)"
        }
        Error::NoDevice => {
            "the driver sees no CUDA device: check `nvidia-smi`, and that CUDA_VISIBLE_DEVICES does not hide every device"
        }
        Error::DriverTooOld { .. } => "update the NVIDIA driver",
        _ => "see the error above",
    }
}

fn main() -> ExitCode {
    let json = std::env::args().any(|a| a == "--json");
    let listed = gpu_runtime::driver_version().and_then(|v| gpu_runtime::devices().map(|d| (v, d)));
    let (cuda, infos): ((u32, u32), Vec<DeviceInfo>) = match listed {
        Ok(x) => x,
        Err(e) => {
            if json {
                println!(
                    "{{\"ok\": false, \"error\": {}, \"fix\": {}}}",
                    json_str(&e.to_string()),
                    json_str(explain(&e))
                );
            } else {
                println!("no GPU to use: {e}");
                println!("what to do: {}", explain(&e));
                println!(
                    "vectorized functions still run on the CPU: `name::cpu(...)`, or `target = \"cpu\"` / `\"parallel\"`"
                );
            }
            return ExitCode::from(2);
        }
    };
    let kernel_driver = kernel_driver();
    let mut all_ok = true;
    let mut rows = Vec::new();
    for info in &infos {
        let test = Device::cuda(info.ordinal).and_then(|d| run_self_test(&d));
        all_ok &= matches!(&test, Ok(t) if t.ok);
        rows.push((info, test));
    }
    if json {
        let devices: Vec<String> = rows
            .iter()
            .map(|(i, t)| {
                let test = match t {
                    Ok(t) => format!(
                        "{{\"ok\": {}, \"elements\": {}, \"gbps\": {:.1}, \"detail\": {}}}",
                        t.ok,
                        t.elements,
                        t.gbps,
                        json_str(&t.detail)
                    ),
                    Err(e) => format!("{{\"ok\": false, \"error\": {}}}", json_str(&e.to_string())),
                };
                format!(
                    "{{\"ordinal\": {}, \"name\": {}, \"compute_capability\": \"{}.{}\", \"sm_count\": {}, \"total_memory\": {}, \"free_memory\": {}, \"self_test\": {}}}",
                    i.ordinal,
                    json_str(&i.name),
                    i.compute_capability.0,
                    i.compute_capability.1,
                    i.sm_count,
                    i.total_memory,
                    i.free_memory,
                    test
                )
            })
            .collect();
        println!(
            "{{\"ok\": {all_ok}, \"driver\": {}, \"cuda\": \"{}.{}\", \"devices\": [{}]}}",
            kernel_driver.as_deref().map_or("null".to_string(), json_str),
            cuda.0,
            cuda.1,
            devices.join(", ")
        );
    } else {
        println!(
            "NVIDIA driver {} (CUDA {}.{})",
            kernel_driver.as_deref().unwrap_or("(version not shown by this system)"),
            cuda.0,
            cuda.1
        );
        for (i, t) in &rows {
            let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
            println!(
                "device {}: {} (compute capability {}.{}, {} SMs), {:.1} GiB memory, {:.1} GiB free",
                i.ordinal,
                i.name,
                i.compute_capability.0,
                i.compute_capability.1,
                i.sm_count,
                gib(i.total_memory),
                gib(i.free_memory)
            );
            match t {
                Ok(t) => println!(
                    "  self-test: {} ({} elements; {}), {:.0} GB/s",
                    if t.ok { "passed" } else { "FAILED" },
                    t.elements,
                    t.detail,
                    t.gbps
                ),
                Err(e) => println!("  self-test: FAILED: {e}"),
            }
        }
    }
    if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
