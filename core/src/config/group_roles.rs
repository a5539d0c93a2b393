//! `admin_groups` and `course_groups` of a sign-in provider: which of a person's groups
//! make them an administrator, and an instructor or student of which course.

use slicehub_types::Role;

/// What a provider's groups give; applied at every sign-in through that provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupRoles {
    /// Empty: the provider never changes who is an administrator.
    pub admin_groups: Vec<String>,
    /// Per course code, each group and the role it gives there.
    pub courses: Vec<CourseGroups>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CourseGroups {
    pub course: String,
    pub groups: Vec<(String, Role)>,
}

impl GroupRoles {
    /// `gpu-admins, it-staff`
    pub fn parse_admin_groups(text: &str) -> Result<Vec<String>, ()> {
        let groups: Vec<String> = text.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_string).collect();
        if groups.iter().any(|g| g.chars().any(char::is_control)) {
            return Err(());
        }
        Ok(groups)
    }

    /// `CS-101: cs101-staff=instructor, cs101-students=student; CS-102: cs102=student`
    pub fn parse_course_groups(text: &str) -> Result<Vec<CourseGroups>, ()> {
        let mut out: Vec<CourseGroups> = Vec::new();
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (course, list) = part.split_once(':').ok_or(())?;
            let course = course.trim();
            if course.is_empty() || out.iter().any(|c| c.course.eq_ignore_ascii_case(course)) {
                return Err(());
            }
            let mut groups = Vec::new();
            for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let (group, role) = item.rsplit_once('=').ok_or(())?;
                let role = Role::parse(role.trim()).ok_or(())?;
                let group = group.trim();
                if group.is_empty() || group.chars().any(char::is_control) {
                    return Err(());
                }
                groups.push((group.to_string(), role));
            }
            if groups.is_empty() {
                return Err(());
            }
            out.push(CourseGroups { course: course.to_string(), groups });
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.admin_groups.is_empty() && self.courses.is_empty()
    }

    /// Whether `groups` (the person's) hold an administrator group.
    pub fn makes_admin(&self, groups: &[String]) -> bool {
        self.admin_groups.iter().any(|g| groups.contains(g))
    }

    /// The role `groups` give in `course`: instructor wins over student; None: no role.
    pub fn role_in(course: &CourseGroups, groups: &[String]) -> Option<Role> {
        let given: Vec<Role> = course.groups.iter().filter(|(g, _)| groups.contains(g)).map(|(_, r)| *r).collect();
        if given.contains(&Role::Instructor) {
            Some(Role::Instructor)
        } else {
            given.first().copied()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn course_groups_parse_with_roles_and_refuse_nonsense() {
        let parsed = GroupRoles::parse_course_groups("CS-101: cs101-staff=instructor, cs101-students=student; CS-102: all=student").unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].groups, [("cs101-staff".to_string(), Role::Instructor), ("cs101-students".to_string(), Role::Student)]);
        for bad in ["CS-101", "CS-101: staff=admin", "CS-101: =student", ": a=student", "CS-101: a=student; cs-101: b=student", "CS-101:"] {
            assert!(GroupRoles::parse_course_groups(bad).is_err(), "{bad}");
        }
        assert!(GroupRoles::parse_course_groups("").unwrap().is_empty());
    }

    #[test]
    fn instructor_wins_and_no_group_gives_no_role() {
        let course = &GroupRoles::parse_course_groups("CS-101: staff=instructor, students=student").unwrap()[0];
        let groups = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(GroupRoles::role_in(course, &groups(&["students", "staff"])), Some(Role::Instructor));
        assert_eq!(GroupRoles::role_in(course, &groups(&["students"])), Some(Role::Student));
        assert_eq!(GroupRoles::role_in(course, &groups(&["Students", "other"])), None, "group names are exact");
    }
}
