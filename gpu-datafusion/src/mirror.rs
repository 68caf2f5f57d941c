//! Columns kept in a device's memory across queries.
//!
//! A scalar UDF copies its argument columns to the GPU for every batch, and over a table
//! in host memory that copy is most of the query. A [`DeviceMirror`] copies a table's
//! columns to a device once; while it lives, every UDF on that device that is given one
//! of those columns (or a slice of one) reads the device's copy in place, and only the
//! results cross the link. Nothing else changes: the query, its plan and its results are
//! the same with a mirror or without.
//!
//! A mirror keeps the host arrays it copied alive. Arrow buffers are never written once
//! shared, so the copy and the host array stay equal for the mirror's whole life, and an
//! address it matches can never belong to other data meanwhile.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use gpu_runtime::columnar::{DeviceColumn, DeviceValues, Kind};
use gpu_runtime::{Device, Result};

use crate::types::{Held, kind_of, values};

/// A table's columns copied to one device, read in place by the UDFs on that device for as
/// long as the mirror lives:
///
/// ```ignore
/// let mirror = gpu_datafusion::DeviceMirror::of(&gpu, &batches)?;
/// ctx.register_batches("t", batches)?; // or a MemTable of the same batches
/// ctx.sql("SELECT sum(heavy(x, y)) FROM t").await?; // x and y are not copied again
/// ```
///
/// Columns of every fixed-width column type are mirrored (not booleans, which Arrow packs
/// into bits, and not other types, which no function takes). A batch's column with nulls
/// is mirrored too, but a call whose rows include a null gathers its valid rows on the
/// host, as without a mirror. An aggregate UDF reads host columns.
pub struct DeviceMirror {
    device: Device,
    entries: Vec<Arc<Entry>>,
    reads: Arc<AtomicU64>,
}

/// One mirrored column.
struct Entry {
    /// The host array, kept alive (so its values stay where they are, unchanged).
    _host: ArrayRef,
    /// The address and length in bytes of the host values.
    start: usize,
    bytes: usize,
    kind: Kind,
    column: DeviceColumn,
    reads: Arc<AtomicU64>,
}

/// Every live mirror's columns, for the UDFs to look up.
static COLUMNS: Mutex<Vec<Weak<Entry>>> = Mutex::new(Vec::new());

impl DeviceMirror {
    /// The columns of `batches` copied to `device` (a GPU, or the CPU device). A column
    /// that several batches share (or one batch twice) is copied once. A device that runs
    /// out of memory is an error, and what was copied so far is freed.
    pub fn of<'b>(device: &Device, batches: impl IntoIterator<Item = &'b RecordBatch>) -> Result<DeviceMirror> {
        let reads = Arc::new(AtomicU64::new(0));
        let mut entries: Vec<Arc<Entry>> = Vec::new();
        for batch in batches {
            for array in batch.columns() {
                let Some((start, bytes, kind)) = host_range(array.as_ref()) else { continue };
                if entries.iter().any(|e| e.start == start && e.bytes == bytes && e.kind == kind) {
                    continue;
                }
                let Some(Held::Borrowed(v)) = values(array.as_ref()) else { continue };
                entries.push(Arc::new(Entry {
                    _host: array.clone(),
                    start,
                    bytes,
                    kind,
                    column: DeviceColumn::on(device, v)?,
                    reads: reads.clone(),
                }));
            }
        }
        let mut all = COLUMNS.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|e| e.strong_count() > 0);
        all.extend(entries.iter().map(Arc::downgrade));
        Ok(DeviceMirror { device: device.clone(), entries, reads })
    }

    /// The device that holds the copies.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The columns copied.
    pub fn columns(&self) -> usize {
        self.entries.len()
    }

    /// The bytes copied.
    pub fn bytes(&self) -> usize {
        self.entries.iter().map(|e| e.bytes).sum()
    }

    /// How many arguments of UDF calls were read from this mirror so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for DeviceMirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMirror")
            .field("device", &self.device.name())
            .field("columns", &self.columns())
            .field("bytes", &self.bytes())
            .finish()
    }
}

/// The address, length in bytes and type of a primitive array's values (`None` for
/// booleans and the types no function takes).
fn host_range(array: &dyn Array) -> Option<(usize, usize, Kind)> {
    let kind = kind_of(array.data_type()).filter(|k| *k != Kind::Bool)?;
    match values(array)? {
        Held::Borrowed(v) if !v.is_empty() => Some((v.as_ptr() as usize, v.len() * kind.size(), kind)),
        _ => None,
    }
}

/// A mirrored copy of `array`'s values on `device`, if a live mirror holds them: the
/// mirror's column (kept alive by the caller while it reads) and the rows of it that are
/// the array's.
pub(crate) struct Resident {
    entry: Arc<Entry>,
    rows: std::ops::Range<usize>,
}

impl Resident {
    /// The array's values on the device.
    pub(crate) fn values(&self) -> Result<DeviceValues<'_>> {
        self.entry.column.values().slice(self.rows.clone())
    }
}

/// `array`'s values as a live mirror on `device` holds them, counting the read.
pub(crate) fn resident(device: &Device, array: &dyn Array) -> Option<Resident> {
    let (start, bytes, kind) = host_range(array)?;
    let size = kind.size();
    let entry = {
        let all = COLUMNS.lock().unwrap_or_else(|p| p.into_inner());
        all.iter().filter_map(Weak::upgrade).find(|e| {
            e.kind == kind
                && e.column.device() == device
                && e.start <= start
                && start + bytes <= e.start + e.bytes
                && (start - e.start) % size == 0
        })?
    };
    let first = (start - entry.start) / size;
    entry.reads.fetch_add(1, Ordering::Relaxed);
    Some(Resident { rows: first..first + bytes / size, entry })
}
