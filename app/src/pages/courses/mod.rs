pub mod course;
mod import;
pub mod list;
