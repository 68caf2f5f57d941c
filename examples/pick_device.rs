//! PyTorch's `device = "cuda" if torch.cuda.is_available() else "cpu"`, then one code path
//! whatever the answer: `Device::best()` is the first GPU where there is one, else the CPU,
//! and every call below (a vectorized function, an explicit kernel, a reduction) runs on
//! the device that holds its data.

use gpu_runtime::{Device, DeviceVec, gpu, kernel, vectorize};

#[vectorize]
fn softplus(x: f32) -> f32 {
    if x > 20.0 { x } else { x.exp().ln_1p() }
}

#[vectorize(identity = 0.0)]
fn sum(a: f32, b: f32) -> f32 {
    a + b
}

/// `y = a * y + b`, in place.
#[kernel]
pub fn scale_shift(a: f32, b: f32, y: &mut [f32]) {
    let mut i = gpu::grid1();
    while i < y.len() {
        y[i] = a * y[i] + b;
        i += gpu::gridsize1();
    }
}

fn main() -> gpu_runtime::Result<()> {
    let device = Device::best()?;
    println!("running on {}", device.name());

    let x: Vec<f32> = (0..1_000_000).map(|i| ((i % 2001) as f32 - 1000.0) / 100.0).collect();
    let x = DeviceVec::from_slice_on(&device, &x)?;
    let mut y = softplus::device(&x)?; // on `device`, where `x` is
    scale_shift::launch(64u32, 256u32, 0.5f32, -1.0f32, &mut y)?;
    let total = sum::reduce(&y)?;

    println!("y[..4] = {:?}", y.slice(..4)?.to_vec()?);
    println!("sum(y) = {total:.1} over {} elements", y.len());
    Ok(())
}
