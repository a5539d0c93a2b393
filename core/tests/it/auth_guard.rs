//! The authorization rule as a table: every action against every kind of caller.

use slicehub_core::auth::{authorize, Action, Caller, Denied};
use slicehub_core::store::Role;
use slicehub_core::{CourseId, UserId};

const COURSE_A: CourseId = CourseId(10);
const COURSE_B: CourseId = CourseId(20);
const ADMIN: UserId = UserId(1);
const STUDENT_A: UserId = UserId(2);

fn user(id: UserId, is_admin: bool, must_change: bool, memberships: &[(CourseId, Role)]) -> Caller {
    Caller::User {
        id,
        username: format!("user{id}"),
        is_admin,
        must_change_password: must_change,
        memberships: memberships.to_vec(),
    }
}

/// The callers, in the column order of `expected`.
fn callers() -> [(&'static str, Caller); 6] {
    [
        ("anonymous", Caller::Anonymous),
        (
            "student of A",
            user(STUDENT_A, false, false, &[(COURSE_A, Role::Student)]),
        ),
        (
            "student of B",
            user(UserId(3), false, false, &[(COURSE_B, Role::Student)]),
        ),
        (
            "instructor of A",
            user(UserId(4), false, false, &[(COURSE_A, Role::Instructor)]),
        ),
        ("admin", user(ADMIN, true, false, &[])),
        (
            "must change password",
            user(UserId(5), false, true, &[(COURSE_A, Role::Student)]),
        ),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Allow,
    NotLoggedIn,
    Forbidden,
    MustChange,
}
use Outcome::{Allow as A, Forbidden as F, MustChange as M, NotLoggedIn as N};

fn outcome(result: Result<(), Denied>) -> Outcome {
    match result {
        Ok(()) => A,
        Err(Denied::NotLoggedIn) => N,
        Err(Denied::Forbidden) => F,
        Err(Denied::MustChangePassword) => M,
    }
}

/// Columns: anonymous, student of A, student of B, instructor of A, admin, must change.
/// No wildcard arm: a new Action does not compile until its row is written here.
fn expected(action: &Action) -> [Outcome; 6] {
    const ADMIN_ONLY: [Outcome; 6] = [N, F, F, F, A, M];
    match action {
        Action::ViewOwnAccount | Action::ChangeOwnPassword => [N, A, A, A, A, A],
        Action::ListUsers | Action::CreateUser => ADMIN_ONLY,
        Action::ResetPassword(_) | Action::DisableUser(_) => ADMIN_ONLY,
        Action::CreateCourse | Action::ListAllCourses => ADMIN_ONLY,
        Action::ListOwnCourses => [N, A, A, A, A, M],
        Action::ViewCourse(course) if *course == COURSE_A => [N, A, F, A, A, M],
        Action::ViewCourse(_) => [N, F, A, F, A, M],
        Action::ManageRoster(course) if *course == COURSE_A => [N, F, F, A, A, M],
        Action::ManageRoster(_) => ADMIN_ONLY,
        Action::ResetStudentPassword(course) if *course == COURSE_A => [N, F, F, A, A, M],
        Action::ResetStudentPassword(_) => ADMIN_ONLY,
        Action::AssignInstructor(_) => ADMIN_ONLY,
        Action::ViewGpus | Action::ViewStatus => ADMIN_ONLY,
        Action::ReadAuditLog | Action::ListAllSessions | Action::OperateGpus | Action::ManageSignIn => ADMIN_ONLY,
        Action::ListOwnSessions => [N, A, A, A, A, M],
        Action::LaunchIn(course) if *course == COURSE_A => [N, A, F, A, A, M],
        Action::LaunchIn(_) => [N, F, A, F, A, M],
        // A session of student A in course A: its owner, A's instructor and admins.
        Action::ManageSession { course, .. } if *course == COURSE_A => [N, A, F, A, A, M],
        // Student A's session in course B: only its owner and admins.
        Action::ManageSession { .. } => [N, A, F, F, A, M],
        Action::SetCoursePolicy(course) if *course == COURSE_A => [N, F, F, A, A, M],
        Action::SetCoursePolicy(_) => ADMIN_ONLY,
        Action::WatchClass(course) if *course == COURSE_A => [N, F, F, A, A, M],
        Action::WatchClass(_) => ADMIN_ONLY,
        // The report page: admins and anyone who teaches a course.
        Action::ViewReports => [N, F, F, A, A, M],
        Action::ReportOn(course) if *course == COURSE_A => [N, F, F, A, A, M],
        Action::ReportOn(_) => ADMIN_ONLY,
    }
}

/// Which variant an action is; exhaustive, so the coverage check below sees new ones.
fn variant(action: &Action) -> usize {
    match action {
        Action::ViewOwnAccount => 0,
        Action::ChangeOwnPassword => 1,
        Action::ListUsers => 2,
        Action::CreateUser => 3,
        Action::ResetPassword(_) => 4,
        Action::DisableUser(_) => 5,
        Action::CreateCourse => 6,
        Action::ListAllCourses => 7,
        Action::ViewCourse(_) => 8,
        Action::ManageRoster(_) => 9,
        Action::AssignInstructor(_) => 10,
        Action::ViewGpus => 11,
        Action::ViewStatus => 12,
        Action::ListOwnCourses => 13,
        Action::ListOwnSessions => 14,
        Action::LaunchIn(_) => 15,
        Action::ManageSession { .. } => 16,
        Action::SetCoursePolicy(_) => 17,
        Action::WatchClass(_) => 18,
        Action::ViewReports => 19,
        Action::ReportOn(_) => 20,
        Action::ReadAuditLog => 21,
        Action::ListAllSessions => 22,
        Action::OperateGpus => 23,
        Action::ResetStudentPassword(_) => 24,
        Action::ManageSignIn => 25,
    }
}
const VARIANTS: usize = 26;

fn actions() -> Vec<Action> {
    vec![
        Action::ViewOwnAccount,
        Action::ChangeOwnPassword,
        Action::ListUsers,
        Action::CreateUser,
        Action::ResetPassword(STUDENT_A),
        Action::DisableUser(STUDENT_A),
        Action::CreateCourse,
        Action::ListOwnCourses,
        Action::ListAllCourses,
        Action::ViewCourse(COURSE_A),
        Action::ViewCourse(COURSE_B),
        Action::ManageRoster(COURSE_A),
        Action::ManageRoster(COURSE_B),
        Action::ResetStudentPassword(COURSE_A),
        Action::ResetStudentPassword(COURSE_B),
        Action::AssignInstructor(COURSE_A),
        Action::ViewGpus,
        Action::ViewStatus,
        Action::ListOwnSessions,
        Action::LaunchIn(COURSE_A),
        Action::LaunchIn(COURSE_B),
        Action::ManageSession { owner: STUDENT_A, course: COURSE_A },
        Action::ManageSession { owner: STUDENT_A, course: COURSE_B },
        Action::SetCoursePolicy(COURSE_A),
        Action::SetCoursePolicy(COURSE_B),
        Action::WatchClass(COURSE_A),
        Action::WatchClass(COURSE_B),
        Action::ViewReports,
        Action::ReportOn(COURSE_A),
        Action::ReportOn(COURSE_B),
        Action::ReadAuditLog,
        Action::ListAllSessions,
        Action::OperateGpus,
        Action::ManageSignIn,
    ]
}

#[test]
fn every_action_for_every_caller_matches_the_table() {
    let mut covered = [false; VARIANTS];
    let mut mismatches = Vec::new();
    for action in actions() {
        covered[variant(&action)] = true;
        for ((name, caller), want) in callers().iter().zip(expected(&action)) {
            let got = outcome(authorize(caller, &action));
            if got != want {
                mismatches.push(format!(
                    "{action:?} as {name}: expected {want:?}, got {got:?}"
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !covered[*i]).collect();
    assert!(missing.is_empty(), "actions() lacks variants {missing:?}");
}

#[test]
fn an_admin_cannot_disable_their_own_account() {
    let admin = user(ADMIN, true, false, &[]);
    assert_eq!(
        authorize(&admin, &Action::DisableUser(ADMIN)),
        Err(Denied::Forbidden)
    );
    assert_eq!(authorize(&admin, &Action::ResetPassword(ADMIN)), Ok(()));
}

#[test]
fn an_admin_with_a_one_time_password_must_change_it_first() {
    let admin = user(ADMIN, true, true, &[]);
    assert_eq!(
        authorize(&admin, &Action::ListUsers),
        Err(Denied::MustChangePassword)
    );
    assert_eq!(authorize(&admin, &Action::ChangeOwnPassword), Ok(()));
}

#[test]
fn one_person_can_teach_one_course_and_take_another() {
    let both = user(
        UserId(7),
        false,
        false,
        &[(COURSE_A, Role::Instructor), (COURSE_B, Role::Student)],
    );
    assert_eq!(authorize(&both, &Action::ManageRoster(COURSE_A)), Ok(()));
    assert_eq!(authorize(&both, &Action::ViewCourse(COURSE_B)), Ok(()));
    assert_eq!(
        authorize(&both, &Action::ManageRoster(COURSE_B)),
        Err(Denied::Forbidden)
    );
    assert_eq!(
        authorize(&both, &Action::AssignInstructor(COURSE_A)),
        Err(Denied::Forbidden)
    );
}

#[test]
fn denials_read_as_sentences() {
    assert_eq!(Denied::NotLoggedIn.to_string(), "Please log in.");
    assert_eq!(
        Denied::Forbidden.to_string(),
        "You do not have permission to do that."
    );
    assert_eq!(
        Denied::MustChangePassword.to_string(),
        "Choose a new password before you continue."
    );
}
