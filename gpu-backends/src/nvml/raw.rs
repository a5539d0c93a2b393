//! Every NVML function SliceHub calls that nvml-wrapper 0.13 does not wrap, or wraps wrongly
//! (`possible_placements` returns an empty Vec: it never sets the length). This is the only
//! module of the crate with `unsafe`.
//!
//! Invariants every function here relies on:
//! - Symbols come from `nvml.lib()`, the library `nvml` loaded and initialized; a symbol the
//!   driver lacks is an error (`FailedToLoadSymbol`), never a call through a null pointer.
//! - Device handles come from `Device::handle()` of a `Device` borrowed from that same `Nvml`,
//!   so they stay valid for the call.
//! - GPU- and compute-instance handles are only held inside one backend call, under the
//!   backend's MIG lock, so no other SliceHub call destroys them meanwhile; the handle types
//!   are raw pointers and therefore neither `Send` nor `Sync`.
//! - Out-parameters are zeroed plain-old-data structs or arrays whose length is passed as the
//!   count; counts NVML writes back are clamped to the array's length before use.

use std::ffi::CStr;
use std::mem;
use std::os::raw::{c_char, c_uint};
use std::ptr;

use nvml_wrapper::error::{nvml_sym, nvml_try, nvml_try_count, NvmlError};
use nvml_wrapper::{Device, Nvml};
use nvml_wrapper_sys::bindings::{
    nvmlComputeInstanceProfileInfo_t, nvmlComputeInstanceProfileInfo_v2_t, nvmlComputeInstance_t,
    nvmlGpuInstanceInfo_t, nvmlGpuInstancePlacement_t, nvmlGpuInstanceProfileInfo_v2_t,
    nvmlGpuInstance_t, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
};

/// NVML's `NVML_STRUCT_VERSION(name, ver)`: the struct's size with the version in the top byte.
fn struct_version<T>(version: u32) -> c_uint {
    mem::size_of::<T>() as c_uint | (version << 24)
}

fn text(name: &[c_char]) -> Option<String> {
    // SAFETY: c_char and u8 have the same size and alignment; the slice is borrowed as is.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(name.as_ptr().cast(), name.len()) };
    let text = CStr::from_bytes_until_nul(bytes)
        .ok()?
        .to_string_lossy()
        .trim()
        .to_string();
    (!text.is_empty()).then_some(text)
}

/// A GPU-instance profile as `nvmlDeviceGetGpuInstanceProfileInfoV` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GpuInstanceProfile {
    pub id: u32,
    /// Compute slices (`sliceCount`); memory slices are the placement size.
    pub slice_count: u32,
    pub instance_count: u32,
    pub multiprocessor_count: u32,
    pub memory_size_mb: u64,
    /// e.g. `MIG 1g.10gb+me`; `None` from drivers without the `V` call.
    pub name: Option<String>,
}

/// The profile at NVML profile INDEX `index` (`NVML_GPU_INSTANCE_PROFILE_1_SLICE` = 0, …),
/// not the profile id.
pub(super) fn gpu_instance_profile(
    nvml: &Nvml,
    device: &Device,
    index: u32,
) -> Result<GpuInstanceProfile, NvmlError> {
    let Ok(sym) = nvml_sym(nvml.lib().nvmlDeviceGetGpuInstanceProfileInfoV.as_ref()) else {
        let info = device.profile_info(index)?;
        return Ok(GpuInstanceProfile {
            id: info.id,
            slice_count: info.slice_count,
            instance_count: info.instance_count,
            multiprocessor_count: info.multiprocessor_count,
            memory_size_mb: info.memory_size_mb,
            name: None,
        });
    };
    // SAFETY: see the module invariants; `info` is a zeroed POD struct with its version set.
    let info = unsafe {
        let mut info: nvmlGpuInstanceProfileInfo_v2_t = mem::zeroed();
        info.version = struct_version::<nvmlGpuInstanceProfileInfo_v2_t>(2);
        nvml_try(sym(device.handle(), index, &mut info))?;
        info
    };
    Ok(GpuInstanceProfile {
        id: info.id,
        slice_count: info.sliceCount,
        instance_count: info.instanceCount,
        multiprocessor_count: info.multiprocessorCount,
        memory_size_mb: info.memorySizeMB,
        name: text(&info.name),
    })
}

/// Every (start, size) where an instance of profile `profile_id` may be placed.
pub(super) fn possible_placements(
    nvml: &Nvml,
    device: &Device,
    profile_id: u32,
) -> Result<Vec<(u32, u32)>, NvmlError> {
    let sym = nvml_sym(
        nvml.lib()
            .nvmlDeviceGetGpuInstancePossiblePlacements_v2
            .as_ref(),
    )?;
    // SAFETY: the first call passes a null array to learn the count; the second passes an
    // array of exactly `count` zeroed entries; the count written back is clamped.
    unsafe {
        let handle = device.handle();
        let mut count: c_uint = 0;
        nvml_try_count(sym(handle, profile_id, ptr::null_mut(), &mut count))?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut placements: Vec<nvmlGpuInstancePlacement_t> = vec![mem::zeroed(); count as usize];
        nvml_try(sym(handle, profile_id, placements.as_mut_ptr(), &mut count))?;
        placements.truncate(count as usize);
        Ok(placements.iter().map(|p| (p.start, p.size)).collect())
    }
}

/// A GPU instance handle, valid inside one backend call (see the module invariants).
pub(super) struct GpuInstance(nvmlGpuInstance_t);

/// A compute instance handle, valid inside one backend call.
pub(super) struct ComputeInstance(nvmlComputeInstance_t);

/// Room for more instances than any profile allows; NVML fills at most its max instances.
const INSTANCE_CAPACITY: usize = 16;

/// The GPU instances of profile `profile_id` that exist now.
pub(super) fn gpu_instances(
    nvml: &Nvml,
    device: &Device,
    profile_id: u32,
) -> Result<Vec<GpuInstance>, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlDeviceGetGpuInstances.as_ref())?;
    // SAFETY: the array has INSTANCE_CAPACITY null entries; the count is clamped to it.
    unsafe {
        let mut handles: Vec<nvmlGpuInstance_t> = vec![ptr::null_mut(); INSTANCE_CAPACITY];
        let mut count: c_uint = 0;
        nvml_try(sym(
            device.handle(),
            profile_id,
            handles.as_mut_ptr(),
            &mut count,
        ))?;
        handles.truncate((count as usize).min(INSTANCE_CAPACITY));
        Ok(handles
            .into_iter()
            .filter(|h| !h.is_null())
            .map(GpuInstance)
            .collect())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct GpuInstanceInfo {
    pub id: u32,
    pub profile_id: u32,
    pub start: u32,
    pub size: u32,
}

pub(super) fn gpu_instance_info(
    nvml: &Nvml,
    instance: &GpuInstance,
) -> Result<GpuInstanceInfo, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlGpuInstanceGetInfo.as_ref())?;
    // SAFETY: a live GPU-instance handle and a zeroed POD out-struct.
    let info = unsafe {
        let mut info: nvmlGpuInstanceInfo_t = mem::zeroed();
        nvml_try(sym(instance.0, &mut info))?;
        info
    };
    Ok(GpuInstanceInfo {
        id: info.id,
        profile_id: info.profileId,
        start: info.placement.start,
        size: info.placement.size,
    })
}

/// Creates a GPU instance of `profile_id` at exactly (`start`, `size`).
pub(super) fn create_gpu_instance(
    nvml: &Nvml,
    device: &Device,
    profile_id: u32,
    start: u32,
    size: u32,
) -> Result<GpuInstance, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlDeviceCreateGpuInstanceWithPlacement.as_ref())?;
    let placement = nvmlGpuInstancePlacement_t { start, size };
    // SAFETY: the placement lives across the call; the out-handle starts null.
    unsafe {
        let mut instance: nvmlGpuInstance_t = ptr::null_mut();
        nvml_try(sym(device.handle(), profile_id, &placement, &mut instance))?;
        Ok(GpuInstance(instance))
    }
}

pub(super) fn destroy_gpu_instance(nvml: &Nvml, instance: GpuInstance) -> Result<(), NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlGpuInstanceDestroy.as_ref())?;
    // SAFETY: a live handle, consumed here so it cannot be used after the destroy.
    unsafe { nvml_try(sym(instance.0)) }
}

/// Compute-instance profile (id, compute slices) at NVML CI profile INDEX `index` of a GPU
/// instance, with the engines shared (the only engine profile NVML offers).
pub(super) fn compute_instance_profile(
    nvml: &Nvml,
    instance: &GpuInstance,
    index: u32,
) -> Result<(u32, u32), NvmlError> {
    let engines = NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED;
    if let Ok(sym) = nvml_sym(
        nvml.lib()
            .nvmlGpuInstanceGetComputeInstanceProfileInfoV
            .as_ref(),
    ) {
        // SAFETY: a live handle and a zeroed POD out-struct with its version set.
        let info = unsafe {
            let mut info: nvmlComputeInstanceProfileInfo_v2_t = mem::zeroed();
            info.version = struct_version::<nvmlComputeInstanceProfileInfo_v2_t>(2);
            nvml_try(sym(instance.0, index, engines, &mut info))?;
            info
        };
        return Ok((info.id, info.sliceCount));
    }
    let sym = nvml_sym(
        nvml.lib()
            .nvmlGpuInstanceGetComputeInstanceProfileInfo
            .as_ref(),
    )?;
    // SAFETY: as above, the version-less struct.
    let info = unsafe {
        let mut info: nvmlComputeInstanceProfileInfo_t = mem::zeroed();
        nvml_try(sym(instance.0, index, engines, &mut info))?;
        info
    };
    Ok((info.id, info.sliceCount))
}

pub(super) fn create_compute_instance(
    nvml: &Nvml,
    instance: &GpuInstance,
    profile_id: u32,
) -> Result<ComputeInstance, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlGpuInstanceCreateComputeInstance.as_ref())?;
    // SAFETY: a live GPU-instance handle; the out-handle starts null.
    unsafe {
        let mut compute: nvmlComputeInstance_t = ptr::null_mut();
        nvml_try(sym(instance.0, profile_id, &mut compute))?;
        Ok(ComputeInstance(compute))
    }
}

/// The compute instances of CI profile `profile_id` in a GPU instance.
pub(super) fn compute_instances(
    nvml: &Nvml,
    instance: &GpuInstance,
    profile_id: u32,
) -> Result<Vec<ComputeInstance>, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlGpuInstanceGetComputeInstances.as_ref())?;
    // SAFETY: the array has INSTANCE_CAPACITY null entries; the count is clamped to it.
    unsafe {
        let mut handles: Vec<nvmlComputeInstance_t> = vec![ptr::null_mut(); INSTANCE_CAPACITY];
        let mut count: c_uint = 0;
        nvml_try(sym(
            instance.0,
            profile_id,
            handles.as_mut_ptr(),
            &mut count,
        ))?;
        handles.truncate((count as usize).min(INSTANCE_CAPACITY));
        Ok(handles
            .into_iter()
            .filter(|h| !h.is_null())
            .map(ComputeInstance)
            .collect())
    }
}

pub(super) fn destroy_compute_instance(
    nvml: &Nvml,
    compute: ComputeInstance,
) -> Result<(), NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlComputeInstanceDestroy.as_ref())?;
    // SAFETY: a live handle, consumed here so it cannot be used after the destroy.
    unsafe { nvml_try(sym(compute.0)) }
}

/// (GPU-instance id, compute-instance id) of a MIG device handle.
pub(super) fn mig_device_ids(nvml: &Nvml, mig: &Device) -> Result<(u32, u32), NvmlError> {
    let gi_sym = nvml_sym(nvml.lib().nvmlDeviceGetGpuInstanceId.as_ref())?;
    let ci_sym = nvml_sym(nvml.lib().nvmlDeviceGetComputeInstanceId.as_ref())?;
    // SAFETY: a MIG device handle borrowed from `nvml`; plain integer out-parameters.
    unsafe {
        let (mut gi, mut ci): (c_uint, c_uint) = (0, 0);
        nvml_try(gi_sym(mig.handle(), &mut gi))?;
        nvml_try(ci_sym(mig.handle(), &mut ci))?;
        Ok((gi, ci))
    }
}

/// (remapping pending, remapping failed) from the row remapper (Ampere and newer).
pub(super) fn remapped_rows(nvml: &Nvml, device: &Device) -> Result<(bool, bool), NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlDeviceGetRemappedRows.as_ref())?;
    // SAFETY: a device handle borrowed from `nvml`; plain integer out-parameters.
    unsafe {
        let (mut corrected, mut uncorrected, mut pending, mut failed): (
            c_uint,
            c_uint,
            c_uint,
            c_uint,
        ) = (0, 0, 0, 0);
        nvml_try(sym(
            device.handle(),
            &mut corrected,
            &mut uncorrected,
            &mut pending,
            &mut failed,
        ))?;
        Ok((pending != 0, failed != 0))
    }
}
