//! Courses and their members: creating courses, assigning instructors, removing
//! students, resetting a student's password, importing rosters from CSV with a preview, the
//! instructor's view of the class, and what the course lets its students run (`policy`).

mod class;
mod invitations;
pub mod lms;
pub mod lms_platforms;
mod manage;
mod policy;
mod roster;
mod roster_csv;
mod student_password;

pub use class::{class_view, usage_csv, ClassSession, ClassView, StudentUsage};
pub use invitations::answer_invitation;
pub use manage::{
    assign_instructor, check_course_code, check_course_title, create_course, remove_student,
};
pub use policy::{
    admin_limit_problems, policy_of, set_policy, split_list, CoursePolicy, FieldProblem, PolicyForm, PolicyFormRules, Quota,
};
pub use roster::{
    apply_roster, one_time_passwords_csv, preview_roster, Importer, RosterApplied, RosterPreview,
    RowAction, RowError, RowPlan,
};
pub use roster_csv::{MAX_ROSTER_BYTES, MAX_ROSTER_ROWS};
pub use student_password::{reset_student_password, Resetter};
