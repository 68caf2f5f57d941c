//! The seed example: Numba's `@vectorize(['float32(float32, float32)'], target='cuda')`,
//! in Rust. The function is compiled to PTX when this program is compiled.

use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn add_gpu(a: f32, b: f32) -> f32 {
    a + b
}

fn main() -> gpu_runtime::Result<()> {
    let a = [1.0f32, 2.0, 3.0];
    let b = [4.0f32, 5.0, 6.0];
    let result = match add_gpu(&a, &b) {
        Ok(result) => {
            let device = gpu_runtime::default_device()?;
            println!("ran on the GPU: {} (device {})", device.name(), device.ordinal());
            result
        }
        // CUDA if available, else the CPU: the same function, computed on the host.
        Err(e @ (gpu_runtime::Error::NoDriver | gpu_runtime::Error::NoDevice)) => {
            println!("no GPU found ({e})");
            println!("running add_gpu on the CPU instead");
            add_gpu::cpu(&a, &b)?
        }
        Err(e) => return Err(e),
    };
    println!("{result:?}");
    Ok(())
}
