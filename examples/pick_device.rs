//! PyTorch's `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`, in
//! Rust: one function, run on the GPU when there is one and on the CPU otherwise, saying
//! where it ran.

use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn softplus(x: f32) -> f32 {
    if x > 20.0 { x } else { x.exp().ln_1p() }
}

fn main() -> gpu_runtime::Result<()> {
    let x: Vec<f32> = (-5..=5).map(|i| i as f32).collect();
    let (y, place) = if gpu_runtime::is_available() {
        let device = gpu_runtime::default_device()?;
        (softplus(&x)?, format!("the GPU: {} (device {})", device.name(), device.ordinal()))
    } else {
        (softplus::cpu(&x)?, "the CPU (no GPU available)".to_string())
    };
    println!("softplus ran on {place}");
    println!("{y:?}");
    Ok(())
}
