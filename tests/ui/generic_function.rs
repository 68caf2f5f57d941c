use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn twice<T: Copy>(x: T) -> T {
    x
}

fn main() {}
