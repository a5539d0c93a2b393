//! The integration tests of `mig`: one binary, one module per topic.


mod allocator;
mod catalogs;
mod layouts;
mod properties;
mod queue_bound;
mod whole_gpus;
