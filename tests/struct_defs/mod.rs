//! The user structs and kernels of `tests/structs.rs` (simulator, CPU device) and
//! `tests/gpu_structs.rs` (the GPU), with the host's own computation of each.
#![allow(dead_code)]

use gpu_runtime::{Complex, GpuType, device, gpu, guvectorize, kernel, vectorize};

// The example's kernel, from its own source.
#[path = "../../examples/nbody.rs"]
pub mod nbody;

/// The example: three positions, three velocities and a mass (`id` counts steps).
#[derive(Clone, Copy, Debug, PartialEq, GpuType)]
#[repr(C)]
pub struct Particle {
    pub pos: [f32; 3],
    pub vel: [f32; 3],
    pub mass: f32,
    pub id: u32,
}

/// A struct of every kind of field: a nested struct, a complex number, an array of small
/// integers and a `bool` (padded by hand to the alignment of its `f64`).
#[derive(Clone, Copy, Debug, PartialEq, GpuType)]
#[repr(C)]
pub struct Tagged {
    pub weight: f64,
    pub p: Particle,
    pub z: Complex<f32>,
    pub hits: [u16; 4],
    pub on: bool,
    pub pad: [u8; 7],
}

pub fn particles(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| {
            let x = i as f32;
            Particle {
                pos: [x, 0.5 * x, -x],
                vel: [1.0 - 0.25 * x, 0.125 * x, 2.0],
                mass: 1.0 + (i % 7) as f32,
                id: i as u32,
            }
        })
        .collect()
}

#[device]
pub fn drift(mut p: Particle, dt: f32) -> Particle {
    for k in 0..3 {
        p.pos[k] += p.vel[k] * dt;
    }
    p
}

/// One Euler step per particle, through a device function that takes and returns a
/// struct, then a field updated in place.
#[kernel]
pub fn step(ps: &mut [Particle], dt: f32) {
    let i = gpu::grid1();
    if i < ps.len() {
        ps[i] = drift(ps[i], dt);
        ps[i].id += 1;
    }
}

pub fn step_host(ps: &mut [Particle], dt: f32) {
    for p in ps {
        for (x, v) in p.pos.iter_mut().zip(p.vel) {
            *x += v * dt;
        }
        p.id += 1;
    }
}

/// Field reads, a struct literal with array fields and a nested struct, parts of a local
/// struct written, then the whole stored and parts of the stored element written.
#[kernel]
pub fn tag(ps: &[Particle], out: &mut [Tagged], mass: &mut [f32]) {
    let i = gpu::grid1();
    if i < ps.len() {
        let p = ps[i];
        mass[i] = p.mass + ps[i].pos[2];
        let mut t = Tagged {
            weight: p.mass as f64 * 2.0,
            p,
            z: Complex::new(p.vel[0], p.vel[1]),
            hits: [0; 4],
            on: p.id % 2 == 0,
            pad: [0; 7],
        };
        t.hits[(p.id % 4) as usize] = 7;
        t.z = t.z * t.z;
        t.p.pos[0] -= 1.0;
        out[i] = t;
        out[i].p.vel[1] -= 1.0;
        out[i].on = !out[i].on;
    }
}

pub fn tag_host(ps: &[Particle]) -> (Vec<Tagged>, Vec<f32>) {
    let mut out = Vec::new();
    let mut mass = Vec::new();
    for &p in ps {
        mass.push(p.mass + p.pos[2]);
        let mut t = Tagged {
            weight: p.mass as f64 * 2.0,
            p,
            z: Complex::new(p.vel[0], p.vel[1]),
            hits: [0; 4],
            on: p.id % 2 == 0,
            pad: [0; 7],
        };
        t.hits[(p.id % 4) as usize] = 7;
        t.z = t.z * t.z;
        t.p.pos[0] -= 1.0;
        t.p.vel[1] -= 1.0;
        t.on = !t.on;
        out.push(t);
    }
    (out, mass)
}

/// A struct of one 16-byte word, passed by value as a scalar is.
#[derive(Clone, Copy, Debug, PartialEq, GpuType)]
#[repr(C)]
pub struct Pull {
    pub g: [f32; 3],
    pub steps: u32,
}

/// Structs as kernel parameters by value: `pull` fits one word, `t` (56 bytes) does not,
/// and the scalar after them must still be read from its own slot.
#[kernel]
pub fn pulled(ps: &mut [Particle], pull: Pull, t: Tagged, dt: f32) {
    let i = gpu::grid1();
    if i < ps.len() {
        for k in 0..3 {
            ps[i].vel[k] += pull.g[k] * dt * t.p.mass;
        }
        ps[i].id += pull.steps + t.hits[i % 4] as u32;
        if t.on {
            ps[i].mass = t.weight as f32 + t.z.im - t.p.pos[i % 3];
        }
    }
}

pub fn pulled_host(ps: &mut [Particle], pull: Pull, t: Tagged, dt: f32) {
    for (i, p) in ps.iter_mut().enumerate() {
        for k in 0..3 {
            p.vel[k] += pull.g[k] * dt * t.p.mass;
        }
        p.id += pull.steps + t.hits[i % 4] as u32;
        if t.on {
            p.mass = t.weight as f32 + t.z.im - t.p.pos[i % 3];
        }
    }
}

/// The parameters `pulled`'s tests pass.
pub fn pull_args() -> (Pull, Tagged) {
    let p = particles(3)[2];
    let t = Tagged { weight: 2.5, p, z: Complex::new(0.25, -4.0), hits: [1, 20, 300, 4000], on: true, pad: [0; 7] };
    (Pull { g: [0.0, -9.75, 0.5], steps: 3 }, t)
}

/// Four threads write four different fields of one element at once: each write lands, on
/// the GPU and in the simulator (which stores only the field's bytes, and whose race check
/// sees no race between different fields).
#[kernel]
pub fn split_writes(ps: &mut [Particle]) {
    let i = gpu::grid1();
    let e = i / 4;
    if e < ps.len() {
        let v = i as f32;
        match i % 4 {
            0 => ps[e].mass = v,
            1 => ps[e].id = i as u32,
            2 => ps[e].pos[0] = v,
            _ => ps[e].vel[2] = v,
        }
    }
}

pub fn split_writes_host(ps: &mut [Particle]) {
    for (e, p) in ps.iter_mut().enumerate() {
        p.mass = (4 * e) as f32;
        p.id = (4 * e + 1) as u32;
        p.pos[0] = (4 * e + 2) as f32;
        p.vel[2] = (4 * e + 3) as f32;
    }
}

/// Two threads write the same field of one element: a race.
#[kernel]
pub fn same_field(ps: &mut [Particle]) {
    let i = gpu::grid1();
    if i < 2 {
        ps[0].mass = i as f32;
    }
}

/// An index of an array field past its end: a fault with the index and the length.
#[kernel]
pub fn past_the_field(ps: &mut [Particle], k: usize) {
    let i = gpu::grid1();
    if i < ps.len() {
        ps[i].vel[k] = 0.0;
    }
}

/// A literal written out of the definition's order, whose values read `a` at `at + 2`,
/// `at + 1` and `at`: Rust evaluates them as written, so with `at` the last index the first
/// read past the end is at `at + 2` (in the definition's order it would be at `at + 1`).
#[kernel]
pub fn reorder(a: &[f32], out: &mut [Particle], at: usize) {
    if gpu::grid1() == 0 {
        out[0] = Particle { id: at as u32, mass: a[at + 2], vel: [a[at + 1]; 3], pos: [a[at], 0.0, 0.0] };
    }
}

/// A struct of one word (12 bytes), broadcast by value where a vectorized function takes
/// one.
#[derive(Clone, Copy, Debug, PartialEq, GpuType)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

/// A struct element in, a scalar out: an array field read in a loop.
#[vectorize]
pub fn kinetic(p: Particle) -> f32 {
    let mut v2 = 0.0f32;
    for k in 0..3 {
        v2 += p.vel[k] * p.vel[k];
    }
    0.5 * p.mass * v2
}

/// A struct in and out, through a device function, with a small struct and a scalar
/// broadcast: fields of the copy written in place.
#[vectorize]
pub fn push(p: Particle, wind: Vec3, dt: f32) -> Particle {
    let mut q = drift(p, dt);
    q.vel[0] += wind.x * dt;
    q.vel[1] += wind.y * dt;
    q.vel[2] += wind.z * dt;
    q.id += 1;
    q
}

/// A struct of two words broadcast by value (`origin`), and a tuple result of a struct
/// built by a literal and a scalar.
#[vectorize]
pub fn relative(p: Particle, origin: Particle) -> (Vec3, f32) {
    let d = Vec3 { z: p.pos[2] - origin.pos[2], x: p.pos[0] - origin.pos[0], y: p.pos[1] - origin.pos[1] };
    (d, p.mass / origin.mass)
}

/// Every kind of field of `Tagged` read and written: a nested struct's field, a complex
/// number (updated in place by `op=` with a complex and a real operand), a `bool`, an
/// element of a `u16` array.
#[vectorize]
pub fn retag(t: Tagged, k: usize) -> Tagged {
    let mut u = t;
    u.on = !t.on;
    u.hits[k] = t.hits[k] + 1;
    u.z *= t.z;
    u.z -= 0.5;
    u.p.mass = t.weight as f32;
    u.weight = t.p.pos[0] as f64;
    u
}

/// What a fold keeps of a set of values: the least (and the first index holding it), the
/// greatest, how many, and a sum of integers. Merging two is associative and
/// commutative, so any order of folds gives the same value, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, GpuType)]
#[repr(C)]
pub struct Extremes {
    pub lo: f32,
    pub hi: f32,
    pub at_lo: u32,
    pub count: u32,
    pub total: u64,
}

/// A reduction over structs (24 bytes, more than one word), with a struct identity.
#[vectorize(identity = Extremes { lo: f32::INFINITY, hi: f32::NEG_INFINITY, at_lo: u32::MAX, count: 0, total: 0 })]
pub fn merge(a: Extremes, b: Extremes) -> Extremes {
    let b_first = b.lo < a.lo || (b.lo == a.lo && b.at_lo < a.at_lo);
    Extremes {
        lo: if b_first { b.lo } else { a.lo },
        hi: a.hi.max(b.hi),
        at_lo: if b_first { b.at_lo } else { a.at_lo },
        count: a.count + b.count,
        total: a.total + b.total,
    }
}

/// One `Extremes` per value of a sequence with repeated least values (so the index of the
/// first one decides).
pub fn extremes(n: usize) -> Vec<Extremes> {
    (0..n)
        .map(|i| {
            let x = ((i * 7919) % 1013) as f32 * 0.5 - 100.0;
            Extremes { lo: x, hi: x, at_lo: i as u32, count: 1, total: (i as u64) * (i as u64) }
        })
        .collect()
}

/// `extremes(n)` folded in order on the host.
pub fn extremes_host(n: usize) -> Extremes {
    let xs = extremes(n);
    xs[1..].iter().fold(xs[0], |a, &b| merge::scalar(a, b))
}

/// `tagged(n)`: `Tagged` values with every field set from the index.
pub fn tagged(n: usize) -> Vec<Tagged> {
    particles(n)
        .into_iter()
        .enumerate()
        .map(|(i, p)| Tagged {
            weight: i as f64 * 0.25,
            p,
            z: Complex::new(i as f32, 1.0 - i as f32),
            hits: [i as u16, 2, 3, 4],
            on: i % 3 == 0,
            pad: [0; 7],
        })
        .collect()
}

/// The centre of mass of each row of particles: a core of structs in, a struct returned.
#[guvectorize("(n)->()")]
pub fn centre(ps: &[Particle]) -> Vec3 {
    let mut m = 0.0f32;
    let mut c = Vec3 { x: 0.0, y: 0.0, z: 0.0 };
    for i in 0..ps.len() {
        m += ps[i].mass;
        c.x += ps[i].mass * ps[i].pos[0];
        c.y += ps[i].mass * ps[i].pos[1];
        c.z += ps[i].mass * ps[i].pos[2];
    }
    Vec3 { x: c.x / m, y: c.y / m, z: c.z / m }
}

/// Each row of particles moved through a device function, a wind per row (or one for all)
/// added: a struct scalar input and a written core of structs.
#[guvectorize("(n),()->(n)")]
pub fn blow(ps: &[Particle], wind: Vec3, out: &mut [Particle]) {
    for i in 0..ps.len() {
        let mut q = drift(ps[i], 0.5);
        q.vel[0] += wind.x;
        q.vel[1] += wind.y;
        q.vel[2] += wind.z;
        out[i] = q;
    }
}

/// `centre` and `blow` in plain Rust over rows of `n` particles.
pub fn centre_host(rows: &[Particle], n: usize) -> Vec<Vec3> {
    rows.chunks(n).map(centre::scalar).collect()
}

/// Structs of another crate (`gpu-test-shapes`), named through a `use` and by a full path.
pub mod across_crates {
    use gpu_runtime::{gpu, kernel, vectorize};
    pub use gpu_test_shapes::geo::{Point, Segment, segments};

    /// A struct of the other crate in (one that holds another of its structs), one out.
    #[vectorize]
    pub fn midpoint(s: Segment) -> Point {
        Point { x: 0.5 * (s.a.x + s.b.x), y: 0.5 * (s.a.y + s.b.y) }
    }

    /// A slice of the other crate's structs written in place, one by value.
    #[kernel]
    pub fn stretch(ss: &mut [Segment], by: gpu_test_shapes::geo::Point) {
        let i = gpu::grid1();
        if i < ss.len() {
            ss[i].b.x += by.x;
            ss[i].b.y += by.y;
            ss[i].weight *= 2.0;
        }
    }

    pub fn stretch_host(ss: &mut [Segment], by: Point) {
        for s in ss {
            s.b.x += by.x;
            s.b.y += by.y;
            s.weight *= 2.0;
        }
    }
}
