use nvml_wrapper::error::NvmlError;
use nvml_wrapper_sys::bindings::nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_RESOURCES;

use slicehub_core::CoreError;

/// An NVML failure of `what` (e.g. `GPU 0: create 3g.40gb@4`) in the boundary's terms.
/// nvml-wrapper 0.13 has no variant for NVML_ERROR_INSUFFICIENT_RESOURCES; it arrives as
/// `UnexpectedVariant(23)`.
pub(super) fn nvml_error(what: &str, e: NvmlError) -> CoreError {
    match e {
        NvmlError::UnexpectedVariant(code)
            if code == nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_RESOURCES =>
        {
            CoreError::InsufficientResources(format!("{what}: NVML has no room for it"))
        }
        NvmlError::NotSupported => CoreError::NotSupported(format!(
            "{what}: this GPU or driver does not support it (is MIG enabled?)"
        )),
        NvmlError::NoPermission => {
            CoreError::NoPermission(format!("{what}: needs root (NVML refused the caller)"))
        }
        NvmlError::NotFound => CoreError::NotFound(format!("{what}: NVML found no such thing")),
        NvmlError::InUse => CoreError::Gpu(format!(
            "{what}: in use (a process still runs on it; stop its container first)"
        )),
        NvmlError::InvalidArg => {
            CoreError::InvalidRequest(format!("{what}: NVML rejected the arguments"))
        }
        NvmlError::GpuLost => CoreError::Gpu(format!(
            "{what}: the GPU fell off the bus (a reset or reboot is needed)"
        )),
        other => CoreError::Gpu(format!("NVML {what}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvml_errors_map_to_the_boundary_variants() {
        let e = nvml_error("GPU 0: create 3g.40gb@4", NvmlError::UnexpectedVariant(23));
        assert!(matches!(e, CoreError::InsufficientResources(_)), "{e}");
        let e = nvml_error("GPU 0: create 3g.40gb@4", NvmlError::NoPermission);
        assert!(e.to_string().contains("needs root"), "{e}");
        assert!(matches!(
            nvml_error("x", NvmlError::NotSupported),
            CoreError::NotSupported(_)
        ));
        assert!(matches!(
            nvml_error("x", NvmlError::NotFound),
            CoreError::NotFound(_)
        ));
    }
}
