//! CUDA graphs over the runtime's calls: a sequence of calls recorded once and replayed
//! with one driver call each time ([`Graph`]).
//!
//! A graph keeps no borrow of the arrays it was recorded over. Each replay is ordered as a
//! call is: it waits (on the GPU) for the work of other streams on those arrays, and notes
//! itself in each of them, so that later uses, writes from the host and frees wait for it.
//! An array dropped (or handed to cudarc) after the recording is gone for the graph: a
//! replay refuses to run rather than touch freed memory.

use std::mem::ManuallyDrop;

use cudarc::driver::sys;

use super::enqueue::{fault_result, thread_fault_result};
use crate::driver::FaultKind;
use crate::driver::graph::{Instantiated, Recording};
use crate::driver::{Device, Stream, note_uses, report_drop_error};
use crate::error::{Error, Result};

/// Calls recorded once and replayed with one driver call: the way past the driver's cost
/// per launch for chains of short calls.
///
/// ```ignore
/// let stream = device.new_stream()?;
/// let mut graph = Graph::capture(&stream, |s| {
///     add::launch_into(s, &mut c, &a, &b)?;
///     scale::launch_into(s, &mut d, &c, 2.0f32)?;
///     Ok(())
/// })?;
/// graph.replay()?; // both calls again, over whatever a, b, c and d hold now
/// ```
///
/// Inside the recording, `launch_into` of a vectorized function and the launch of a
/// `#[kernel]` on the recording stream (a `LaunchConfig` with `.stream(s)`) are recorded, not run; their
/// arguments and results must be device arrays of the stream's device (or scalars), since a
/// replay copies nothing. Any other call on the recording stream is an error.
///
/// A replay reads and writes the arrays as they are when it runs: write new inputs into
/// them between replays (`copy_from`), and read the results after [`Graph::wait`] or
/// [`Graph::replay`]. A fault in a replay (an integer division by zero, an index out of
/// bounds) is returned by the wait, as the call's own error would be. [`Graph::update`]
/// records the same calls again with new scalars or other arrays (of lengths that keep each
/// call's launch shape), and sets them in the graph without building it anew.
pub struct Graph {
    /// The stream replays are queued on.
    stream: Stream,
    /// Destroyed on drop once its replays are done (leaked if they cannot be waited for).
    graph: ManuallyDrop<Instantiated>,
    /// Replays were queued since the last wait.
    queued: bool,
    /// An update failed part way: the nodes hold a mix of arguments, so nothing replays
    /// until an update succeeds.
    broken: bool,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let calls: Vec<&str> = self.graph.nodes.iter().map(|n| n.name).collect();
        f.debug_struct("Graph").field("device", &self.graph.device.id()).field("calls", &calls).finish()
    }
}

impl Graph {
    /// Records the calls `record` makes on the stream it is given, and returns them as a
    /// graph that replays on `stream` (a stream of a GPU).
    pub fn capture(stream: &Stream, record: impl FnOnce(&Stream) -> Result<()>) -> Result<Graph> {
        let device = stream.device();
        if !device.is_cuda() {
            return Err(Error::Graph { reason: format!("graphs need a CUDA GPU; {} has none", device.name()) });
        }
        // Not a recording stream itself.
        stream.cuda()?;
        let recording = run(device, Recording::new(device)?, record)?;
        let graph = recording.instantiate()?;
        Ok(Graph { stream: stream.clone(), graph: ManuallyDrop::new(graph), queued: false, broken: false })
    }

    /// The device the graph runs on.
    pub fn device(&self) -> &Device {
        &self.graph.device
    }

    /// The calls recorded, in order (their functions' names).
    pub fn calls(&self) -> Vec<&'static str> {
        self.graph.nodes.iter().map(|n| n.name).collect()
    }

    /// Queues one replay on the graph's stream and returns without waiting: a fault in it
    /// is reported by the next [`Graph::wait`]. An array the graph was recorded over that
    /// has been dropped since is an error, and nothing runs.
    pub fn launch(&mut self) -> Result<()> {
        if self.broken {
            return Err(Error::Graph {
                reason: "an update of the graph failed part way; update it again before replaying".into(),
            });
        }
        let device = &self.graph.device;
        let stream = self.stream.cuda()?;
        device.bind()?;
        // Each array stays alive until the replay has noted itself in it: its drop then
        // orders the free after the replay.
        let mut alive = Vec::with_capacity(self.graph.arrays.len());
        for uses in &self.graph.arrays {
            match uses.alive() {
                Some(guard) => alive.push(guard),
                None => {
                    return Err(Error::Graph {
                        reason: "an array the graph was recorded over has been dropped: record the graph again".into(),
                    });
                }
            }
        }
        for uses in &self.graph.arrays {
            uses.order_before(stream)?;
        }
        // SAFETY: a live executable graph of the bound context and a live stream of it;
        // every array its nodes use is alive (held above) and ordered before it, and its
        // fault memory lives as long as the graph, which waits for its replays on drop.
        unsafe { sys::cuGraphLaunch(self.graph.exec, stream.cu_stream()) }
            .result()
            .map_err(|e| Error::driver("replaying a graph", e))?;
        self.queued = true;
        note_uses(device, stream, self.graph.arrays.iter())?;
        drop(alive);
        Ok(())
    }

    /// Waits for the replays queued so far, and returns the first fault among them (in
    /// the order of the calls), if any.
    pub fn wait(&mut self) -> Result<()> {
        if !self.queued {
            return Ok(());
        }
        self.stream.synchronize()?;
        self.queued = false;
        let Some(faults) = &self.graph.faults else { return Ok(()) };
        let mut first = Ok(());
        let mut dirty = Vec::new();
        for node in &self.graph.nodes {
            let Some((slot, offset)) = node.fault else { continue };
            let outcome = match slot {
                FaultKind::Word => fault_result(node.name, kernel_abi::FaultWord(faults.words::<1>(offset)[0])),
                FaultKind::Record => thread_fault_result(node.name, &faults.words(offset)),
            };
            if outcome.is_err() {
                dirty.push((slot, offset));
                if first.is_ok() {
                    first = outcome;
                }
            }
        }
        // A call writes its flag only at a fault, so the flags stay cleared for the next
        // replay but for the ones that reported one, cleared in the stream's order before
        // any replay queued after this.
        let stream = self.stream.cuda()?;
        for (slot, offset) in dirty {
            faults.memory.clear_on(slot, offset, stream)?;
        }
        first
    }

    /// One replay, waited for: [`Graph::launch`] then [`Graph::wait`].
    pub fn replay(&mut self) -> Result<()> {
        self.launch()?;
        self.wait()
    }

    /// Records the graph's calls again with `record`, which must make the same calls (the
    /// same functions, in the same order, each with the same launch shape: an elementwise
    /// call over a length that needs another number of blocks, or a kernel launched with
    /// another grid, block or shared memory, is refused), and sets their new arguments
    /// (scalars, other arrays, other lengths) in the graph. Waits
    /// for the replays queued before; a fault among them is returned and the graph is
    /// left as it was. An update that fails part way leaves a graph that refuses to
    /// replay until an update succeeds.
    pub fn update(&mut self, record: impl FnOnce(&Stream) -> Result<()>) -> Result<()> {
        self.wait()?;
        let device = self.graph.device.clone();
        self.broken = true;
        // SAFETY: the recording ends in `run`, before `self.graph` can go, and no replay
        // runs (waited for above; `&mut self` keeps new ones out).
        let recording = run(&device, unsafe { Recording::update(&self.graph) }, record)?;
        self.graph.arrays = recording.finish_update()?;
        self.broken = false;
        Ok(())
    }
}

/// Runs `record` on a recording stream of `recording`, and takes the recording back.
fn run(device: &Device, recording: Recording, record: impl FnOnce(&Stream) -> Result<()>) -> Result<Recording> {
    let stream = Stream::recording_on(device, recording);
    let outcome = record(&stream);
    if let Some(cell) = stream.recording() {
        cell.lock().unwrap_or_else(|p| p.into_inner()).close();
    }
    outcome?;
    stream.into_recording().ok_or_else(|| Error::Graph {
        reason: "a copy of the recording stream was kept past the recording; it records nothing".into(),
    })
}

impl Drop for Graph {
    fn drop(&mut self) {
        if self.queued
            && let Err(e) = self.stream.synchronize()
        {
            // Freed, the fault memory could still be written by a replay that runs on.
            report_drop_error("a graph's replays could not be waited for, so the graph is leaked", &e);
            return;
        }
        // SAFETY: dropped only here; its replays are done.
        unsafe { ManuallyDrop::drop(&mut self.graph) };
    }
}
