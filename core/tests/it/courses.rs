//! Courses, members and roster imports, on SQLite and PostgreSQL.

#[allow(dead_code)]

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use slicehub_core::auth::{
    add_user, set_disabled, Authenticator, LoginLimits, NewUser, PasswordHasher, LoginPolicy,
};
use slicehub_core::clock::SystemClock;
use slicehub_core::courses::{
    answer_invitation, apply_roster, assign_instructor, create_course, one_time_passwords_csv, preview_roster,
    remove_student, reset_student_password, Importer, Resetter, RowAction, RowPlan,
};
use slicehub_core::store::{Course, Role, Store, User};
use slicehub_core::CoreError;

const PASSWORD: &str = "correct horse battery";

async fn course(store: &Store, code: &str) -> Course {
    create_course(store, code, &format!("Course {code}"), "admin")
        .await
        .unwrap()
}

async fn user(store: &Store, hasher: &PasswordHasher, username: &str, is_admin: bool) -> User {
    let new = NewUser {
        username: username.into(),
        display_name: format!("{username} stored"),
        password: Some(PASSWORD.into()),
        is_admin,
        ..NewUser::default()
    };
    add_user(store, hasher, new, "admin").await.unwrap().user
}

fn authenticator(store: &Store, hasher: &PasswordHasher) -> Authenticator {
    let policy = LoginPolicy {
        idle_ms: 3_600_000,
        absolute_ms: 86_400_000,
    };
    Authenticator::new(
        store.clone(),
        hasher.clone(),
        policy,
        LoginLimits::default(),
        Arc::new(SystemClock),
    )
}

fn actions(rows: &[RowPlan]) -> Vec<(&str, RowAction)> {
    rows.iter()
        .map(|r| (r.username.as_str(), r.action))
        .collect()
}

async fn members(store: &Store, course: &Course) -> Vec<(String, Role)> {
    let members = store.course_members(course.id).await.unwrap();
    members
        .into_iter()
        .map(|m| (m.user.username, m.role))
        .collect()
}

on_both_databases!(
    courses_are_unique_in_any_case_and_listed_by_code,
    instructors_are_assigned_and_may_take_other_courses,
    students_are_removed_explicitly_and_audited,
    instructors_reset_only_plain_students_of_their_course,
    an_instructors_roster_invites_existing_accounts_and_only_their_owners_answer,
    roster_errors_name_their_lines,
    roster_in_latin1_is_refused_with_the_fix,
    roster_with_bom_crlf_and_quoted_commas_is_read,
    roster_without_a_header_is_refused,
    roster_import_creates_and_enrolls_and_reimport_changes_nothing,
    roster_neither_shows_nor_changes_an_existing_account,
    roster_refuses_administrators_accounts,
    roster_with_errors_is_not_applied_at_all,
    roster_passwords_are_one_time_either_way,
    roster_of_5000_rows_previews_and_applies,
);

async fn courses_are_unique_in_any_case_and_listed_by_code(store: Store) {
    let ml = course(&store, "ML-200").await;
    let cs = course(&store, "CS-101").await;
    let dup = create_course(&store, "cs-101", "Again", "admin")
        .await
        .unwrap_err();
    assert!(matches!(dup, CoreError::Conflict(_)), "{dup}");
    let bad = create_course(&store, "C", "Too short", "admin")
        .await
        .unwrap_err();
    assert!(matches!(bad, CoreError::InvalidRequest(_)), "{bad}");
    let bad = create_course(&store, "CS-102", "  ", "admin")
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("title is empty"), "{bad}");

    assert_eq!(store.list_courses().await.unwrap(), vec![cs.clone(), ml]);
    assert_eq!(store.course_by_code("cs-101").await.unwrap(), Some(cs));
    let created = store.recent_audit(Some("course.create"), 5).await.unwrap();
    assert_eq!(created.len(), 2);
    assert_eq!(created[0].subject, "CS-101");
}

async fn instructors_are_assigned_and_may_take_other_courses(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let ml = course(&store, "ML-200").await;
    let tina = user(&store, &hasher, "tina", false).await;
    apply_roster(
        &store,
        &hasher,
        cs.id,
        b"username,display name\ntina,Tina\n",
        "admin", Importer::Administrator,
    )
    .await
    .unwrap();
    assign_instructor(&store, ml.id, tina.id, "admin")
        .await
        .unwrap();
    assert_eq!(
        store.courses_of_user(tina.id).await.unwrap(),
        vec![(cs.clone(), Role::Student), (ml.clone(), Role::Instructor)]
    );

    assign_instructor(&store, cs.id, tina.id, "admin")
        .await
        .unwrap();
    assert_eq!(
        members(&store, &cs).await,
        vec![("tina".to_string(), Role::Instructor)]
    );
    let err = assign_instructor(&store, cs.id, slicehub_core::UserId(9_999), "admin")
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::NotFound(_)), "{err}");
    let audit = store
        .recent_audit(Some("course.instructor.assign"), 5)
        .await
        .unwrap();
    assert_eq!(
        (audit[0].subject.as_str(), audit[0].detail.as_str()),
        ("CS-101", "tina")
    );
}

async fn students_are_removed_explicitly_and_audited(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let file = b"username,display name\nsam,Sam\nteo,Teo\n";
    apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap();
    let sam = store.user_by_username("sam").await.unwrap().unwrap();
    let teo = store.user_by_username("teo").await.unwrap().unwrap();
    assign_instructor(&store, cs.id, teo.id, "admin")
        .await
        .unwrap();

    remove_student(&store, cs.id, sam.id, "tina").await.unwrap();
    assert_eq!(
        members(&store, &cs).await,
        vec![("teo".to_string(), Role::Instructor)]
    );
    assert!(
        store.user_by_id(sam.id).await.unwrap().is_some(),
        "the account stays"
    );
    let again = remove_student(&store, cs.id, sam.id, "tina")
        .await
        .unwrap_err();
    assert!(
        again.to_string().contains("sam is not a student of CS-101"),
        "{again}"
    );
    let instructor = remove_student(&store, cs.id, teo.id, "tina")
        .await
        .unwrap_err();
    assert!(matches!(instructor, CoreError::NotFound(_)), "{instructor}");
    assert_eq!(
        members(&store, &cs).await.len(),
        1,
        "instructors are not removed as students"
    );

    let audit = store.recent_audit(Some("roster.remove"), 5).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(
        (
            audit[0].actor.as_str(),
            audit[0].subject.as_str(),
            audit[0].detail.as_str()
        ),
        ("tina", "CS-101", "sam")
    );
}

async fn instructors_reset_only_plain_students_of_their_course(store: Store) {
    let hasher = PasswordHasher::new(2);
    let auth = authenticator(&store, &hasher);
    let here = IpAddr::from([127, 0, 0, 1]);
    let cs = course(&store, "CS-101").await;
    let ml = course(&store, "ML-200").await;
    let sam = user(&store, &hasher, "sam", false).await;
    let teo = user(&store, &hasher, "teo", false).await;
    let ada = user(&store, &hasher, "ada", true).await;
    let bob = user(&store, &hasher, "bob", false).await;
    for (course, who, role) in [
        (&cs, &sam, Role::Student),
        (&cs, &teo, Role::Student),
        (&ml, &teo, Role::Instructor),
        (&cs, &ada, Role::Student),
        (&ml, &bob, Role::Student),
    ] {
        store.set_member_role(course.id, who.id, role).await.unwrap();
    }
    let sams_login = auth.login("sam", PASSWORD, here).await.unwrap();
    // tina teaches CS-101 only.
    let tina = &Resetter::Instructor { manages: vec![cs.id] };

    let (reset, one_time) = reset_student_password(&store, &hasher, cs.id, "sam", tina, "tina")
        .await
        .unwrap();
    assert_eq!(reset.id, sam.id);
    assert!(
        auth.login_user(&sams_login.token).await.unwrap().is_none(),
        "the student's open sessions end with the reset"
    );
    assert!(auth.login("sam", PASSWORD, here).await.is_err(), "the old password no longer works");
    let fresh = auth.login("sam", &one_time, here).await.unwrap();
    assert!(fresh.user.must_change_password, "the new one is one-time");
    let audit = store.recent_audit(Some("password.reset"), 5).await.unwrap();
    assert_eq!(
        (audit[0].actor.as_str(), audit[0].subject.as_str()),
        ("tina", "sam")
    );

    // From the attacker's side: an instructor of CS-101 takes over no account that is
    // not a plain student of CS-101, and learns nothing new of one outside it.
    let teaches = reset_student_password(&store, &hasher, cs.id, "teo", tina, "tina")
        .await
        .unwrap_err();
    assert!(matches!(teaches, CoreError::NoPermission(_)), "{teaches}");
    let admin = reset_student_password(&store, &hasher, cs.id, "ada", tina, "tina")
        .await
        .unwrap_err();
    assert!(matches!(admin, CoreError::NoPermission(_)), "{admin}");
    let elsewhere = reset_student_password(&store, &hasher, cs.id, "bob", tina, "tina")
        .await
        .unwrap_err();
    let nobody = reset_student_password(&store, &hasher, cs.id, "nobody", tina, "tina")
        .await
        .unwrap_err();
    assert!(matches!(elsewhere, CoreError::NotFound(_)), "{elsewhere}");
    assert_eq!(
        elsewhere.to_string().replace("bob", "X"),
        nobody.to_string().replace("nobody", "X"),
        "a student of another course reads as no account at all"
    );
    // A student of CS-101 who also takes ML-200: the new password would open ML-200's
    // work too, which tina does not run.
    let kim = user(&store, &hasher, "kim", false).await;
    store.set_member_role(cs.id, kim.id, Role::Student).await.unwrap();
    store.set_member_role(ml.id, kim.id, Role::Student).await.unwrap();
    let elsewhere_too = reset_student_password(&store, &hasher, cs.id, "kim", tina, "tina")
        .await
        .unwrap_err();
    assert!(matches!(elsewhere_too, CoreError::NoPermission(_)), "{elsewhere_too}");
    for name in ["teo", "ada", "bob", "kim"] {
        let login = auth.login(name, PASSWORD, here).await;
        assert!(login.is_ok(), "{name}'s password was not touched");
    }
    // An instructor of both courses, or an administrator, may.
    let both = Resetter::Instructor { manages: vec![cs.id, ml.id] };
    reset_student_password(&store, &hasher, cs.id, "kim", &both, "tina").await.unwrap();
    reset_student_password(&store, &hasher, cs.id, "teo", &Resetter::Administrator, "admin").await.unwrap();
    assert_eq!(
        store.recent_audit(Some("password.reset"), 5).await.unwrap().len(),
        3,
        "only the allowed resets were made"
    );
}

async fn an_instructors_roster_invites_existing_accounts_and_only_their_owners_answer(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let ml = course(&store, "ML-200").await;
    let bob = user(&store, &hasher, "bob", false).await;
    let ada = user(&store, &hasher, "ada", true).await;
    store.set_member_role(ml.id, bob.id, Role::Student).await.unwrap();
    let file = b"username,display name,email\nbob,Evil Name,evil@attacker.example\nada,,\nnewbie,New,\n";

    // The instructor's preview: both existing accounts read alike (nobody learns who
    // administers), and nothing of theirs is shown.
    let preview = preview_roster(&store, cs.id, file, Importer::Instructor).await.unwrap();
    assert!(preview.errors.is_empty(), "{:?}", preview.errors);
    assert_eq!(
        actions(&preview.rows),
        [("bob", RowAction::Invite), ("ada", RowAction::Invite), ("newbie", RowAction::Create)]
    );
    assert!(preview.rows[..2].iter().all(|r| r.new_account.is_none()));

    let applied = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Instructor).await.unwrap();
    assert_eq!((applied.created, applied.enrolled, applied.invited), (1, 0, 2));
    assert_eq!(
        members(&store, &cs).await,
        [("newbie".to_string(), Role::Student)],
        "no existing account joined without its owner's word"
    );
    let bob_now = store.user_by_id(bob.id).await.unwrap().unwrap();
    assert_eq!((bob_now.display_name.as_str(), bob_now.email), ("bob stored", None), "the file changed nothing of bob's");
    let invited: Vec<String> = store.invitations_of_course(cs.id).await.unwrap().into_iter().map(|i| i.username).collect();
    assert_eq!(invited, ["ada", "bob"]);
    let again = preview_roster(&store, cs.id, file, Importer::Instructor).await.unwrap();
    assert_eq!(again.count(RowAction::Unchanged), 3, "importing again changes nothing");
    let bobs: Vec<String> = store.invitations_of_user(bob.id).await.unwrap().into_iter().map(|i| i.course.code).collect();
    assert_eq!(bobs, ["CS-101"]);

    // Only an invitation's own account answers it.
    let newbie = store.user_by_username("newbie").await.unwrap().unwrap();
    assert!(store.invitations_of_user(newbie.id).await.unwrap().is_empty(), "nobody sees another's invitations");
    let stolen = answer_invitation(&store, "CS-101", newbie.id, true, "newbie").await.unwrap_err();
    assert!(matches!(stolen, CoreError::NotFound(_)), "{stolen}");
    let nowhere = answer_invitation(&store, "NO-SUCH", bob.id, true, "bob").await.unwrap_err();
    assert!(matches!(nowhere, CoreError::NotFound(_)), "{nowhere}");
    answer_invitation(&store, "cs-101", bob.id, true, "bob").await.unwrap();
    answer_invitation(&store, "CS-101", ada.id, false, "ada").await.unwrap();
    assert_eq!(
        members(&store, &cs).await,
        [("bob".to_string(), Role::Student), ("newbie".to_string(), Role::Student)]
    );
    let twice = answer_invitation(&store, "CS-101", ada.id, true, "ada").await.unwrap_err();
    assert!(matches!(twice, CoreError::NotFound(_)), "a declined invitation is gone: {twice}");
    assert!(store.invitations_of_course(cs.id).await.unwrap().is_empty());
    let joined = store.recent_audit(Some("course.invitation.join"), 5).await.unwrap();
    assert_eq!((joined[0].actor.as_str(), joined[0].subject.as_str()), ("bob", "CS-101"));

    // Any other membership change answers an invitation: once removed, an old
    // invitation does not let its account back in.
    let zed = user(&store, &hasher, "zed", false).await;
    apply_roster(&store, &hasher, cs.id, b"username,display name\nzed,Zed\n", "tina", Importer::Instructor).await.unwrap();
    store.set_member_role(cs.id, zed.id, Role::Student).await.unwrap();
    assert!(store.invitations_of_course(cs.id).await.unwrap().is_empty(), "enrolled: no longer pending");
    remove_student(&store, cs.id, zed.id, "tina").await.unwrap();
    let back = answer_invitation(&store, "CS-101", zed.id, true, "zed").await.unwrap_err();
    assert!(matches!(back, CoreError::NotFound(_)), "{back}");
    assert!(!members(&store, &cs).await.iter().any(|(name, _)| name == "zed"));
}

async fn roster_errors_name_their_lines(store: Store) {
    let cs = course(&store, "CS-101").await;
    let file = "username,display name,email,password\n\
                alice,Alice A,alice@uni.example,\n\
                ,No Name,,\n\
                bad name,Bad,,\n\
                carol,Carol,carol@,\n\
                dave,Dave,,short\n\
                Alice,Alice again,,\n";
    let preview = preview_roster(&store, cs.id, file.as_bytes(), Importer::Administrator)
        .await
        .unwrap();
    let errors: Vec<String> = preview.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "line 3: the username is empty",
            "line 4: the username “bad name” may only contain letters a-z, digits, '.', '_' and '-'",
            "line 5: “carol@” is not an email address",
            "line 6: the password is shorter than 10 characters",
            "line 7: the username “alice” appears on line 2 and again on line 7",
        ]
    );
    assert_eq!(actions(&preview.rows), [("alice", RowAction::Create)]);
    assert_eq!(preview.rows[0].line, 2);
}

async fn roster_in_latin1_is_refused_with_the_fix(store: Store) {
    let cs = course(&store, "CS-101").await;
    let latin1 = b"username,display name\nann,Ann\njose,Jos\xe9 Garc\xeda\n";
    let preview = preview_roster(&store, cs.id, latin1, Importer::Administrator).await.unwrap();
    assert!(preview.rows.is_empty());
    assert_eq!(preview.errors.len(), 1);
    assert_eq!(preview.errors[0].line, 3);
    assert!(
        preview.errors[0].message.contains("save the file as UTF-8"),
        "{:?}",
        preview.errors
    );
}

async fn roster_with_bom_crlf_and_quoted_commas_is_read(store: Store) {
    let cs = course(&store, "CS-101").await;
    let file = "\u{feff}Username,Display_Name,Email\r\n\
                anna,\"Smith, Anna\",anna@uni.example\r\n\
                \r\n\
                jürgen.x,Jürgen,\r\n";
    let preview = preview_roster(&store, cs.id, file.as_bytes(), Importer::Administrator)
        .await
        .unwrap();
    assert_eq!(preview.rows.len(), 1);
    let new = preview.rows[0].new_account.as_ref().unwrap();
    assert_eq!(new.display_name, "Smith, Anna");
    assert_eq!(new.email.as_deref(), Some("anna@uni.example"));
    assert_eq!(preview.errors.len(), 1, "{:?}", preview.errors);
    assert_eq!(preview.errors[0].line, 4, "the blank line still counts");
}

async fn roster_without_a_header_is_refused(store: Store) {
    let cs = course(&store, "CS-101").await;
    let preview = preview_roster(&store, cs.id, b"alice,Alice,alice@uni.example\n", Importer::Administrator)
        .await
        .unwrap();
    assert!(preview.rows.is_empty());
    assert_eq!(preview.errors[0].line, 1);
    assert!(
        preview.errors[0].message.contains("header"),
        "{:?}",
        preview.errors
    );
    let err = preview_roster(&store, slicehub_core::CourseId(9_999), b"username,display name\n", Importer::Administrator)
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::NotFound(_)), "{err}");
}

async fn roster_import_creates_and_enrolls_and_reimport_changes_nothing(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let other = course(&store, "ML-200").await;
    let bob = user(&store, &hasher, "bob", false).await;
    user(&store, &hasher, "carl", false).await;
    apply_roster(
        &store,
        &hasher,
        cs.id,
        b"username,display name\ncarl,Carl Old\n",
        "t", Importer::Administrator,
    )
    .await
    .unwrap();
    let ivy = user(&store, &hasher, "ivy", false).await;
    assign_instructor(&store, other.id, ivy.id, "admin")
        .await
        .unwrap();

    let file = b"username,display name,email,password\n\
                 alice,Alice A,alice@uni.example,\n\
                 bob,Bob B,,ignored for existing accounts\n\
                 carl,Carl New,,\n\
                 ivy,Ivy Renamed,ivy@x.org,\n";
    let preview = preview_roster(&store, cs.id, file, Importer::Administrator).await.unwrap();
    assert!(preview.errors.is_empty(), "{:?}", preview.errors);
    assert_eq!(
        actions(&preview.rows),
        [
            ("alice", RowAction::Create),
            ("bob", RowAction::Enroll),
            ("carl", RowAction::Unchanged),
            ("ivy", RowAction::Enroll),
        ]
    );
    assert_eq!(
        store.count_users().await.unwrap(),
        3,
        "a preview writes nothing"
    );

    let applied = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap();
    assert_eq!(
        (applied.created, applied.enrolled, applied.unchanged),
        (1, 2, 1)
    );
    assert_eq!(applied.one_time_passwords.len(), 1);
    assert_eq!(applied.one_time_passwords[0].0, "alice");
    let csv = one_time_passwords_csv(&applied);
    assert_eq!(
        csv,
        format!(
            "username,one-time password\r\nalice,{}\r\n",
            applied.one_time_passwords[0].1
        )
    );
    assert_eq!(
        store.user_by_id(bob.id).await.unwrap().unwrap().display_name,
        "bob stored",
        "an existing account keeps its name"
    );
    assert_eq!(
        members(&store, &cs).await,
        [
            ("alice".to_string(), Role::Student),
            ("bob".to_string(), Role::Student),
            ("carl".to_string(), Role::Student),
            ("ivy".to_string(), Role::Student),
        ]
    );
    let login = authenticator(&store, &hasher)
        .login(
            "alice",
            &applied.one_time_passwords[0].1,
            IpAddr::from([127, 0, 0, 1]),
        )
        .await
        .unwrap();
    assert!(login.user.must_change_password);
    assert_eq!(login.user.display_name, "Alice A");
    assert_eq!(login.user.email.as_deref(), Some("alice@uni.example"));

    let alice_hash = store.password_hash_of(login.user.id).await.unwrap();
    let everyone = store.list_users().await.unwrap();
    let again = preview_roster(&store, cs.id, file, Importer::Administrator).await.unwrap();
    assert!(
        again.rows.iter().all(|r| r.action == RowAction::Unchanged),
        "{:?}",
        again.rows
    );
    let reapplied = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap();
    assert_eq!(
        (reapplied.created, reapplied.enrolled, reapplied.unchanged),
        (0, 0, 4)
    );
    assert!(reapplied.one_time_passwords.is_empty());
    assert_eq!(
        store.password_hash_of(login.user.id).await.unwrap(),
        alice_hash
    );
    assert_eq!(store.list_users().await.unwrap(), everyone, "no account changed");

    let imports = store.recent_audit(Some("roster.import"), 5).await.unwrap();
    assert_eq!(imports[1].detail, "created 1, enrolled 2, invited 0, unchanged 1");
    assert_eq!(
        (imports[1].actor.as_str(), imports[1].subject.as_str()),
        ("tina", "CS-101")
    );
    let created = store.recent_audit(Some("user.create"), 1).await.unwrap();
    assert_eq!(
        (created[0].subject.as_str(), created[0].detail.as_str()),
        ("alice", "roster import into CS-101")
    );
}

/// An instructor naming someone else's account in a roster learns only that it exists,
/// and changes nothing about it but its membership.
async fn roster_neither_shows_nor_changes_an_existing_account(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let new = NewUser {
        username: "bea".into(),
        display_name: "Bea Secret-Name".into(),
        email: Some("bea-secret@example.edu".into()),
        password: Some(PASSWORD.into()),
        ..NewUser::default()
    };
    let bea = add_user(&store, &hasher, new, "admin").await.unwrap().user;
    let dana = user(&store, &hasher, "dana", false).await;
    set_disabled(&store, dana.id, true, "admin").await.unwrap();
    let bea_hash = store.password_hash_of(bea.id).await.unwrap();
    let before = (
        store.user_by_id(bea.id).await.unwrap().unwrap(),
        store.user_by_id(dana.id).await.unwrap().unwrap(),
    );

    let file = b"username,display name,email,password\n\
                 bea,Bea Hijacked,attacker@evil.example,attacker chosen password\n\
                 dana,Dana Hijacked,attacker@evil.example,\n";
    let preview = preview_roster(&store, cs.id, file, Importer::Administrator).await.unwrap();
    assert!(preview.errors.is_empty(), "{:?}", preview.errors);
    assert_eq!(
        actions(&preview.rows),
        [("bea", RowAction::Enroll), ("dana", RowAction::Enroll)]
    );
    let shown = serde_json::to_string(&preview).unwrap();
    for secret in ["bea-secret@example.edu", "Secret-Name", "dana stored", "Hijacked"] {
        assert!(!shown.contains(secret), "the preview shows {secret}: {shown}");
    }
    assert!(preview.rows.iter().all(|r| r.new_account.is_none()));

    let applied = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap();
    assert_eq!((applied.created, applied.enrolled), (0, 2));
    assert!(applied.one_time_passwords.is_empty());
    let after = (
        store.user_by_id(bea.id).await.unwrap().unwrap(),
        store.user_by_id(dana.id).await.unwrap().unwrap(),
    );
    assert_eq!(after, before, "name, email and flags stay; dana stays disabled");
    assert_eq!(store.password_hash_of(bea.id).await.unwrap(), bea_hash);
    let refused = authenticator(&store, &hasher)
        .login("bea", "attacker chosen password", IpAddr::from([127, 0, 0, 1]))
        .await;
    assert!(refused.is_err(), "the file's password was not set");
    assert_eq!(
        members(&store, &cs).await,
        [
            ("bea".to_string(), Role::Student),
            ("dana".to_string(), Role::Student),
        ]
    );
}

async fn roster_refuses_administrators_accounts(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let root = user(&store, &hasher, "root", true).await;
    let file = b"username,display name\nnew1,New One\nroot,Root\n";
    let preview = preview_roster(&store, cs.id, file, Importer::Administrator).await.unwrap();
    assert_eq!(actions(&preview.rows), [("new1", RowAction::Create)]);
    let errors: Vec<String> = preview.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        ["line 3: `root` is an administrator's account; a roster import does not enrol \
          administrators (remove the line)"]
    );
    let err = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidRequest(_)), "{err}");
    assert!(err.to_string().contains("nothing was imported"), "{err}");
    assert!(members(&store, &cs).await.is_empty());
    assert_eq!(store.count_users().await.unwrap(), 1, "new1 was not created");
    assert_eq!(store.user_by_id(root.id).await.unwrap().unwrap(), root);
}

async fn roster_with_errors_is_not_applied_at_all(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let file = b"username,display name,email\nalice,Alice,\nbob,Bob,bob@\ncarol,Carol,\n";
    let err = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidRequest(_)), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("nothing was imported"), "{msg}");
    assert!(
        msg.contains("line 3: “bob@” is not an email address"),
        "{msg}"
    );
    assert_eq!(store.count_users().await.unwrap(), 0);
    assert!(members(&store, &cs).await.is_empty());
    assert!(store
        .recent_audit(Some("roster.import"), 5)
        .await
        .unwrap()
        .is_empty());
}

async fn roster_passwords_are_one_time_either_way(store: Store) {
    let hasher = PasswordHasher::new(2);
    let cs = course(&store, "CS-101").await;
    let file = b"username,display name,password\nemma,Emma,emma's first password\nfinn,Finn,\n";
    let applied = apply_roster(&store, &hasher, cs.id, file, "tina", Importer::Administrator)
        .await
        .unwrap();
    let generated: Vec<&str> = applied
        .one_time_passwords
        .iter()
        .map(|(u, _)| u.as_str())
        .collect();
    assert_eq!(
        generated,
        ["finn"],
        "only generated passwords are handed back"
    );
    let auth = authenticator(&store, &hasher);
    let emma = auth
        .login(
            "emma",
            "emma's first password",
            IpAddr::from([127, 0, 0, 1]),
        )
        .await;
    assert!(emma.unwrap().user.must_change_password);
}

async fn roster_of_5000_rows_previews_and_applies(store: Store) {
    let hasher = PasswordHasher::new(0);
    let cs = course(&store, "BIG-1").await;
    let mut file = String::from("username,display name,email\n");
    for i in 0..5_000 {
        file.push_str(&format!(
            "s{i:05},\"Student {i}, Jr.\",s{i:05}@uni.example\n"
        ));
    }
    let label = store.kind().label();

    let started = Instant::now();
    let preview = preview_roster(&store, cs.id, file.as_bytes(), Importer::Administrator)
        .await
        .unwrap();
    let preview_time = started.elapsed();
    assert!(
        preview.errors.is_empty(),
        "{:?}",
        &preview.errors[..3.min(preview.errors.len())]
    );
    assert_eq!(preview.count(RowAction::Create), 5_000);

    let started = Instant::now();
    let applied = apply_roster(&store, &hasher, cs.id, file.as_bytes(), "tina", Importer::Administrator)
        .await
        .unwrap();
    let apply_time = started.elapsed();
    assert_eq!(applied.created, 5_000);
    assert_eq!(applied.one_time_passwords.len(), 5_000);
    assert_eq!(store.course_members(cs.id).await.unwrap().len(), 5_000);

    let started = Instant::now();
    let again = preview_roster(&store, cs.id, file.as_bytes(), Importer::Administrator)
        .await
        .unwrap();
    let repreview_time = started.elapsed();
    assert_eq!(again.count(RowAction::Unchanged), 5_000);
    eprintln!(
        "5,000-row roster on {label}: preview {preview_time:.2?}, apply {apply_time:.2?} \
         ({} hashes at once), preview again {repreview_time:.2?}",
        hasher.concurrency()
    );
}
