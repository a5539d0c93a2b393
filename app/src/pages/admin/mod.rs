pub mod users;
pub mod audit;
pub mod operations;
pub mod lms;
