pub mod bookings;
pub mod class;
pub mod course;
mod import;
pub mod list;
pub mod policy;
