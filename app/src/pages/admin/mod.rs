pub mod users;
pub mod audit;
