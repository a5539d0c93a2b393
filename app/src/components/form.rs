use leptos::html;
use leptos::prelude::*;

/// Empties `form`'s fields each time `succeeded` turns true, so the next entry starts
/// clean while the success message stays.
pub fn reset_on_success(form: NodeRef<html::Form>, succeeded: impl Fn() -> bool + 'static) {
    Effect::new(move |_| {
        if succeeded() {
            if let Some(form) = form.get_untracked() {
                form.reset();
            }
        }
    });
}
