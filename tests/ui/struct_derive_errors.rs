use gpu_runtime::GpuType;

#[derive(Clone, Copy, Debug, GpuType)]
struct NotReprC {
    x: f32,
}

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C, packed)]
struct Packed {
    x: f32,
}

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct HoldsARef {
    x: &'static f32,
}

#[derive(Clone, Debug, GpuType)]
#[repr(C)]
struct HoldsAString {
    name: String,
}

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct HoldsATuple {
    t: (f32, f32),
}

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct Padded {
    flag: bool,
    x: f32,
}

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct Tuple(f32, f32);

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct Generic<T> {
    x: T,
}

#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Plain {
    x: f32,
}

#[derive(Clone, Copy, Debug, GpuType)]
#[repr(C)]
struct HoldsAPlainStruct {
    p: Plain,
}

fn main() {}
