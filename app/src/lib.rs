//! SliceHub's UI. Compiled twice: for the server (`ssr`) and to wasm (`hydrate`).
// Leptos view types nest deeply; the compiler needs more room to lay them out.
#![recursion_limit = "256"]

pub mod api;
mod components;
pub mod error;
mod pages;
mod shell;
mod slice_size;
pub mod views;

pub use shell::{shell, App};
