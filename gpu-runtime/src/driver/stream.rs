//! Streams of the program's own: queues of work on one device that run concurrently with
//! each other (`name::launch(&stream, …)`).

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::Device;
use crate::error::{Error, Result};

/// A queue of work on one device; work on different streams may run concurrently.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    stream: Arc<CudaStream>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("device", &self.device.ordinal()).finish()
    }
}

impl Device {
    /// A new stream on this device.
    pub fn new_stream(&self) -> Result<Stream> {
        self.bind()?;
        let stream = self.context().new_stream().map_err(|e| Error::driver("creating a stream", e))?;
        Ok(Stream { device: self.clone(), stream })
    }
}

impl Stream {
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub(crate) fn cuda(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits until all work queued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        self.stream.synchronize().map_err(|e| Error::driver("synchronising a stream", e))
    }
}
