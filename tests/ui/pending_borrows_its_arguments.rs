use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

// The GPU may still read `a` while the call is pending: the borrow checker says so.
fn main() -> gpu_runtime::Result<()> {
    let stream = gpu_runtime::default_device()?.new_stream()?;
    let mut a = vec![1.0f32; 1000];
    let pending = add::launch(&stream, &a, 2.0)?;
    a[0] = 5.0;
    let _ = pending.wait()?;
    Ok(())
}
