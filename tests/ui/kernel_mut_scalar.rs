use gpu_runtime::kernel;

#[kernel]
fn bump(x: &mut f32) {
    *x += 1.0;
}

fn main() {}
