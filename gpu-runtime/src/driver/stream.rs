//! Streams of the program's own: queues of work on one device that run concurrently with
//! each other (`name::launch(&stream, …)`).

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::Device;
use crate::error::{Error, Result};

/// A queue of work on one device; work on different streams may run concurrently. A
/// stream on the CPU device runs each call when it is queued: its `Pending` is done.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    /// `None` on the CPU device.
    stream: Option<Arc<CudaStream>>,
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
            return Ok(Stream { device: self.clone(), stream: None });
        }
        self.bind()?;
        let stream = self.context()?.new_stream().map_err(|e| Error::driver("creating a stream", e))?;
        Ok(Stream { device: self.clone(), stream: Some(stream) })
    }
}

impl Stream {
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The CUDA stream (an internal error on the CPU device, whose calls never get here).
    pub(crate) fn cuda(&self) -> Result<&Arc<CudaStream>> {
        self.stream.as_ref().ok_or_else(|| Error::internal("GPU work was queued on a stream of the CPU device"))
    }

    /// Waits until all work queued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        let Some(stream) = &self.stream else { return Ok(()) };
        self.device.bind()?;
        stream.synchronize().map_err(|e| Error::driver("synchronising a stream", e))
    }
}
