use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::error::MigError;
use crate::layout::{Layout, Placement};

/// How a GPU's instances come and go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The portal creates the instance a claim needs and destroys it on release.
    Dynamic,
    /// An admin-chosen layout stays in place; claims take a free instance of the profile.
    Static,
}

/// What the allocator does on the chosen GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Create a new GPU instance at the placement (dynamic mode).
    Create,
    /// Take an existing instance that no session holds.
    Claim,
}

/// A decision of the allocator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub gpu_index: usize,
    pub placement: Placement,
    pub action: Action,
    /// One line for logs and the admin UI.
    pub explanation: String,
}

/// One GPU as the allocator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuState<'c> {
    pub catalog: &'c Catalog,
    pub mode: Mode,
    /// Every GPU instance that exists on the GPU.
    pub layout: Layout,
    /// The instances of `layout` that a session holds.
    pub held: Vec<Placement>,
}

impl<'c> GpuState<'c> {
    /// A dynamic GPU with no instances.
    pub fn dynamic(catalog: &'c Catalog) -> GpuState<'c> {
        GpuState {
            catalog,
            mode: Mode::Dynamic,
            layout: Layout::new(),
            held: Vec::new(),
        }
    }

    /// A static GPU carrying one of the catalog's named layouts (`all-1g.10gb`, `all-balanced`…),
    /// all instances free.
    pub fn with_static_layout(catalog: &'c Catalog, name: &str) -> Result<GpuState<'c>, MigError> {
        let layout = catalog.static_layout(name)?.layout;
        GpuState::with_fixed_layout(catalog, layout)
    }

    /// A static GPU carrying any valid layout, all instances free.
    pub fn with_fixed_layout(
        catalog: &'c Catalog,
        layout: Layout,
    ) -> Result<GpuState<'c>, MigError> {
        layout.validate(catalog)?;
        Ok(GpuState {
            catalog,
            mode: Mode::Static,
            layout,
            held: Vec::new(),
        })
    }

    pub fn is_held(&self, placement: Placement) -> bool {
        self.held.contains(&placement)
    }

    /// Instances that exist and that no session holds.
    pub fn free_instances(&self) -> impl Iterator<Item = Placement> + '_ {
        self.layout
            .placements()
            .iter()
            .copied()
            .filter(|&p| !self.is_held(p))
    }

    /// Carries out a decision for this GPU; on error nothing changes.
    pub fn apply(&mut self, decision: &Decision) -> Result<(), MigError> {
        let placement = decision.placement;
        match decision.action {
            Action::Create => self.layout.insert(self.catalog, placement)?,
            Action::Claim => {
                if !self.layout.contains(placement) {
                    return Err(MigError::NotInLayout {
                        placement: placement.describe(self.catalog),
                    });
                }
                if self.is_held(placement) {
                    return Err(MigError::InstanceHeld {
                        gpu: decision.gpu_index,
                        placement: placement.describe(self.catalog),
                    });
                }
            }
        }
        self.held.push(placement);
        Ok(())
    }

    /// Ends a claim: dynamic GPUs destroy the instance, static ones keep it as a free instance.
    pub fn release(&mut self, placement: Placement) -> Result<(), MigError> {
        let Some(i) = self.held.iter().position(|&p| p == placement) else {
            return Err(MigError::NotHeld {
                placement: placement.describe(self.catalog),
            });
        };
        if self.mode == Mode::Dynamic {
            self.layout.remove(self.catalog, placement)?;
        }
        self.held.swap_remove(i);
        Ok(())
    }
}

/// The layout after destroying `placement` (dynamic release); nothing else is touched.
pub fn release(
    catalog: &Catalog,
    layout: &Layout,
    placement: Placement,
) -> Result<Layout, MigError> {
    let mut next = layout.clone();
    next.remove(catalog, placement)?;
    Ok(next)
}
