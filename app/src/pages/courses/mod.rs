pub mod bookings;
pub mod class;
pub mod course;
mod tick_list;
mod import;
mod invitations;
mod lms_roster;
pub mod list;
pub mod policy;
