//! Streams of the program's own: queues of work on one device that run concurrently with
//! each other (`name::launch(&stream, …)`).

use std::sync::{Arc, Mutex};

use cudarc::driver::CudaStream;

use super::Device;
use super::graph::Recording;
use crate::error::{Error, Result};

/// A queue of work on one device; work on different streams may run concurrently. A
/// stream on the CPU device runs each call when it is queued: its `Pending` is done.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    /// `None` on the CPU device.
    stream: Option<Arc<CudaStream>>,
    /// The graph that the calls queued on this stream go to instead of the GPU (the stream
    /// a graph's recording hands out).
    recording: Option<Arc<Mutex<Recording>>>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("device", &self.device.id()).finish()
    }
}

impl Device {
    /// A new stream on this device.
    pub fn new_stream(&self) -> Result<Stream> {
        if self.is_cpu() {
            return Ok(Stream { device: self.clone(), stream: None, recording: None });
        }
        self.bind()?;
        let stream = self.context()?.new_stream().map_err(|e| Error::driver("creating a stream", e))?;
        Ok(Stream { device: self.clone(), stream: Some(stream), recording: None })
    }
}

impl Stream {
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The CUDA stream (an internal error on the CPU device, whose calls never get here).
    /// A graph's recording stream has none to give: a call that does not know graphs and
    /// asks for it is not one a graph can hold, and gets that error.
    pub(crate) fn cuda(&self) -> Result<&Arc<CudaStream>> {
        if self.recording.is_some() {
            return Err(Error::Graph {
                reason: "only calls whose arguments and results are device arrays (`launch_into`, and a kernel's launch) can be recorded in a graph".into(),
            });
        }
        self.stream.as_ref().ok_or_else(|| Error::internal("GPU work was queued on a stream of the CPU device"))
    }

    /// A stream whose calls go to `recording` (on `device`, a GPU).
    pub(crate) fn recording_on(device: &Device, recording: Recording) -> Stream {
        Stream { device: device.clone(), stream: None, recording: Some(Arc::new(Mutex::new(recording))) }
    }

    /// The graph the calls on this stream go to, if it is a recording stream.
    pub(crate) fn recording(&self) -> Option<&Arc<Mutex<Recording>>> {
        self.recording.as_ref()
    }

    /// The recording, taken back from a recording stream (`None` if a copy of the stream
    /// is still alive, or for another stream).
    pub(crate) fn into_recording(self) -> Option<Recording> {
        let cell = Arc::try_unwrap(self.recording?).ok()?;
        Some(cell.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    /// Waits until all work queued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        // The CPU device's calls, and a graph's recording, have nothing to wait for.
        let Some(stream) = &self.stream else { return Ok(()) };
        self.device.bind()?;
        stream.synchronize().map_err(|e| Error::driver("synchronising a stream", e))
    }
}
