//! What a sign-in provider's groups give and take back, against what was given by hand:
//! a right or membership given by hand is never taken back by a provider, and a provider
//! never takes the last enabled administrator's right. On SQLite and PostgreSQL.

use slicehub_core::auth::{add_user, apply_group_roles, set_admin, set_disabled, NewUser, PasswordHasher};
use slicehub_core::config::GroupRoles;
use slicehub_core::courses::{answer_invitation, apply_roster, create_course, preview_roster, Importer, RowAction};
use slicehub_core::store::{NewUserRow, Role, Store, User};

const PROVIDER: &str = "oidc:campus";

on_both_databases!(
    an_admin_right_given_by_hand_outlives_the_providers_groups,
    the_last_enabled_administrator_is_not_revoked_by_groups,
    a_listed_student_outlives_the_providers_groups,
    an_accepted_invitation_outlives_the_providers_groups,
    identities_of_user_are_only_that_accounts,
);

fn roles() -> GroupRoles {
    GroupRoles {
        admin_groups: vec!["gpu-admins".to_string()],
        courses: GroupRoles::parse_course_groups("CS-101: cs101-staff=instructor, cs101-students=student").unwrap(),
    }
}

fn groups(names: &[&str]) -> Vec<String> {
    names.iter().map(|g| g.to_string()).collect()
}

/// An account a provider made (no password), with the provider's identity.
async fn provider_person(store: &Store, name: &str) -> User {
    let row = NewUserRow {
        username: name,
        display_name: name,
        email: None,
        password_hash: "",
        is_admin: false,
        must_change_password: false,
    };
    store.insert_user_with_identity(&row, PROVIDER, &format!("{name}-sub")).await.unwrap()
}

async fn local_admin(store: &Store, name: &str) -> User {
    let new = NewUser {
        username: name.into(),
        display_name: name.into(),
        password: Some("correct horse battery".into()),
        is_admin: true,
        ..NewUser::default()
    };
    add_user(store, &PasswordHasher::new(1), new, "test").await.unwrap().user
}

async fn is_admin(store: &Store, user: &User) -> bool {
    store.user_by_id(user.id).await.unwrap().unwrap().is_admin
}

async fn signs_in_with(store: &Store, user: &User, with: &[&str]) {
    let user = store.user_by_id(user.id).await.unwrap().unwrap();
    apply_group_roles(store, &user, PROVIDER, &roles(), &groups(with)).await.unwrap();
}

async fn role_in(store: &Store, course: &str, user: &User) -> Option<(Role, Option<String>)> {
    let course = store.course_by_code(course).await.unwrap().unwrap();
    store
        .memberships_with_grants(user.id)
        .await
        .unwrap()
        .into_iter()
        .find(|(c, _, _)| *c == course.id)
        .map(|(_, role, by)| (role, by))
}

/// The groups make Ann an administrator; an administrator then gives her the right by
/// hand (the users page): leaving the group no longer takes it.
async fn an_admin_right_given_by_hand_outlives_the_providers_groups(store: Store) {
    local_admin(&store, "root").await;
    let ann = provider_person(&store, "ann").await;
    signs_in_with(&store, &ann, &["gpu-admins"]).await;
    assert!(is_admin(&store, &ann).await, "the group made her one");
    set_admin(&store, ann.id, true, "root").await.unwrap();
    signs_in_with(&store, &ann, &[]).await;
    assert!(is_admin(&store, &ann).await, "given by hand: the provider's groups do not take it back");
    assert!(!store.set_admin_by_groups(ann.id, PROVIDER, false).await.unwrap(), "nothing of the provider's to revoke");

    // The control: a right only the groups gave goes with the group.
    let bo = provider_person(&store, "bo").await;
    signs_in_with(&store, &bo, &["gpu-admins"]).await;
    signs_in_with(&store, &bo, &[]).await;
    assert!(!is_admin(&store, &bo).await, "given by the group, taken by the group");
    // Given by the group, taken and given again by hand: the hand's right stays.
    signs_in_with(&store, &bo, &["gpu-admins"]).await;
    set_admin(&store, bo.id, false, "root").await.unwrap();
    set_admin(&store, bo.id, true, "root").await.unwrap();
    signs_in_with(&store, &bo, &[]).await;
    assert!(is_admin(&store, &bo).await);
}

/// The only enabled administrator got the right from the groups: leaving the group does
/// not leave the portal without one; once another exists, the right goes.
async fn the_last_enabled_administrator_is_not_revoked_by_groups(store: Store) {
    let ann = provider_person(&store, "ann").await;
    signs_in_with(&store, &ann, &["gpu-admins"]).await;
    assert!(is_admin(&store, &ann).await);
    // A disabled administrator does not count.
    let root = local_admin(&store, "root").await;
    set_disabled(&store, root.id, true, "test").await.unwrap();
    signs_in_with(&store, &ann, &[]).await;
    assert!(is_admin(&store, &ann).await, "the last enabled administrator stays one");
    assert!(store.recent_audit(Some("user.admin.revoke"), 5).await.unwrap().is_empty(), "nothing revoked, nothing audited");

    set_disabled(&store, root.id, false, "test").await.unwrap();
    signs_in_with(&store, &ann, &[]).await;
    assert!(!is_admin(&store, &ann).await, "another administrator exists now: the group's right goes");
    assert!(is_admin(&store, &root).await);
    assert_eq!(store.recent_audit(Some("user.admin.revoke"), 5).await.unwrap()[0].subject, "ann");
}

/// A provider-given student listed in an administrator's roster import: the listing
/// makes the membership hand-made (the import reports it unchanged), so leaving the
/// group no longer drops her. A provider-given instructor listed stays the provider's.
async fn a_listed_student_outlives_the_providers_groups(store: Store) {
    let cs = create_course(&store, "CS-101", "Deep Learning", "admin").await.unwrap();
    let ann = provider_person(&store, "ann").await;
    let tim = provider_person(&store, "tim").await;
    let carl = provider_person(&store, "carl").await;
    signs_in_with(&store, &ann, &["cs101-students"]).await;
    signs_in_with(&store, &tim, &["cs101-staff"]).await;
    signs_in_with(&store, &carl, &["cs101-students"]).await;
    assert_eq!(role_in(&store, "CS-101", &ann).await, Some((Role::Student, Some(PROVIDER.to_string()))));

    let file = b"username,display name\nann,Ann\ntim,Tim\n";
    let preview = preview_roster(&store, cs.id, file, Importer::Administrator).await.unwrap();
    assert!(preview.errors.is_empty(), "{:?}", preview.errors);
    let actions: Vec<RowAction> = preview.rows.iter().map(|r| r.action).collect();
    assert_eq!(actions, [RowAction::Unchanged, RowAction::Unchanged], "both are members already");
    let applied = apply_roster(&store, &PasswordHasher::new(1), cs.id, file, "admin", Importer::Administrator).await.unwrap();
    assert_eq!((applied.created, applied.enrolled, applied.invited, applied.unchanged), (0, 0, 0, 2));
    assert_eq!(role_in(&store, "CS-101", &ann).await, Some((Role::Student, None)), "listed: hand-made now");
    assert_eq!(role_in(&store, "CS-101", &tim).await, Some((Role::Instructor, Some(PROVIDER.to_string()))), "not a student: untouched");

    signs_in_with(&store, &ann, &[]).await;
    signs_in_with(&store, &carl, &[]).await;
    assert_eq!(role_in(&store, "CS-101", &ann).await, Some((Role::Student, None)), "out of the group, still listed");
    assert_eq!(role_in(&store, "CS-101", &carl).await, None, "the control: not listed, dropped with the group");
    assert!(!store.revoke_granted_membership(cs.id, ann.id, PROVIDER).await.unwrap());
    // The group later says staff: a hand-made membership is not changed by it either.
    signs_in_with(&store, &ann, &["cs101-staff"]).await;
    assert_eq!(role_in(&store, "CS-101", &ann).await, Some((Role::Student, None)));
    let again = preview_roster(&store, cs.id, file, Importer::Administrator).await.unwrap();
    assert_eq!(again.count(RowAction::Unchanged), 2, "importing again changes nothing");
}

/// Invited by an instructor's roster, then made a student by the groups before
/// answering: accepting the invitation makes the membership hand-made.
async fn an_accepted_invitation_outlives_the_providers_groups(store: Store) {
    let cs = create_course(&store, "CS-101", "Deep Learning", "admin").await.unwrap();
    let ann = provider_person(&store, "ann").await;
    let applied = apply_roster(&store, &PasswordHasher::new(1), cs.id, b"username,display name\nann,Ann\n", "tina", Importer::Instructor).await.unwrap();
    assert_eq!(applied.invited, 1);
    signs_in_with(&store, &ann, &["cs101-students"]).await;
    assert_eq!(role_in(&store, "CS-101", &ann).await, Some((Role::Student, Some(PROVIDER.to_string()))));
    answer_invitation(&store, "CS-101", ann.id, true, "ann").await.unwrap();
    signs_in_with(&store, &ann, &[]).await;
    assert_eq!(role_in(&store, "CS-101", &ann).await, Some((Role::Student, None)), "she said yes herself");
}

async fn identities_of_user_are_only_that_accounts(store: Store) {
    let ann = provider_person(&store, "ann").await;
    let bo = provider_person(&store, "bo").await;
    store.attach_identity("ldap", "uid=ann,dc=campus", ann.id).await.unwrap();
    let of = |rows: Vec<slicehub_core::store::IdentityRow>| rows.into_iter().map(|i| (i.provider, i.subject)).collect::<Vec<_>>();
    assert_eq!(
        of(store.identities_of_user(ann.id).await.unwrap()),
        [("ldap".to_string(), "uid=ann,dc=campus".to_string()), (PROVIDER.to_string(), "ann-sub".to_string())]
    );
    assert_eq!(of(store.identities_of_user(bo.id).await.unwrap()), [(PROVIDER.to_string(), "bo-sub".to_string())]);
    assert!(store.identities_of_user(slicehub_core::UserId(9_999)).await.unwrap().is_empty());
}
