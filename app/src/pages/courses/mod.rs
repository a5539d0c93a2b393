pub mod bookings;
pub mod class;
pub mod course;
mod image_choices;
mod import;
pub mod list;
pub mod policy;
