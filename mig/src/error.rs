use thiserror::Error;

/// Every way a MIG question can be answered "no". Messages are written for an admin.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MigError {
    #[error("unknown GPU model '{name}' (supported: {supported})")]
    UnknownModel { name: String, supported: String },

    #[error("unknown MIG profile '{name}' (profiles on {model}: {available})")]
    UnknownProfile {
        name: String,
        model: String,
        available: String,
    },

    #[error("MIG profile '{name}' does not exist on {model} (it belongs to {found_on}; profiles on {model}: {available})")]
    ProfileNotOnModel {
        name: String,
        model: String,
        found_on: String,
        available: String,
    },

    #[error("no MIG profile with id {id} on {model}")]
    UnknownProfileId { id: u32, model: String },

    #[error("{profile} cannot start at memory slice {start} (allowed starts: {allowed})")]
    StartNotAllowed {
        profile: String,
        start: u8,
        allowed: String,
    },

    #[error("{profile}@{start} overlaps placement {other}")]
    Overlap {
        profile: String,
        start: u8,
        other: String,
    },

    #[error("{profile}@{start} needs {needed} compute slices but only {free} of 7 are free")]
    ComputeExhausted {
        profile: String,
        start: u8,
        needed: u8,
        free: u8,
    },

    #[error("{profile}: maximum of {max} instances per GPU reached")]
    MaxInstances { profile: String, max: u8 },

    #[error("placement {placement} is not in the layout")]
    NotInLayout { placement: String },

    #[error("instance {placement} is not held by any session")]
    NotHeld { placement: String },

    #[error("instance {placement} on gpu{gpu} is not free")]
    InstanceHeld { gpu: usize, placement: String },

    #[error("no room for {profile}: {reason}")]
    NoRoom { profile: String, reason: String },

    #[error("gpu index {index} out of range ({count} GPUs)")]
    NoSuchGpu { index: usize, count: usize },

    #[error("unknown static layout '{name}' for {model} (known: {known})")]
    UnknownStaticLayout {
        name: String,
        model: String,
        known: String,
    },

    #[error("invalid catalog {model}: {reason}")]
    InvalidCatalog { model: String, reason: String },
}
