use gpu_runtime::{GpuType, gpu, kernel};

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    mass: f32,
}

#[kernel]
fn fields(ps: &mut [Particle], out: &mut [f32]) {
    let i = gpu::grid1();
    out[i] = ps[i].speed;
    let whole = ps[i].pos;
    ps[i].pos = [0.0; 3];
    ps[i].mass = 1u32;
}

#[kernel]
fn literal(ps: &mut [Particle]) {
    ps[0] = Particle { pos: [0.0; 2], mass: 1.0 };
    ps[1] = Particle { mass: 1.0 };
}

fn main() {}
