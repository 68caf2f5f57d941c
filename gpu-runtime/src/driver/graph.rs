//! CUDA graphs at the driver's level: a graph being recorded (kernel nodes in a chain,
//! each with the fault word or record it reports through), then instantiated for replay,
//! or the parameters of an instantiated graph's nodes set anew. What a node computes is
//! the launch layer's business; here are handles, memory and order.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUdeviceptr, CUfunction, CUgraph, CUgraphExec, CUgraphNode};
use cudarc::driver::{CudaStream, result};

use super::{Device, FaultKind, PinnedBuffer, Uses, report_drop_error};
use crate::error::{Error, Result};

/// The bytes of device memory a graph has for the fault words and records of its calls.
const FAULT_BYTES: usize = 64 << 10;

/// What a kernel node launches: the function and its shape.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct Shape {
    pub(crate) func: CUfunction,
    pub(crate) grid: (u32, u32, u32),
    pub(crate) block: (u32, u32, u32),
    pub(crate) shared: u32,
}

impl Shape {
    /// The grid, block and shared memory, for messages.
    fn launch(&self) -> String {
        format!("grid {:?}, block {:?}, {} bytes of dynamic shared memory", self.grid, self.block, self.shared)
    }
}

/// One call of a graph.
#[derive(Clone)]
pub(crate) struct Node {
    handle: CUgraphNode,
    pub(crate) name: &'static str,
    shape: Shape,
    /// Its fault word or record: the kind and the offset in the fault memory.
    pub(crate) fault: Option<(FaultKind, usize)>,
}

/// Device memory for the fault words and records of a graph's calls, each cleared when it
/// is handed out; freed on drop (the owner waits for the graph's work first).
pub(crate) struct FaultMemory {
    ptr: CUdeviceptr,
    used: usize,
}

impl FaultMemory {
    fn new(device: &Device) -> Result<FaultMemory> {
        device.bind()?;
        // SAFETY: a plain allocation in the bound context.
        let ptr = unsafe { result::malloc_sync(FAULT_BYTES) }.map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                let free = device.memory_info().map_or(0, |(free, _)| free);
                Error::OutOfMemory { requested: FAULT_BYTES, free }
            } else {
                Error::driver("allocating GPU memory", e)
            }
        })?;
        Ok(FaultMemory { ptr, used: 0 })
    }

    /// Clears `slot` at `offset` and waits for it (while recording: no replay exists yet).
    fn clear_now(&self, slot: FaultKind, offset: usize) -> Result<()> {
        // SAFETY: the range lies in this allocation (handed out by `Recording::fault`), and no work
        // uses it yet. The memset goes to the legacy stream, which the runtime's streams
        // do not wait for: the context is waited for before anything can replay.
        unsafe { result::memset_d8_sync(self.ptr + offset as u64, slot.clear_byte(), slot.bytes()) }
            .and_then(|()| result::ctx::synchronize())
            .map_err(|e| Error::driver("clearing a graph's fault flags", e))
    }

    /// Queues the clearing of `slot` at `offset` on `stream`, the graph's: the replays
    /// queued after it start clean.
    pub(crate) fn clear_on(&self, slot: FaultKind, offset: usize, stream: &CudaStream) -> Result<()> {
        // SAFETY: the range lies in this allocation; the replays that write it run on
        // `stream`, in order with the clearing.
        unsafe { slot.clear(self.ptr + offset as u64, stream) }
    }
}

impl Drop for FaultMemory {
    fn drop(&mut self) {
        // SAFETY: allocated by `new`, freed only here, after the owner waited for the work
        // that uses it.
        if let Err(e) = unsafe { result::free_sync(self.ptr) } {
            report_drop_error("freeing a graph's fault flags failed", &Error::driver("freeing device memory", e));
        }
    }
}

/// Where a recording puts what it is given: a new graph, or the nodes of an instantiated
/// one whose parameters are set anew (same calls, same shapes, new arguments).
enum Target {
    New {
        graph: CUgraph,
        faults: Option<FaultMemory>,
    },
    /// The graph's executable, its nodes, and the address and length of its fault flags.
    Update {
        exec: CUgraphExec,
        nodes: Vec<Node>,
        faults: Option<(CUdeviceptr, usize)>,
        next_fault: usize,
    },
}

/// A graph being recorded: the calls made on a recording [`super::Stream`] come here.
pub struct Recording {
    device: Device,
    target: Target,
    nodes: Vec<Node>,
    arrays: Vec<Uses>,
    /// In an update, the nodes of the graph updated so far.
    matched: usize,
    /// Set when the recording ends: a copy of its stream kept past it records nothing.
    closed: bool,
}

// SAFETY: the graph handles are used by one thread at a time (the recording is behind a
// mutex, the instantiated graph behind `&mut`); the driver's objects are not tied to a
// thread.
unsafe impl Send for Recording {}

impl Recording {
    /// A new, empty graph on `device` (a GPU).
    pub(crate) fn new(device: &Device) -> Result<Recording> {
        device.bind()?;
        let mut graph: CUgraph = std::ptr::null_mut();
        // SAFETY: the call writes a new graph's handle (flags must be 0).
        unsafe { sys::cuGraphCreate(&mut graph, 0) }.result().map_err(|e| Error::driver("creating a graph", e))?;
        Ok(Recording {
            device: device.clone(),
            target: Target::New { graph, faults: None },
            nodes: Vec::new(),
            arrays: Vec::new(),
            matched: 0,
            closed: false,
        })
    }

    /// A recording that sets the parameters of `graph`'s nodes anew, in order.
    ///
    /// # Safety
    /// `graph` must outlive the recording (whose nodes are set through its executable's
    /// handle), and no replay of it may be running meanwhile.
    pub(crate) unsafe fn update(graph: &Instantiated) -> Recording {
        let faults = graph.faults.as_ref().map(|f| (f.memory.ptr, f.memory.used));
        Recording {
            device: graph.device.clone(),
            target: Target::Update { exec: graph.exec, nodes: graph.nodes.clone(), faults, next_fault: 0 },
            nodes: Vec::new(),
            arrays: Vec::new(),
            matched: 0,
            closed: false,
        }
    }

    /// Ends the recording: calls on a copy of its stream are errors from now on.
    pub(crate) fn close(&mut self) {
        self.closed = true;
    }

    fn open(&self) -> Result<()> {
        match self.closed {
            true => Err(Error::Graph { reason: "the recording this stream belonged to has ended".into() }),
            false => Ok(()),
        }
    }

    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// The cleared fault word or record for the next call, at its device address.
    pub(crate) fn fault(&mut self, slot: FaultKind) -> Result<(CUdeviceptr, usize)> {
        self.open()?;
        self.device.bind()?;
        let bytes = slot.bytes();
        match &mut self.target {
            Target::New { faults, .. } => {
                if faults.is_none() {
                    *faults = Some(FaultMemory::new(&self.device)?);
                }
                let Some(memory) = faults.as_mut() else {
                    return Err(Error::internal("a graph's fault memory vanished"));
                };
                if memory.used + bytes > FAULT_BYTES {
                    return Err(Error::Graph {
                        reason: format!(
                            "a graph holds at most {} calls that can fault ({FAULT_BYTES} bytes of fault flags)",
                            FAULT_BYTES / 8
                        ),
                    });
                }
                let offset = memory.used;
                memory.used += bytes;
                memory.clear_now(slot, offset)?;
                Ok((memory.ptr + offset as u64, offset))
            }
            Target::Update { faults, next_fault, .. } => {
                // The same calls take the same slots, in order; `add` checks the kinds.
                let (ptr, used) = faults.ok_or_else(|| mismatch("a call that can fault where the graph had none"))?;
                let offset = *next_fault;
                if offset + bytes > used {
                    return Err(mismatch("more calls that can fault than the graph recorded"));
                }
                *next_fault += bytes;
                Ok((ptr + offset as u64, offset))
            }
        }
    }

    /// Adds a kernel node after the ones before it (or sets the next node's parameters in
    /// an update), using the arrays `uses`.
    ///
    /// # Safety
    /// `params` must point to one word per parameter of `shape.func`, in its layout; the
    /// memory the words point to must stay valid for as long as the graph may replay
    /// (device arrays are checked at each replay through `uses`, which must be every
    /// array the words point to), and `fault` must be the slot `fault` handed out for
    /// this call, if any.
    pub(crate) unsafe fn add<'u>(
        &mut self,
        name: &'static str,
        shape: Shape,
        params: &mut [*mut c_void],
        fault: Option<(FaultKind, usize)>,
        uses: impl Iterator<Item = &'u Uses>,
    ) -> Result<()> {
        self.open()?;
        let node = sys::CUDA_KERNEL_NODE_PARAMS {
            func: shape.func,
            gridDimX: shape.grid.0,
            gridDimY: shape.grid.1,
            gridDimZ: shape.grid.2,
            blockDimX: shape.block.0,
            blockDimY: shape.block.1,
            blockDimZ: shape.block.2,
            sharedMemBytes: shape.shared,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        self.device.bind()?;
        let handle = match &self.target {
            Target::New { graph, .. } => {
                let mut handle: CUgraphNode = std::ptr::null_mut();
                let after: Vec<CUgraphNode> = self.nodes.last().map(|n| n.handle).into_iter().collect();
                // SAFETY: a live graph; the dependencies are its nodes; the parameters are
                // copied by the driver (the caller's promise covers what they point to).
                unsafe { sys::cuGraphAddKernelNode_v2(&mut handle, *graph, after.as_ptr(), after.len(), &node) }
                    .result()
                    .map_err(|e| Error::driver("adding a kernel to a graph", e))?;
                handle
            }
            Target::Update { exec, nodes, .. } => {
                let Some(old) = nodes.get(self.matched) else {
                    return Err(mismatch(&format!("more calls than the graph's {}", nodes.len())));
                };
                if old.name != name || old.shape != shape || old.fault.map(|f| f.0) != fault.map(|f| f.0) {
                    return Err(mismatch(&format!(
                        "call {} is `{name}` with {}, where the graph has `{}` with {}",
                        self.matched + 1,
                        shape.launch(),
                        old.name,
                        old.shape.launch()
                    )));
                }
                // SAFETY: a live executable graph (the caller of `update` promised), one of
                // its kernel nodes, and parameters for the same function.
                unsafe { sys::cuGraphExecKernelNodeSetParams_v2(*exec, old.handle, &node) }
                    .result()
                    .map_err(|e| Error::driver("setting a graph's arguments", e))?;
                self.matched += 1;
                old.handle
            }
        };
        self.nodes.push(Node { handle, name, shape, fault });
        for u in uses {
            if !self.arrays.iter().any(|a| a.same(u)) {
                self.arrays.push(u.handle());
            }
        }
        Ok(())
    }

    /// The recorded graph, instantiated: with a copy of the fault flags to host memory
    /// after the last call, where any call can fault.
    pub(crate) fn instantiate(mut self) -> Result<Instantiated> {
        let Target::New { graph, faults } =
            std::mem::replace(&mut self.target, Target::New { graph: std::ptr::null_mut(), faults: None })
        else {
            return Err(Error::internal("an update was instantiated as a new graph"));
        };
        // From here on the graph is destroyed with the partial result on an error.
        let mut done = Instantiated {
            device: self.device.clone(),
            graph,
            exec: std::ptr::null_mut(),
            nodes: std::mem::take(&mut self.nodes),
            arrays: std::mem::take(&mut self.arrays),
            faults: None,
        };
        if let Some(memory) = faults {
            let host = PinnedBuffer::new(&self.device, memory.used)?;
            let copy = sys::CUDA_MEMCPY3D {
                srcXInBytes: 0,
                srcY: 0,
                srcZ: 0,
                srcLOD: 0,
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcHost: std::ptr::null(),
                srcDevice: memory.ptr,
                srcArray: std::ptr::null_mut(),
                reserved0: std::ptr::null_mut(),
                srcPitch: 0,
                srcHeight: 0,
                dstXInBytes: 0,
                dstY: 0,
                dstZ: 0,
                dstLOD: 0,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                dstHost: host.ptr().cast(),
                dstDevice: 0,
                dstArray: std::ptr::null_mut(),
                reserved1: std::ptr::null_mut(),
                dstPitch: 0,
                dstHeight: 0,
                WidthInBytes: memory.used,
                Height: 1,
                Depth: 1,
            };
            let after: Vec<CUgraphNode> = done.nodes.last().map(|n| n.handle).into_iter().collect();
            let mut handle: CUgraphNode = std::ptr::null_mut();
            let ctx = self.device.context()?.cu_ctx();
            // SAFETY: a live graph and its last node; both ranges hold `used` bytes and live
            // as long as the graph (they are in `done`).
            unsafe { sys::cuGraphAddMemcpyNode(&mut handle, graph, after.as_ptr(), after.len(), &copy, ctx) }
                .result()
                .map_err(|e| Error::driver("adding the fault flags' copy to a graph", e))?;
            done.faults = Some(Faults { memory, host });
        }
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: a live graph; the call writes the executable's handle.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }
            .result()
            .map_err(|e| Error::driver("instantiating a graph", e))?;
        done.exec = exec;
        Ok(done)
    }

    /// The arrays of an update, once every node matched.
    pub(crate) fn finish_update(mut self) -> Result<Vec<Uses>> {
        match &self.target {
            Target::Update { nodes, .. } if self.matched == nodes.len() => Ok(std::mem::take(&mut self.arrays)),
            Target::Update { nodes, .. } => {
                Err(mismatch(&format!("{} calls, where the graph has {}", self.matched, nodes.len())))
            }
            Target::New { .. } => Err(Error::internal("a new graph was finished as an update")),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Target::New { graph, .. } = &self.target
            && !graph.is_null()
        {
            // SAFETY: a graph of this recording's, never instantiated (that takes it).
            if let Err(e) = unsafe { sys::cuGraphDestroy(*graph) }.result() {
                report_drop_error("destroying a graph failed", &Error::driver("destroying a graph", e));
            }
        }
    }
}

fn mismatch(what: &str) -> Error {
    Error::Graph {
        reason: format!(
            "an update must make the same calls as the graph, in the same order, each with the same launch shape: {what}"
        ),
    }
}

/// The fault flags of a graph's calls and their copy in host memory, written by each
/// replay's last node.
pub(crate) struct Faults {
    pub(crate) memory: FaultMemory,
    host: PinnedBuffer,
}

impl Faults {
    /// The 64-bit words at `offset` of the host copy (read after the replays are waited
    /// for).
    pub(crate) fn words<const N: usize>(&self, offset: usize) -> [u64; N] {
        let mut out = [0u64; N];
        for (k, w) in out.iter_mut().enumerate() {
            // SAFETY: `offset + 8 * N` lies within the copy (a slot handed out of
            // `memory.used` bytes); the copies that write it have finished.
            *w = unsafe { std::ptr::read_unaligned(self.host.ptr().add(offset + 8 * k).cast::<u64>()) };
        }
        out
    }
}

/// A recorded graph, ready to replay; destroyed on drop (the owner waits for its replays
/// first).
pub(crate) struct Instantiated {
    pub(crate) device: Device,
    graph: CUgraph,
    pub(crate) exec: CUgraphExec,
    pub(crate) nodes: Vec<Node>,
    pub(crate) arrays: Vec<Uses>,
    pub(crate) faults: Option<Faults>,
}

// SAFETY: as for `Recording`: one thread at a time uses the handles (`&mut` of the owner).
unsafe impl Send for Instantiated {}

impl Drop for Instantiated {
    fn drop(&mut self) {
        // SAFETY: handles of this value's, destroyed only here, after the owner waited for
        // the replays.
        unsafe {
            if !self.exec.is_null()
                && let Err(e) = sys::cuGraphExecDestroy(self.exec).result()
            {
                report_drop_error("destroying a graph failed", &Error::driver("destroying a graph", e));
            }
            if !self.graph.is_null()
                && let Err(e) = sys::cuGraphDestroy(self.graph).result()
            {
                report_drop_error("destroying a graph failed", &Error::driver("destroying a graph", e));
            }
        }
    }
}
