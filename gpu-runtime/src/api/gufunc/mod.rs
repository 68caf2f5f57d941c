//! `#[guvectorize]`: generalized functions (NumPy's and Numba's gufuncs). Each parameter
//! has core dimensions named in the layout (`"(n),(n)->()"`); the dimensions in front of
//! them are loop dimensions, broadcast together by NumPy's rules, and the function runs
//! once per loop index on views of its arguments' cores.
//!
//! For each function the macro generates a type implementing [`GuFn`]: its layout, its
//! inputs' and outputs' types, the function at one loop index on the host, and the launch
//! of its kernel. Every call (`name(..)`, `on`, `sized`, `cpu`, `parallel`, `simulate`,
//! `along`, `device`) is one call of [`gu`] or [`gu_device`] here, which plan it
//! ([`GuPlan`]), lay its inputs out ([`GuIn`]), run it on the host or as the kernel, and
//! shape its outputs.

mod inputs;
mod layout;
mod outputs;
mod reduce;

pub use inputs::{GuArgs, GuLaid};
pub use layout::{GuLayout, GuPlan};
pub use outputs::{GuOut, GuOutArg, GuOutRef, GuOutputs};
pub use reduce::reduce_axes;

use super::host::host_map;
use crate::data::HostLoop;
use crate::driver::{Device, Stream, default_cpu, default_device, one_of};
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, Pending};
use crate::panics::first_panic;

/// The inputs of `F` laid out for a call, and readable on the host.
pub type Laid<'a, F> = <<F as GuFn>::Args<'a> as GuArgs<'a>>::Laid;
pub type Hosts<'h, 'a, F> = <Laid<'a, F> as GuLaid<'a>>::Hosts<'h>;
type HostOuts<F> = <<F as GuFn>::Outs as GuOutputs>::Host;
type DeviceOuts<F> = <<F as GuFn>::Outs as GuOutputs>::Device;

/// A generalized function as the generic calls see it: implemented by the macro for a
/// type of the function's module (`name::__Gufunc`).
pub trait GuFn: Sized + 'static {
    /// The function's layout.
    const LAYOUT: &'static GuLayout;
    /// Where `Where::Default` runs it: as the plain call (a function of `target = "cpu"`
    /// or `"parallel"` has `Where::Cpu` or `Where::Parallel`).
    const DEFAULT: Where<'static> = Where::Default;
    /// The arguments: `(GuRef<'a, A>, …)`, one per input.
    type Args<'a>: GuArgs<'a>;
    /// The outputs' element types: `(X,)`, `(X, Y)`, …
    type Outs: GuOutputs;
    /// The function's result at one loop index on the host: its return value, then one
    /// buffer per output it writes.
    type Value: Send;

    /// The function at loop index `t`, on the host.
    fn at<'h, 'a: 'h>(plan: &GuPlan, inputs: &Hosts<'h, 'a, Self>, t: usize) -> Self::Value;

    /// The outputs from the results of every loop index, in order.
    fn gather(values: Vec<Self::Value>) -> HostOuts<Self>;

    /// Launches the generated kernel as `config` says; the handle borrows the inputs and
    /// the outputs until it is waited for.
    fn launch<'b>(
        _plan: &GuPlan,
        _inputs: &'b Laid<'_, Self>,
        _outs: &'b mut DeviceOuts<Self>,
        _config: &LaunchConfig,
    ) -> Result<Pending<'b, ()>> {
        Err(no_kernel(Self::LAYOUT))
    }

    /// Runs the generated kernel in the simulator.
    fn simulate<'h, 'a: 'h>(
        _plan: &GuPlan,
        _inputs: &Hosts<'h, 'a, Self>,
        _outs: &mut HostOuts<Self>,
        _config: &LaunchConfig,
    ) -> Result<()> {
        Err(no_kernel(Self::LAYOUT))
    }
}

/// What a function without a kernel (a CPU target, or one whose kernel did not compile)
/// says when a call would run it.
fn no_kernel(layout: &GuLayout) -> Error {
    Error::NoKernel { function: layout.function }
}

/// A call of `F`, as `call` says (where it runs, the output core sizes of `name::sized`,
/// the axis of `name::along`), with the outputs in host memory, shaped.
pub fn gu<'a, F: GuFn>(call: Call<'_>, args: F::Args<'a>) -> Result<<F::Outs as GuOutputs>::Arrays> {
    let (plan, outs) = gu_call::<F>(call, args)?;
    F::Outs::arrays(F::LAYOUT, &plan, outs)
}

/// [`gu`], with the outputs left where they were computed (`name::device`): on the GPU
/// that ran the call, or in the CPU device's memory for a call on the host.
pub fn gu_device<'a, F: GuFn>(call: Call<'_>, args: F::Args<'a>) -> Result<<F::Outs as GuOutputs>::DeviceArrays> {
    let (plan, outs) = gu_call::<F>(call, args)?;
    F::Outs::device_arrays(F::LAYOUT, &plan, outs)
}

/// `name::into`: a call of `F` as `call` says, its results written into `outs` (host
/// arrays or views, device arrays), whose shapes must be the loop shape followed by each
/// output's core; a core dimension no input fixes takes its size from the output. Host
/// outputs are written only if the call succeeds; device arrays on the call's GPU are
/// written in place by the kernel (after a fault, partly).
pub fn gu_into<'a, 'o, F: GuFn>(
    call: Call<'_>,
    mut outs: <F::Outs as GuOutputs>::Refs<'o>,
    args: F::Args<'a>,
) -> Result<()> {
    let layout = F::LAYOUT;
    let function = layout.function;
    let (how, args) = placed::<F>(&call, args)?;
    let refs = F::Outs::ref_shapes(&outs);
    // The sizes of output core dimensions no input fixes, from the outputs.
    let mut sizes: Vec<(&str, usize)> = call.sizes.to_vec();
    for ((name, core), (shape, _)) in layout.outputs.iter().zip(&refs) {
        if shape.len() < core.len() {
            let core = core.iter().map(|d| d.to_string()).collect();
            return Err(Error::CoreRank { function, param: name, shape: shape.clone(), core });
        }
        let at = shape.len() - core.len();
        for (dim, &size) in core.iter().zip(&shape[at..]) {
            let fixed = layout.inputs.iter().any(|(_, c)| c.contains(dim)) || sizes.iter().any(|(d, _)| d == dim);
            if !fixed {
                sizes.push((dim, size));
            }
        }
    }
    let plan = GuPlan::new(layout, &args.shapes(), &sizes)?;
    for (k, (shape, _)) in refs.iter().enumerate() {
        let expected = outputs::out_shape(layout, &plan, k);
        if *shape != expected {
            return Err(Error::OutShape { function, out: layout.outputs[k].0, shape: shape.clone(), expected });
        }
    }
    let inputs = args.lay_out(layout, &plan)?;
    let arrays: Vec<(&'static str, Option<&Device>)> = layout
        .inputs
        .iter()
        .map(|(name, _)| *name)
        .zip(inputs.devices())
        .chain(layout.outputs.iter().map(|(name, _)| *name).zip(refs.iter().map(|(_, d)| d.as_ref())))
        .collect();
    let loops = plan.loops;
    match gu_run(how, function, &arrays)? {
        GuRun::Host(order) => {
            let hosts = inputs.on_host()?;
            let values = host_map(function, loops, order, |t| F::at(&plan, &hosts, t))?;
            F::Outs::write_host(&mut outs, F::gather(values))
        }
        GuRun::Gpu(device) => {
            let mut bufs = F::Outs::lend(layout, &plan, &device, &mut outs)?;
            let ran = match loops {
                0 => Ok(()),
                _ => inputs.upload(&device).and_then(|inputs| {
                    let config = gu_launch_config(loops, Some(&device));
                    F::launch(&plan, &inputs, &mut bufs, &config).and_then(Pending::wait).map_err(|e| {
                        gu_fault(e, || {
                            let hosts = inputs.on_host()?;
                            Ok(first_panic(function, loops, |t| F::at(&plan, &hosts, t)))
                        })
                    })
                }),
            };
            let back = F::Outs::give_back(&mut outs, bufs, ran.is_ok());
            ran.and(back)
        }
        GuRun::Simulate => {
            let hosts = inputs.on_host()?;
            let mut results = F::Outs::host_zeros(layout, &plan);
            if loops > 0 {
                let config = gu_launch_config(loops, None);
                if let Err(e) = F::simulate(&plan, &hosts, &mut results, &config) {
                    return Err(gu_fault(e, || Ok(first_panic(function, loops, |t| F::at(&plan, &hosts, t)))));
                }
            }
            F::Outs::write_host(&mut outs, results)
        }
    }
}

/// `name::launch`: a call of `F` queued on `stream` (the inputs copied to its device
/// first); the handle's `wait` gives the outputs in host memory, shaped. On the CPU
/// device the call runs at once and the handle holds its result.
pub fn gu_launch<'a, F: GuFn>(
    stream: &'a Stream,
    args: F::Args<'a>,
) -> Result<Pending<'a, <F::Outs as GuOutputs>::Arrays>>
where
    Laid<'a, F>: Send,
{
    let device = stream.device();
    if device.is_cpu() {
        return Ok(match gu::<F>(Where::On(device).into(), args) {
            Ok(arrays) => Pending::done(arrays),
            Err(e) => Pending::failed(e),
        });
    }
    let layout = F::LAYOUT;
    let function = layout.function;
    let plan = GuPlan::new(layout, &args.shapes(), &[])?;
    let inputs = args.lay_out(layout, &plan)?;
    let arrays: Vec<(&'static str, Option<&Device>)> =
        layout.inputs.iter().map(|(name, _)| *name).zip(inputs.devices()).collect();
    gu_run(Where::On(device), function, &arrays)?;
    let outs = F::Outs::device_zeros(layout, &plan, device)?;
    if plan.loops == 0 {
        return F::Outs::arrays(layout, &plan, GuOut::Device(outs)).map(Pending::done);
    }
    let inputs = inputs.upload(device)?;
    let config = gu_launch_config(plan.loops, Some(device)).stream(stream);
    let in_flight = InFlight::new(inputs, outs);
    // SAFETY: the kernel's handle borrows the boxed inputs and outputs, which `in_flight`
    // frees only after the handle is done with them (see `InFlight`).
    let kernel = unsafe { in_flight.launch(|inputs, outs| F::launch(&plan, inputs, outs, &config)) }?;
    Ok(kernel.then(move |done| {
        let (inputs, outs) = in_flight.into_inner();
        match done {
            Ok(()) => F::Outs::arrays(layout, &plan, GuOut::Device(outs)),
            Err(e) => Err(gu_fault(e, || {
                let hosts = inputs.on_host()?;
                Ok(first_panic(function, plan.loops, |t| F::at(&plan, &hosts, t)))
            })),
        }
    }))
}

/// The inputs and output buffers of a launch queued on a stream, boxed so that their
/// addresses stay put while the kernel's handle, which borrows them, is in flight. The
/// handle is made by [`InFlight::launch`] with its borrows' lifetime erased; the boxes are
/// freed only by [`InFlight::into_inner`], called after the handle is done (it is part of
/// what the handle's `wait` runs), or by `Drop`, which runs once the handle has waited
/// (dropping a handle waits for the queued work before its closures are dropped).
struct InFlight<L, O> {
    inputs: *mut L,
    outs: *mut O,
}

// SAFETY: the boxes are owned, as a `Box<L>` and a `Box<O>` would be.
unsafe impl<L: Send, O: Send> Send for InFlight<L, O> {}

impl<L, O> InFlight<L, O> {
    fn new(inputs: L, outs: O) -> Self {
        InFlight { inputs: Box::into_raw(Box::new(inputs)), outs: Box::into_raw(Box::new(outs)) }
    }

    /// The handle `launch` makes of the boxed inputs and outputs.
    ///
    /// # Safety
    /// The handle must be waited for or dropped before `self` is turned back into its
    /// parts or dropped: chain what uses them after it with [`Pending::then`].
    unsafe fn launch<'h>(
        &self,
        launch: impl for<'b> FnOnce(&'b L, &'b mut O) -> Result<Pending<'b, ()>>,
    ) -> Result<Pending<'h, ()>> {
        // SAFETY: both boxes are live (freed only by `into_inner` or `drop`), and nothing
        // else reaches them until the handle is done (the caller's promise).
        let (inputs, outs) = unsafe { (&*self.inputs, &mut *self.outs) };
        let pending = launch(inputs, outs)?;
        // SAFETY: a change of lifetime only: the borrows outlive the handle, as above.
        Ok(unsafe { std::mem::transmute::<Pending<'_, ()>, Pending<'h, ()>>(pending) })
    }

    fn into_inner(self) -> (L, O) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: made by `Box::into_raw` in `new`, and freed only here or in `drop`
        // (which `ManuallyDrop` keeps from running).
        unsafe { (*Box::from_raw(this.inputs), *Box::from_raw(this.outs)) }
    }
}

impl<L, O> Drop for InFlight<L, O> {
    fn drop(&mut self) {
        // SAFETY: as in `into_inner`.
        unsafe {
            drop(Box::from_raw(self.inputs));
            drop(Box::from_raw(self.outs));
        }
    }
}

/// Where a call of `F` runs (the function's default target for `Where::Default`), and its
/// arguments taken along `call.axis` (refused unless `F` is a reduction).
fn placed<'a, 'd, F: GuFn>(call: &Call<'d>, args: F::Args<'a>) -> Result<(Where<'d>, F::Args<'a>)> {
    let layout = F::LAYOUT;
    let how = if let Where::Default = call.how { F::DEFAULT } else { call.how };
    if call.axis.is_some() && !layout.is_reduction() {
        return Err(Error::NotAReduction { function: layout.function, layout: layout.text });
    }
    Ok((how, args.along(layout, call.axis)?))
}

/// Plans the call, lays its inputs out and runs it: on the host (a loop over the loop
/// indices), as the generated kernel on a GPU, or in the simulator.
fn gu_call<'a, F: GuFn>(call: Call<'_>, args: F::Args<'a>) -> Result<(GuPlan, GuOut<F::Outs>)> {
    let layout = F::LAYOUT;
    let function = layout.function;
    let (how, args) = placed::<F>(&call, args)?;
    let plan = GuPlan::new(layout, &args.shapes(), call.sizes)?;
    let inputs = args.lay_out(layout, &plan)?;
    let arrays: Vec<(&'static str, Option<&Device>)> =
        layout.inputs.iter().map(|(name, _)| *name).zip(inputs.devices()).collect();
    let loops = plan.loops;
    let outs = match gu_run(how, function, &arrays)? {
        GuRun::Host(order) => {
            let hosts = inputs.on_host()?;
            let values = host_map(function, loops, order, |t| F::at(&plan, &hosts, t))?;
            GuOut::Host(F::gather(values))
        }
        GuRun::Gpu(device) => {
            let mut outs = F::Outs::device_zeros(layout, &plan, &device)?;
            if loops > 0 {
                let inputs = inputs.upload(&device)?;
                let config = gu_launch_config(loops, Some(&device));
                if let Err(e) = F::launch(&plan, &inputs, &mut outs, &config).and_then(Pending::wait) {
                    return Err(gu_fault(e, || {
                        let hosts = inputs.on_host()?;
                        Ok(first_panic(function, loops, |t| F::at(&plan, &hosts, t)))
                    }));
                }
            }
            GuOut::Device(outs)
        }
        GuRun::Simulate => {
            let hosts = inputs.on_host()?;
            let mut outs = F::Outs::host_zeros(layout, &plan);
            if loops > 0 {
                let config = gu_launch_config(loops, None);
                if let Err(e) = F::simulate(&plan, &hosts, &mut outs, &config) {
                    return Err(gu_fault(e, || Ok(first_panic(function, loops, |t| F::at(&plan, &hosts, t)))));
                }
            }
            GuOut::Host(outs)
        }
    };
    Ok((plan, outs))
}

/// A thread fault of the generated kernel, as the host reports it: the first loop index
/// at which the function on the host panics, with Rust's message (the same error a call
/// on the CPU gives), found by `rerun` (`first_panic` over the inputs, brought to the
/// host if they are not there). `rerun` runs for a thread fault only: any other error
/// (out of memory, a driver error) is returned as it is, without copying the inputs; so
/// is the kernel's fault where the host does not fail or cannot rerun.
fn gu_fault(fault: Error, rerun: impl FnOnce() -> Result<Option<Error>>) -> Error {
    if !matches!(fault, Error::ThreadFault { .. }) {
        return fault;
    }
    match rerun() {
        Ok(Some(first)) => first,
        _ => fault,
    }
}

/// The launch of the generated kernel on `device` (`None`: in the simulator): one loop
/// index a thread, in blocks of 256 threads ([`gu_threads`] fewer where that leaves
/// multiprocessors idle), at most 65 535 blocks (a grid-stride loop over the rest), or at
/// most `GPU_VECTORIZE_GUFUNC_BLOCKS_PER_SM` blocks per multiprocessor. The simulator runs
/// blocks of 256 and at most `SIMULATED_BLOCKS` blocks, so that its threads take the
/// grid-stride loop past 512 loop indices, as a GPU's do past many more.
fn gu_launch_config(loops: usize, device: Option<&Device>) -> LaunchConfig {
    let Some(device) = device else {
        return LaunchConfig::new(gu_blocks(loops, 256, Some(SIMULATED_BLOCKS)) as u32, 256u32);
    };
    let sms = device.sm_count() as usize;
    let cap = crate::launch::gufunc_blocks_per_sm().map(|per_sm| per_sm.saturating_mul(sms));
    let threads = gu_threads(loops, sms);
    LaunchConfig::new(gu_blocks(loops, threads, cap) as u32, threads).device(device)
}

/// The most blocks a simulated gufunc launch uses.
const SIMULATED_BLOCKS: usize = 2;

/// Threads a block for `loops` loop indices on `sms` multiprocessors: 256, or as few
/// warps as give every multiprocessor two blocks, for few loop indices (few long cores,
/// where each thread reads a long row and blocks of 256 would leave most multiprocessors
/// without one: 16 000 loop indices are 63 such blocks for the H200's 132).
fn gu_threads(loops: usize, sms: usize) -> u32 {
    let warps = loops.div_ceil(2 * sms.max(1)).div_ceil(32);
    (warps * 32).clamp(32, 256) as u32
}

/// Blocks of `threads` for `loops` loop indices: one index a thread, at most 65 535
/// blocks and at most `cap`, at least one.
fn gu_blocks(loops: usize, threads: u32, cap: Option<usize>) -> usize {
    loops.div_ceil(threads as usize).min(65_535).min(cap.unwrap_or(usize::MAX)).max(1)
}

/// Where a call runs, as `name::with` (of a `#[guvectorize]` function) and
/// `name::reduce_axis_with` (of a reducible `#[vectorize]` one) take it.
#[derive(Clone, Copy, Debug, Default)]
pub enum Where<'d> {
    /// Where the plain call runs: the device of its device arrays, else the default device
    /// (a GPU, or the CPU device); for a function of `target = "cpu"` or `"parallel"`, on
    /// the CPU as its target says.
    #[default]
    Default,
    /// On this device (a GPU, or `Device::cpu()`), as `name::on`.
    On(&'d Device),
    /// On the CPU, one loop index after another, as `name::cpu`.
    Cpu,
    /// On the CPU, split over rayon's threads, as `name::parallel`.
    Parallel,
    /// The generated kernel in the simulator, as `name::simulate`. A function compiled for
    /// the host only (`target = "cpu"` or `"parallel"`) has none: `Error::NoKernel`.
    Simulate,
}

impl<'d> Where<'d> {
    /// A call here, with the sizes of output core dimensions no input fixes (as
    /// `name::sized`): `Where::Cpu.sized(&[("m", 4)])`.
    pub fn sized(self, sizes: &'d [(&'d str, usize)]) -> Call<'d> {
        Call::from(self).sized(sizes)
    }

    /// A call here, with every input's core taken along `axis` (as `name::along`, for a
    /// reduction's layout): `Where::Simulate.along(0)`.
    pub fn along(self, axis: usize) -> Call<'d> {
        Call::from(self).along(axis)
    }
}

/// How `name::with` calls a `#[guvectorize]` function: where ([`Where`]), with which
/// output core sizes, along which axis. Made from a `Where`: `Where::Cpu.into()`,
/// `Where::On(&gpu).sized(&[("m", 4)])`, `Where::Parallel.along(1)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Call<'d> {
    how: Where<'d>,
    sizes: &'d [(&'d str, usize)],
    axis: Option<usize>,
}

impl<'d> Call<'d> {
    /// The sizes of output core dimensions that no input fixes: `&[("m", 4)]`.
    pub fn sized(self, sizes: &'d [(&'d str, usize)]) -> Call<'d> {
        Call { sizes, ..self }
    }

    /// Every input's core taken along `axis` (NumPy's `axis=`) instead of the last, for a
    /// reduction's layout (inputs of at most one core dimension, `()` outputs); another
    /// layout is `Error::NotAReduction`.
    pub fn along(self, axis: usize) -> Call<'d> {
        Call { axis: Some(axis), ..self }
    }
}

impl<'d> From<Where<'d>> for Call<'d> {
    fn from(how: Where<'d>) -> Call<'d> {
        Call { how, sizes: &[], axis: None }
    }
}

/// Where a call of a `#[guvectorize]` function runs.
#[derive(Clone, Debug)]
enum GuRun {
    Host(HostLoop),
    /// The generated kernel, on this GPU.
    Gpu(Device),
    Simulate,
}

/// The device of a call: the device it names, else its device arrays', else the default
/// (the CPU device and the CPU targets run on the host, the rest on a GPU). Arrays on
/// another device than the call's are `Error::DeviceMismatch`; the CPU targets and the
/// simulator read any array (a GPU's is copied to the host, as `name::cpu` of a
/// vectorized function does).
fn gu_run(how: Where<'_>, function: &'static str, arrays: &[(&'static str, Option<&Device>)]) -> Result<GuRun> {
    let mut on: Vec<(&'static str, &Device)> = Vec::new();
    match how {
        Where::Cpu => return Ok(GuRun::Host(HostLoop::Sequential)),
        Where::Parallel => return Ok(GuRun::Host(HostLoop::Parallel)),
        Where::Simulate => return Ok(GuRun::Simulate),
        Where::On(d) => on.push(("device", d)),
        Where::Default => {}
    }
    on.extend(arrays.iter().filter_map(|&(name, d)| Some((name, d?))));
    let device = match one_of(function, &on)? {
        Some(d) => d.clone(),
        None => match default_cpu() {
            Some(cpu) => cpu,
            None => default_device()?,
        },
    };
    Ok(if device.is_cpu() { GuRun::Host(HostLoop::Parallel) } else { GuRun::Gpu(device) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_has_a_block_per_256_loop_indices_within_its_caps() {
        assert_eq!(gu_blocks(0, 256, None), 1);
        assert_eq!(gu_blocks(256, 256, None), 1);
        assert_eq!(gu_blocks(257, 256, None), 2);
        assert_eq!(gu_blocks(1 << 40, 256, None), 65_535);
        assert_eq!(gu_blocks(1_000_000, 256, Some(264)), 264);
        assert_eq!(gu_blocks(1000, 256, Some(264)), 4);
        assert_eq!(gu_blocks(1000, 256, Some(0)), 1);
        assert_eq!(gu_blocks(16_000, 64, Some(264)), 250);
        let simulated = gu_launch_config(10_000, None);
        assert_eq!((simulated.grid.x, simulated.block.x), (SIMULATED_BLOCKS as u32, 256));
        assert!(simulated.device.is_none());
    }

    #[test]
    fn few_loop_indices_take_smaller_blocks_over_every_multiprocessor() {
        // Many loop indices: blocks of 256 (two a multiprocessor and more).
        assert_eq!(gu_threads(1_000_000, 132), 256);
        assert_eq!(gu_threads(2 * 132 * 256, 132), 256);
        // Fewer: whole warps, as few as give each of 132 multiprocessors two blocks.
        assert_eq!(gu_threads(2 * 132 * 256 - 1, 132), 256);
        assert_eq!(gu_threads(2 * 132 * 224, 132), 224);
        assert_eq!(gu_threads(16_000, 132), 64);
        assert_eq!(gu_threads(1000, 132), 32);
        assert_eq!(gu_threads(0, 132), 32);
        assert_eq!(gu_threads(1 << 40, 0), 256);
        assert_eq!(gu_threads(100, 0), 64);
    }
}
