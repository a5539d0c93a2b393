pub mod gpu_card;
pub mod layout;
pub mod slice_bar;
pub mod status_panel;
