use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn length(name: String) -> usize {
    name.len()
}

fn main() {}
